"""The view state the fold builds: `RunView`, its transcript rows, and the flags of what changed.

Bulk state is plain slotted objects (not pydantic models): a garbage-collection pass over a long
run's rows must stay cheap. The events behind each row are kept only as `seq` numbers.

Ownership, for cheap copies (replay checkpoints): the transcript rows are the only objects that
change once made, and each has one owner, `RunView.items[i]`. Everything else that refers to a
row (`tool_calls`, `pending`) holds its position, and every other object in a view (approvals,
checks, turns, grants) is an immutable tuple, replaced rather than changed. So `RunView.copy()`
copies the containers and shares the rows, and the fold, before it changes a row that a copy
may share, puts a copy of the row in its place (`RunView.own_row`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

from engine_adapter.view_records import ApprovalView, CheckView, GrantView, TurnView

__all__ = [
    "APPROVALS",
    "COMMANDS",
    "GRANTS",
    "ITEMS",
    "QUESTIONS",
    "RUN",
    "USAGE",
    "VERIFICATION",
    "ApprovalView",
    "Change",
    "ChangeSet",
    "CheckView",
    "DecisionItem",
    "DeferredText",
    "EndItem",
    "GrantView",
    "Item",
    "MessageItem",
    "NoticeItem",
    "RowMap",
    "RunView",
    "ToolCallItem",
    "TurnView",
    "input_diff",
]

# What a change touched (bit flags; combine with |).
RUN = 1  # status line: task, status, phase, turn, result, error
ITEMS = 2  # the transcript: `Change.item` is the index of the item touched or added
APPROVALS = 4  # pending approvals
VERIFICATION = 8  # the verification plan or a check
GRANTS = 16  # grants in force
USAGE = 32  # token and cost totals
QUESTIONS = 64  # the agent's open questions
COMMANDS = 128  # the commands the agent offers


class Change(NamedTuple):
    """What one event changed: `parts` (flags above) and, with `ITEMS`, the item's index;
    `more` names other items it changed too (rarely: the end of a run denies every pending
    approval's row)."""

    parts: int
    item: int = -1
    more: tuple[int, ...] = ()


class ChangeSet:
    """Everything that changed since the last frame: flags and the transcript items touched."""

    __slots__ = ("items", "parts")

    def __init__(self) -> None:
        self.parts = 0
        self.items: set[int] = set()

    def add(self, parts: int, item: int, more: tuple[int, ...] = ()) -> None:
        """Record one `Change` (`add(*change)`)."""
        self.parts |= parts
        if parts & ITEMS and item >= 0:
            self.items.add(item)
        if more:
            self.items.update(more)

    def update(self, other: ChangeSet) -> None:
        """Add everything `other` records (two frames' changes drawn as one)."""
        self.parts |= other.parts
        self.items |= other.items

    def __bool__(self) -> bool:
        return bool(self.parts)


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
                self._text = "".join(parts)  # type: ignore[arg-type]
            except TypeError:  # deferred parts: read them now
                self._text = "".join(map(str, parts))
            self.parts = [self._text]
        return self._text

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
            if type(part) is str:
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
    `engine_adapter.sandbox`), `sandbox_blocked` what the sandbox stopped.
    """

    __slots__ = ("approval", "call_id", "diff", "duration_ms", "error", "exit_code", "output",
                 "permitted_by", "sandbox", "sandbox_blocked", "sandbox_network", "started_ts",
                 "status", "tier", "title", "tool", "tool_input")

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
        self.approval: ApprovalView | None = None
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


_Row = TypeVar("_Row", bound=Item)


class RowMap(Mapping[str, _Row], Generic[_Row]):
    """Ids (of calls, approvals, questions) to their transcript rows, read through the rows'
    positions."""

    __slots__ = ("_items", "_positions")

    def __init__(self, items: list[Item], positions: dict[str, int]) -> None:
        self._items, self._positions = items, positions

    def __getitem__(self, key: str) -> _Row:
        return self._items[self._positions[key]]  # type: ignore[return-value]

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)

    def __contains__(self, key: object) -> bool:
        return key in self._positions


class RunView:
    """Everything the cockpit shows, as of the last folded event."""

    def __init__(self) -> None:
        self.session_id = ""
        self.task_index = 0  # how many tasks (agent_start events) so far
        self.task = ""
        self.engine = ""
        self.model: str | None = None
        self.cwd: str | None = None
        self.agent: str | None = None  # an external agent's own name and version
        self.agent_command: str | None = None  # the command line that started it
        self.title: str | None = None  # the agent's name for its session, when it gave one
        self.options: tuple[Any, ...] = ()  # the agent's settings (`AgentOption`s)
        self.sandbox: str | None = None  # where the run's commands go, and why there is none
        self.sandbox_network: bool | None = None
        self.sandbox_note: str | None = None
        self.status = "idle"  # idle | running | completed | failed | cancelled
        self.result: str | None = None
        self.error: str | None = None
        self.phase: str | None = None
        self.turn = 0
        self.turns: list[TurnView] = []
        self.items: list[Item] = []
        self.call_rows: dict[str, int] = {}  # call id -> its row's position (this task's)
        self.pending_rows: dict[str, int] = {}  # approval id -> its row's position, oldest first
        self.grants: list[GrantView] = []
        self.checks: dict[str, CheckView] = {}
        self.question_rows: dict[str, int] = {}  # open question id -> its row's position
        self.commands: tuple[Any, ...] = ()  # what the agent offers now (`CommandView`s)
        self.plan_version = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd: float | None = None
        self.cached_tokens = 0  # input tokens read from a prompt cache (of `input_tokens`)
        self.thought_tokens = 0
        self.context: tuple[int, int] | None = None  # (used, size) of the context window
        self.model_calls = 0
        self.started_ts: float | None = None
        self.ended_ts: float | None = None
        self.last_ts: float | None = None
        self.events = 0
        self.cancel_reason: str | None = None
        self.shared = 0  # rows below this position may be shared with a copy of this view
        self.owned: set[int] = set()  # ... except these, already copied for this view

    @property
    def live(self) -> bool:
        """Whether a task is running."""
        return self.status == "running"

    @property
    def tool_calls(self) -> RowMap[ToolCallItem]:
        """This task's tool calls by call id (their rows)."""
        return RowMap(self.items, self.call_rows)

    @property
    def pending(self) -> RowMap[ToolCallItem]:
        """Approvals waiting for a decision by approval id (their rows), oldest first."""
        return RowMap(self.items, self.pending_rows)

    @property
    def questions(self) -> RowMap[Any]:
        """The agent's open questions by question id (their `QuestionItem` rows), oldest
        first."""
        return RowMap(self.items, self.question_rows)

    def own_row(self, index: int) -> Item:
        """The row at `index`, this view's own to change: a row a copy may share is replaced
        by a copy of it first (once)."""
        row = self.items[index]
        if index < self.shared and index not in self.owned:
            row = self.items[index] = row.clone()
            self.owned.add(index)
        return row

    def copy(self) -> RunView:
        """An independent copy (a replay checkpoint), made at C speed: the containers are
        copied, the rows shared until either view changes one (see `own_row`)."""
        new = RunView.__new__(RunView)
        new.__dict__.update(self.__dict__)
        for name in ("items", "turns", "grants", "call_rows", "pending_rows", "checks",
                     "question_rows"):
            setattr(new, name, getattr(self, name).copy())
        self.shared = new.shared = len(self.items)
        self.owned, new.owned = set(), set()
        return new
