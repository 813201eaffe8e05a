"""The transcript's rows, as the fold builds them: one `Item` subclass a kind of row.

A model's streamed text (`MessageItem`), a decision (`DecisionItem`), a tool call with its
approval, run and result (`ToolCallItem`), a one-line happening (`NoticeItem`, `EndItem`), an
agent's question and its answer (`QuestionItem`) and the conversation it replayed when opened
again (`HistoryItem`).

Rows are plain slotted objects (a garbage-collection pass over a long run's rows stays cheap),
and each has one owner, `RunView.items[i]`: the fold changes a row only through
`RunView.own_row`, so lists hold immutable values and a dict is replaced, not changed.
"""

from __future__ import annotations

from typing import Any

from engine_adapter.view.records import ApprovalView

__all__ = [
    "DecisionItem",
    "DeferredText",
    "EndItem",
    "HistoryItem",
    "Item",
    "MessageItem",
    "NoticeItem",
    "QuestionItem",
    "ToolCallItem",
    "input_diff",
]


class DeferredText:
    """Text that is not read yet: `str(x)` reads it. `chars` and `newlines` are estimates for
    layout. Subclasses say where the text is (replay: a run of journal lines)."""

    __slots__ = ("chars", "newlines")

    def __init__(self, chars: int, newlines: int) -> None:
        self.chars, self.newlines = chars, newlines

    def __str__(self) -> str:
        raise NotImplementedError


class Item:
    """One row of the transcript. `seqs` are the events behind it (for the raw-event view)."""

    __slots__ = ("index", "kind", "seqs", "task", "turn")

    def __init__(self, kind: str, task: int, turn: int | None, seq: int) -> None:
        self.index = -1  # position in `RunView.items`, set when added
        self.kind = kind
        self.task = task
        self.turn = turn
        self.seqs: list[int] | range = [seq]

    def add_seq(self, seq: int) -> None:
        """Another event behind this row (a streamed message's `seqs` may be a `range`)."""
        seqs = self.seqs
        if isinstance(seqs, list):
            seqs.append(seq)
        else:
            self.seqs = [*seqs, seq]

    def clone(self) -> Item:
        """A copy to change while the original stays as it is. Lists (`seqs`, `parts`) hold
        only immutable values, so a list copy is enough; every other value is immutable."""
        cls = type(self)
        new = cls.__new__(cls)
        for name in _slot_names(cls):
            try:
                value = getattr(self, name)
            except AttributeError:
                continue
            object.__setattr__(new, name, value.copy() if type(value) is list else value)
        return new


_SLOT_NAMES: dict[type, tuple[str, ...]] = {}


def _slot_names(cls: type) -> tuple[str, ...]:
    names = _SLOT_NAMES.get(cls)
    if names is None:
        names = _SLOT_NAMES[cls] = tuple(n for c in cls.__mro__
                                         for n in getattr(c, "__slots__", ()))
    return names


class MessageItem(Item):
    """Streamed model text on one channel ("message" or "thought"), in one turn.

    `parts` are the deltas: strings, or (in replay) `DeferredText` standing for a run of deltas
    still in the journal, read only when the text is wanted. `seqs` may be a `range`."""

    __slots__ = ("_text", "channel", "complete", "parts")

    def __init__(self, task: int, turn: int | None, seq: int, channel: str) -> None:
        super().__init__("message", task, turn, seq)
        self.channel = channel
        self.parts: list[str | DeferredText] = []
        self.complete = False
        self._text: str | None = ""

    @property
    def text(self) -> str:
        """The whole text so far (joined lazily: appending a delta is O(1))."""
        if self._text is None:
            parts = self.parts
            try:
                self._text = "".join(parts)  # type: ignore[arg-type]  # a DeferredText raises
            except TypeError:  # deferred parts: read them now
                self._text = "".join(map(str, parts))
            self.parts = [self._text]
        return self._text

    def extend(self, text: str | DeferredText, seq: int = -1, stop: int = -1) -> None:
        """Append a delta: `text`, streamed by the events with seqs `[seq, stop)` (none: the
        ones the item was made with)."""
        self.parts.append(text)
        self._text = None
        if seq < 0:
            return
        seqs = self.seqs
        if stop == seq + 1 and type(seqs) is list:
            seqs.append(seq)
        else:
            self.seqs = _join_seqs(seqs, seq, stop)

    def prepend(self, text: str) -> None:
        """Put `text` before the text so far (replay's mark of a message cut at its start)."""
        self.parts.insert(0, text)
        self._text = None

    def compact(self) -> None:
        """Join the deltas into one string, unless some are deferred (those stay unread)."""
        if self._text is None and all(type(p) is str for p in self.parts):
            self.text  # noqa: B018 - the property joins

    def size_hint(self) -> tuple[int, int]:
        """About how many characters and newlines the text has, without reading deferred
        parts (for guessing a row's height before it is drawn)."""
        if self._text is not None:
            return len(self._text), self._text.count("\n", 0, 20_000)
        chars = newlines = 0
        for part in self.parts:
            if isinstance(part, str):
                chars += len(part)
                newlines += part.count("\n")
            else:
                chars += part.chars
                newlines += part.newlines
        return chars, newlines


class DecisionItem(Item):
    """What the model decided to do."""

    __slots__ = ("action", "rationale", "tool", "tool_input")

    def __init__(self, task: int, turn: int | None, seq: int, action: str, tool: str | None,
                 tool_input: dict[str, Any] | None, rationale: str | None) -> None:
        super().__init__("decision", task, turn, seq)
        self.action, self.tool, self.rationale = action, tool, rationale
        self.tool_input = tool_input


class ToolCallItem(Item):
    """A tool call and everything about it: approval, run, result.

    `status`: "awaiting" (approval pending), "denied", "allowed" (approved, not started),
    "running", "ok", "failed". `sandbox`: the state its command ran in (see
    `engine_adapter.sandbox`), `sandbox_blocked` what the sandbox stopped; `agent_sandbox`:
    where the external agent that made the call runs.
    """

    __slots__ = ("agent_sandbox", "approval", "approved_input", "call_id", "diff", "duration_ms",
                 "error", "exit_code", "output", "permitted_by", "sandbox", "sandbox_blocked",
                 "sandbox_network", "started_ts", "status", "tier", "title", "tool", "tool_input")

    def __init__(self, task: int, turn: int | None, seq: int, call_id: str, tool: str,
                 tool_input: dict[str, Any], tier: int) -> None:
        super().__init__("tool", task, turn, seq)
        self.call_id, self.tool, self.tool_input, self.tier = call_id, tool, tool_input, tier
        self.title: str | None = None
        self.status = "running"
        self.output = ""
        self.error: str | None = None
        self.duration_ms: float | None = None
        self.exit_code: int | None = None  # a command's, when the engine reports it
        self.permitted_by: str | None = None  # what let it run unasked (an agent's permission)
        self.sandbox: str | None = None
        self.sandbox_network: bool | None = None
        self.sandbox_blocked: str | None = None
        self.agent_sandbox: str | None = None
        self.approval: ApprovalView | None = None
        # The input an approval was given for, when the engine reported a different one after
        # it (`ToolStart.approved_input`): the row then says the input changed.
        self.approved_input: dict[str, Any] | None = None
        self.started_ts: float | None = None  # when it began running
        # The unified diff of the change it makes or made, as the engine put it in the events:
        # the input's `diff` (a write asked about or run), else `ToolEnd.diff` (an agent's edit).
        self.diff: str | None = input_diff(tool_input)

    @property
    def work_ms(self) -> float | None:
        """How long the call ran, the wait for an approval asked while it ran left out."""
        duration, approval = self.duration_ms, self.approval
        if duration is None or approval is None or self.started_ts is None:
            return duration
        waited = approval.waited_ms
        if waited is None or approval.asked_ts is None or approval.asked_ts < self.started_ts:
            return duration  # asked before it started: the run's clock never saw the wait
        return max(0.0, duration - waited)


def input_diff(tool_input: Any) -> str | None:
    """The unified diff a tool input carries (its `diff` key), if any."""
    diff = tool_input.get("diff") if isinstance(tool_input, dict) else None
    return diff if isinstance(diff, str) and diff else None


class NoticeItem(Item):
    """A one-line happening: task start and end, phase change, escalation, plan, errors.

    `level` is "info", "warning" or "error".
    """

    __slots__ = ("level", "text")

    def __init__(self, kind: str, task: int, turn: int | None, seq: int, text: str,
                 level: str = "info") -> None:
        super().__init__(kind, task, turn, seq)
        self.text, self.level = text, level


class EndItem(NoticeItem):
    """How a task ended: `text` is its one line (error first); the fields are `agent_end`'s,
    for the views that show the rest (the stderr tail, the reply once)."""

    __slots__ = ("error", "result", "status", "stderr")

    def __init__(self, task: int, turn: int | None, seq: int, text: str, level: str,
                 status: str, result: str | None, error: str | None,
                 stderr: list[str] | None) -> None:
        super().__init__("end", task, turn, seq, text, level)
        self.status, self.result, self.error = status, result, error
        self.stderr = stderr


class HistoryItem(Item):
    """An earlier part of the conversation, as the agent replayed it when it was opened again
    (`history_*` events): shown apart, as history, never as activity of this task.

    `entries` are `(role, text)` in order: role "user", "agent", "thought", or "tool" (text:
    the call's title and status); `tools` maps a replayed call's id to its entry."""

    __slots__ = ("entries", "messages", "tools")

    def __init__(self, task: int, seq: int) -> None:
        super().__init__("history", task, None, seq)
        self.entries: list[tuple[str, str]] = []
        self.tools: dict[str, int] = {}
        self.messages = 0

    @property
    def text(self) -> str:
        """The replayed conversation as plain text, one entry a paragraph."""
        labels = {"user": "you", "agent": "agent", "thought": "agent (thinking)",
                  "tool": "tool"}
        return "\n".join(f"{labels.get(role, role)}: {text}" for role, text in self.entries)

    def add_text(self, role: str, text: str) -> None:
        """A delta of a replayed message: continues the last entry if it has the same role."""
        entries = self.entries
        if entries and entries[-1][0] == role:
            entries[-1] = (role, entries[-1][1] + text)
        else:
            entries.append((role, text))
            self.messages += 1

    def set_tool(self, call_id: str, line: str) -> None:
        """A replayed tool call's line, added or brought up to date."""
        index = self.tools.get(call_id)
        if index is None:
            self.tools = {**self.tools, call_id: len(self.entries)}  # (replaced: a copy shares it)
            self.entries.append(("tool", line))
        else:
            self.entries[index] = ("tool", line)


class QuestionItem(Item):
    """An agent's question and, once given, its answer: one transcript row.

    `state`: "pending", then "accept", "decline" or "cancel"; `values`: the answer's values by
    field name; `via`: "human" or "auto"; `reason`: why an automatic answer was given. `fields`
    are the question's `QuestionField` models (immutable, shared); `url`: the link it asks the
    human to open (untrusted, as the agent sent it), or None."""

    __slots__ = ("call_id", "fields", "message", "question_id", "reason", "state", "url",
                 "values", "via")

    def __init__(self, task: int, turn: int | None, seq: int, question_id: str, message: str,
                 fields: list[Any], call_id: str | None, url: str | None = None) -> None:
        super().__init__("question", task, turn, seq)
        self.question_id, self.message, self.fields = question_id, message, fields
        self.call_id, self.url = call_id, url
        self.state = "pending"
        self.values: dict[str, Any] | None = None
        self.via: str | None = None
        self.reason: str | None = None


def _join_seqs(seqs: list[int] | range, seq: int, stop: int) -> list[int] | range:
    """`seqs` followed by `[seq, stop)`, kept a `range` while they run on without a gap."""
    if seqs and seqs[-1] == seq - 1 and (type(seqs) is range or len(seqs) == 1):
        return range(seqs[0], stop)
    joined = list(seqs)
    joined.extend(range(seq, stop))
    return joined
