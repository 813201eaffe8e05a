"""The pure fold: events in, view state out. Shared by the live cockpit and the replay viewer.

`RunFold.apply(event)` updates a `RunView` in place and returns a `Change` naming what it touched,
so a widget redraws only that. No Textual, no I/O, no clock: folding the same events always gives
the same view, which is what lets replay seek by folding from a checkpoint.

Bulk state is plain slotted objects (not pydantic models): a garbage-collection pass over a long
run's items must stay cheap. The events behind each item are kept only as `seq` numbers.

Joining approvals to tool calls: an engine that gates a tool call uses the call's `call_id` as the
`approval_id`, so the approval and the call fold into one transcript row. An approval with an id
no call uses (`switch_to_editing`, say) gets a row of its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeVar

from .describe import describe, sandbox_warning
from .events import BaseEvent, VerificationCheck

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
    "CheckView",
    "CommandView",
    "DecisionItem",
    "DeferredText",
    "EndItem",
    "GrantView",
    "HistoryItem",
    "Item",
    "MessageItem",
    "NoticeItem",
    "QuestionItem",
    "RunFold",
    "RunView",
    "ToolCallItem",
    "TurnView",
    "fold_events",
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
    """What one event changed: `parts` (flags above) and, with `ITEMS`, the item's index."""

    parts: int
    item: int = -1


NOTHING = Change(0)
_T = TypeVar("_T")  # a view object the fold stamps (rows, approvals, checks, turns)
_EPOCHS = itertools.count(1)  # one per view copy (`next` is atomic: any thread may copy)


def _clone(obj: Any) -> Any:
    """A copy of one of the slotted view objects below, for the fold to change while views
    copied earlier keep the original (see `RunView.copy`). Lists (`seqs`, `parts`) hold only
    immutable values, so a list copy is enough; everything else is immutable or shared on
    purpose (event payload dicts are never changed by the fold)."""
    cls = type(obj)
    new = cls.__new__(cls)
    for name in _slot_names(cls):
        try:
            value = getattr(obj, name)
        except AttributeError:
            continue
        object.__setattr__(new, name, value.copy() if type(value) is list else value)
    return new


_SLOT_NAMES: dict[type, tuple[str, ...]] = {}


def _slot_names(cls: type) -> tuple[str, ...]:
    names = _SLOT_NAMES.get(cls)
    if names is None:
        names = tuple(n for c in cls.__mro__ for n in getattr(c, "__slots__", ()))
        _SLOT_NAMES[cls] = names
    return names


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

    __slots__ = ("epoch", "index", "kind", "seqs", "task", "turn")

    def __init__(self, kind: str, task: int, turn: int | None, seq: int) -> None:
        self.index = -1  # position in `RunView.items`, set when added
        self.epoch = 0  # the view that may change it in place (see `RunView.copy`)
        self.kind = kind
        self.task = task
        self.turn = turn
        self.seqs: list[int] | range = [seq]


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


class ApprovalView:
    """A gated call's approval: pending, then allowed or denied, by whom. `grantable` and
    `ungrantable_reason` are the verdict its `approval_requested` event carried (what `[a]
    always` would do), shown as they are: views never decide it again."""

    __slots__ = ("answer_reason", "answered_ts", "approval_id", "asked_ts", "epoch", "error",
                 "grant_id", "grantable", "prefix", "reason", "remember", "rule", "scope", "state",
                 "tier", "tool", "tool_input", "ungrantable_reason", "via")

    def __init__(self, approval_id: str, tool: str, reason: str, tool_input: dict[str, Any],
                 tier: int, prefix: str, grantable: bool = False,
                 ungrantable_reason: str | None = None) -> None:
        self.epoch = 0
        self.approval_id, self.tool, self.reason = approval_id, tool, reason
        self.tool_input, self.tier, self.prefix = tool_input, tier, prefix
        self.grantable, self.ungrantable_reason = grantable, ungrantable_reason
        self.state = "pending"  # pending | allowed | denied
        self.via: str | None = None  # human | grant | auto | deny-rule | policy
        self.remember = False
        # What decided it, when the journal says: a grant's or deny rule's scope and id, the
        # rule in words (or the policy rule), the policy's error.
        self.scope: str | None = None
        self.grant_id: str | None = None
        self.rule: str | None = None
        self.error: str | None = None
        self.answer_reason: str | None = None  # the human's words with the answer
        self.asked_ts: float | None = None  # when it was asked (None: a grant allowed it)
        self.answered_ts: float | None = None

    @property
    def waited_ms(self) -> float | None:
        """How long the call waited for its answer (None when nobody was asked)."""
        if self.asked_ts is None or self.answered_ts is None:
            return None
        return max(0.0, (self.answered_ts - self.asked_ts) * 1000.0)


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
        self.approval: ApprovalView | None = None
        self.started_ts: float | None = None  # when it began running
        # The unified diff of the change it makes or made, as the engine put it in the events:
        # the input's `diff` (a write asked about or run), else `ToolEnd.diff` (an agent's edit).
        self.diff: str | None = _input_diff(tool_input)
        self.sandbox: str | None = None
        self.sandbox_network: bool | None = None
        self.sandbox_blocked: str | None = None

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


def _input_diff(tool_input: Any) -> str | None:
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
            self.tools = {**self.tools, call_id: len(self.entries)}
            self.entries.append(("tool", line))
        else:
            self.entries[index] = ("tool", line)


class QuestionItem(Item):
    """An agent's question and, once given, its answer: one transcript row.

    `state`: "pending", then "accept", "decline" or "cancel"; `values`: the answer's values by
    field name; `via`: "human" or "auto"; `reason`: why an automatic answer was given. `fields`
    are the question's `QuestionField` models (immutable, shared)."""

    __slots__ = ("call_id", "fields", "message", "question_id", "reason", "state", "values",
                 "via")

    def __init__(self, task: int, turn: int | None, seq: int, question_id: str, message: str,
                 fields: list[Any], call_id: str | None) -> None:
        super().__init__("question", task, turn, seq)
        self.question_id, self.message, self.fields = question_id, message, fields
        self.call_id = call_id
        self.state = "pending"
        self.values: dict[str, Any] | None = None
        self.via: str | None = None
        self.reason: str | None = None


class CommandView(NamedTuple):
    """A command the agent offers: `name` (typed as `/name`), what it does, its input's hint."""

    name: str
    description: str
    hint: str | None


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


class CheckView:
    """One verification check: "pending", "running", "passed" or "failed"."""

    __slots__ = ("added_in", "check_id", "command", "duration_ms", "epoch", "name", "output",
                 "status")

    def __init__(self, check_id: str, name: str, command: str | None, added_in: int) -> None:
        self.epoch = 0
        self.check_id, self.name, self.command = check_id, name, command
        self.status = "pending"
        self.output = ""
        self.duration_ms: float | None = None
        self.added_in = added_in  # plan version that added or changed it (1 = original plan)


class GrantView(NamedTuple):
    """A standing grant in force (or, `deny`, a deny rule), in its scope: `session`, or a saved
    one (`project`, `user`, with its id)."""

    tool: str
    prefix: str
    tier: int
    scope: str = "session"
    grant_id: str | None = None
    deny: bool = False

    @classmethod
    def of(cls, grant: Any) -> GrantView:
        """The view of a session grant (`ApprovalGrant`), a saved grant or deny rule, or a
        grants-screen entry."""
        tier = getattr(grant, "max_tier", None)
        if tier is None:
            tier = getattr(grant, "tier", 0) or 0
        return cls(grant.tool, grant.prefix, tier, getattr(grant, "scope", "session"),
                   getattr(grant, "id", None) or getattr(grant, "key", None),
                   getattr(grant, "kind", "allow") == "deny")


class TurnView:
    """One turn: where it starts in the transcript and how it stopped."""

    __slots__ = ("epoch", "first_item", "stop_reason", "task", "turn")

    def __init__(self, task: int, turn: int, first_item: int) -> None:
        self.epoch = 0
        self.task, self.turn, self.first_item = task, turn, first_item
        self.stop_reason: str | None = None


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
        self.tool_calls: dict[str, ToolCallItem] = {}
        self.pending: dict[str, ToolCallItem] = {}  # approval_id -> its row, oldest first
        self.grants: list[GrantView] = []
        self.checks: dict[str, CheckView] = {}
        self.questions: dict[str, QuestionItem] = {}  # question_id -> its row, oldest first
        self.commands: tuple[CommandView, ...] = ()  # what the agent offers now
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
        self.epoch = 0  # objects stamped with this epoch are this view's own to change

    @property
    def live(self) -> bool:
        """Whether a task is running."""
        return self.status == "running"

    def copy(self) -> RunView:
        """An independent copy (a replay checkpoint), made at C speed: the containers are
        copied, the rows and other objects in them shared. Both views then get a new epoch, so
        neither owns the shared objects any more, and a fold copies one before it changes it
        (copy on write: a checkpoint of a long run costs pointers, not a copy of every row)."""
        new = RunView.__new__(RunView)
        new.__dict__.update(self.__dict__)
        for name in ("items", "turns", "grants", "tool_calls", "pending", "checks", "questions"):
            setattr(new, name, getattr(self, name).copy())
        self.epoch, new.epoch = next(_EPOCHS), next(_EPOCHS)
        return new


class RunFold:
    """Folds events into a `RunView`. `apply` is pure with respect to the view it owns."""

    def __init__(self, grants: Iterable[Any] = (), view: RunView | None = None) -> None:
        self.view = view if view is not None else RunView()
        for grant in grants:  # standing grants from earlier tasks, saved grants in force
            self.view.grants.append(GrantView.of(grant))
        self._handlers: dict[str, Callable[[Any], Change]] = {
            "agent_start": self._agent_start,
            "agent_end": self._agent_end,
            "turn_start": self._turn_start,
            "turn_end": self._turn_end,
            "phase_changed": self._phase_changed,
            "declaration_required": self._declaration_required,
            "model_decision": self._model_decision,
            "model_update": self._model_update,
            "tool_start": self._tool_start,
            "tool_end": self._tool_end,
            "approval_requested": self._approval_requested,
            "approval_resolved": self._approval_resolved,
            "decision_error": self._decision_error,
            "model_usage": self._model_usage,
            "verification_plan_frozen": self._plan_frozen,
            "verification_start": self._verification_start,
            "verification_end": self._verification_end,
            "cancellation_observed": self._cancellation_observed,
            "task_escalated": self._task_escalated,
            "model_retry": self._model_retry,
            "agent_config": self._agent_config,
            "session_info": self._session_info,
            "agent_notice": self._agent_notice,
            "history_message": self._history_message,
            "history_tool": self._history_tool,
        }
        # Questions, commands and notes fold in their own module (which imports this one).
        from .fold_dialogue import dialogue_handlers

        self._handlers.update(dialogue_handlers(self))

    def apply(self, event: BaseEvent) -> Change:
        """Fold one event; returns what changed. Unknown event types change nothing."""
        view = self.view
        view.events += 1
        view.last_ts = event.ts
        handler = self._handlers.get(event.type)
        if handler is None:
            return NOTHING
        return handler(event)

    def set_grants(self, grants: Iterable[Any]) -> Change:
        """The grants in force as the live cockpit knows them now (one was revoked, or another
        cockpit saved one): not an event, the one fact events cannot carry."""
        found = [GrantView.of(grant) for grant in grants]
        if found == self.view.grants:
            return NOTHING
        self.view.grants = found
        return Change(GRANTS)

    def apply_all(self, events: Iterable[BaseEvent]) -> RunView:
        """Fold many events; returns the view."""
        apply = self.apply
        for event in events:
            apply(event)
        return self.view

    # helpers ---------------------------------------------------------------------------------
    def _add(self, item: Item) -> Change:
        # Deltas only ever extend the last item: once another item follows, it is complete.
        self._close_message()
        items = self.view.items
        item.index = len(items)
        items.append(self._new(item))
        return Change(ITEMS, item.index)

    # Copy on write: a view shares objects with the views copied from it (replay checkpoints);
    # the fold changes only objects stamped with its view's epoch, and copies any other first.
    def _new(self, obj: _T) -> _T:
        """`obj`, just made by this fold, stamped as its view's own."""
        obj.epoch = self.view.epoch  # type: ignore[attr-defined]
        return obj

    def _mine(self, obj: _T) -> _T:
        """`obj` if this view owns it, else a copy that it does (the caller puts it in place)."""
        if obj.epoch == self.view.epoch:  # type: ignore[attr-defined]
            return obj
        return self._new(_clone(obj))

    def _own(self, item: Any) -> Any:
        """`item` (a transcript row), made this view's own to change, in every place that
        holds it."""
        new = self._mine(item)
        if new is not item:
            v = self.view
            v.items[item.index] = new
            if type(new) is ToolCallItem:
                key = new.call_id
                if v.tool_calls.get(key) is item:
                    v.tool_calls[key] = new
                if v.pending.get(key) is item:
                    v.pending[key] = new
            elif type(new) is QuestionItem and v.questions.get(new.question_id) is item:
                v.questions[new.question_id] = new
        return new

    def _own_approval(self, row: ToolCallItem) -> ApprovalView:
        """The approval of `row` (a row this view owns), made this view's own to change."""
        assert row.approval is not None
        row.approval = self._mine(row.approval)
        return row.approval

    def _own_check(self, check: CheckView) -> CheckView:
        check = self.view.checks[check.check_id] = self._mine(check)
        return check

    def _notice(self, kind: str, event: BaseEvent, *, parts: int = 0, turn: int | None = None,
                suffix: str = "") -> Change:
        """A notice row for `event`, reading as its one description."""
        view = self.view
        said = describe(event)
        item = NoticeItem(kind, view.task_index, turn if turn is not None else view.turn or None,
                          event.seq, said.line + suffix, said.level)
        change = self._add(item)
        return Change(change.parts | parts, change.item)

    def _close_message(self) -> None:
        items = self.view.items
        if items and items[-1].kind == "message" and not items[-1].complete:  # type: ignore
            self._own(items[-1]).complete = True

    # handlers --------------------------------------------------------------------------------
    def _agent_start(self, e: Any) -> Change:
        v = self.view
        v.task_index += 1
        v.session_id, v.task, v.engine = e.session_id, e.task, e.engine
        v.model, v.cwd = e.model, e.cwd
        agent = e.agent
        v.agent = (" ".join(p for p in (agent.title or agent.name, agent.version) if p) or None
                   if agent is not None else None)
        v.agent_command = e.command
        v.sandbox, v.sandbox_network = e.sandbox, e.sandbox_network
        v.sandbox_note = e.sandbox_note
        if e.new_session or e.resumed:  # another agent session: its own title and settings
            v.title, v.options = None, ()
        v.status, v.result, v.error, v.cancel_reason = "running", None, None, None
        v.phase, v.turn = e.mode, 0  # an agent's mode carries over from the last task
        v.checks, v.plan_version = {}, 0
        v.tool_calls = {}  # call ids are per task: a new task's `call_1` is a new row
        v.started_ts, v.ended_ts = e.ts, None
        change = self._notice("task", e, parts=RUN | VERIFICATION, turn=0)
        warning = sandbox_warning(e)
        if warning:  # wanted, missing: said at the top of the run, where it is seen
            self._add(NoticeItem("sandbox", v.task_index, 0, e.seq, warning, "warning"))
        return change

    def _agent_end(self, e: Any) -> Change:
        v = self.view
        self._close_message()
        v.status, v.result, v.error, v.ended_ts = e.status, e.result, e.error, e.ts
        parts = RUN
        if v.pending:  # nothing can be pending once the run is over
            for row in list(v.pending.values()):
                if row.approval is not None and row.approval.state == "pending":
                    row = self._own(row)
                    self._own_approval(row).state, row.status = "denied", "denied"
            v.pending.clear()
            parts |= APPROVALS
        if v.questions:  # nor can a question be open
            for question in list(v.questions.values()):
                question = self._own(question)
                question.state, question.via = "cancel", "auto"
                question.reason = "the run ended"
            v.questions.clear()
            parts |= QUESTIONS
        error = e.error
        if error is None and e.status == "cancelled" and v.cancel_reason:
            error = v.cancel_reason  # why it was cancelled, when the end itself does not say
            e = e.model_copy(update={"error": error})
        said = describe(e)
        change = self._add(EndItem(v.task_index, v.turn or None, e.seq, said.line, said.level,
                                   e.status, e.result, error, e.stderr))
        return Change(change.parts | parts, change.item)

    def _turn_start(self, e: Any) -> Change:
        v = self.view
        self._close_message()
        v.turn = e.turn
        v.turns.append(self._new(TurnView(v.task_index, e.turn, len(v.items))))
        return Change(RUN)

    def _turn_end(self, e: Any) -> Change:
        v = self.view
        self._close_message()
        if v.turns and v.turns[-1].turn == e.turn:
            turn = v.turns[-1] = self._mine(v.turns[-1])
            turn.stop_reason = e.stop_reason
        return Change(RUN)

    def _phase_changed(self, e: Any) -> Change:
        self.view.phase = e.phase
        return self._notice("phase", e, parts=RUN)

    def _declaration_required(self, e: Any) -> Change:
        return self._notice("declaration", e, turn=e.turn)

    def _model_decision(self, e: Any) -> Change:
        v = self.view
        self._close_message()
        return self._add(DecisionItem(v.task_index, e.turn, e.seq, e.action, e.tool, e.tool_input,
                                      e.rationale))

    def _model_update(self, e: Any) -> Change:
        return self._stream(e.turn, e.channel, e.seq, e.seq + 1, e.text)

    def apply_stream(self, first: Any, last: Any, count: int, text: str | DeferredText) -> Change:
        """Fold `count` consecutive `model_update` events in one step, the same as applying each:
        `first` and `last` are the outer two; all share a turn and a channel, their seqs run
        from `first.seq` to `last.seq`, and their texts joined are `text` (replay folds long
        streams this way, leaving the text in the journal until it is drawn)."""
        view = self.view
        view.events += count
        view.last_ts = last.ts
        return self._stream(first.turn, first.channel, first.seq, last.seq + 1, text)

    def _stream(self, turn: int | None, channel: str, seq: int, stop: int,
                text: str | DeferredText) -> Change:
        """Streamed text with seqs `[seq, stop)`: extends the open message, or starts one."""
        v = self.view
        items = v.items
        if items:
            last = items[-1]
            if (last.kind == "message" and last.channel == channel  # type: ignore[attr-defined]
                    and last.turn == turn and not last.complete):  # type: ignore[attr-defined]
                if last.epoch != v.epoch:  # (checked here too: the live hot path skips a call)
                    last = self._own(last)
                last.parts.append(text)  # type: ignore[attr-defined]
                last._text = None  # type: ignore[attr-defined]
                seqs = last.seqs
                if stop == seq + 1 and type(seqs) is list:
                    seqs.append(seq)
                else:
                    last.seqs = _join_seqs(seqs, seq, stop)
                return Change(ITEMS, len(items) - 1)
        item = MessageItem(v.task_index, turn, seq, channel)
        if stop != seq + 1:
            item.seqs = range(seq, stop)  # type: ignore[assignment]
        item.parts.append(text)
        item._text = None
        return self._add(item)

    def _tool_start(self, e: Any) -> Change:
        v = self.view
        self._close_message()
        row = v.tool_calls.get(e.call_id)
        if row is None:
            row = ToolCallItem(v.task_index, v.turn or None, e.seq, e.call_id, e.tool,
                               e.tool_input, e.tier)
            v.tool_calls[e.call_id] = row
            change = self._add(row)
        else:  # its approval came first: the same row now runs
            row = self._own(row)
            row.seqs.append(e.seq)
            row.tool_input, row.tier = e.tool_input or row.tool_input, e.tier
            change = Change(ITEMS, row.index)
        row.title = e.title
        row.permitted_by = e.permitted_by
        row.sandbox, row.sandbox_network = e.sandbox, e.sandbox_network
        row.status = "running"
        row.started_ts = e.ts
        row.diff = _input_diff(e.tool_input) or row.diff
        return change

    def _tool_end(self, e: Any) -> Change:
        v = self.view
        row = v.tool_calls.get(e.call_id)
        if row is None:  # an end without a start (a torn or filtered journal): still show it
            row = ToolCallItem(v.task_index, v.turn or None, e.seq, e.call_id, e.tool, {}, 0)
            v.tool_calls[e.call_id] = row
            change = self._add(row)
        else:
            row = self._own(row)
            row.seqs.append(e.seq)
            change = Change(ITEMS, row.index)
        row.status = "ok" if e.ok else "failed"
        row.output, row.error, row.duration_ms = e.output, e.error, e.duration_ms
        row.exit_code = e.exit_code
        if e.title:  # the agent renamed the call while it ran
            row.title = e.title
        row.sandbox = e.sandbox or row.sandbox
        row.sandbox_blocked = e.sandbox_blocked
        if e.diff:
            row.diff = e.diff
        return change

    def _approval_requested(self, e: Any) -> Change:
        v = self.view
        self._close_message()
        approval = ApprovalView(e.approval_id, e.tool, e.reason, e.tool_input, e.tier, e.prefix,
                                *e.grant_verdict)
        row = v.tool_calls.get(e.approval_id)
        if row is None:
            row = ToolCallItem(v.task_index, v.turn or None, e.seq, e.approval_id, e.tool,
                               e.tool_input, e.tier)
            v.tool_calls[e.approval_id] = row
            change = self._add(row)
        else:
            row = self._own(row)
            row.seqs.append(e.seq)
            change = Change(ITEMS, row.index)
        approval.asked_ts = e.ts
        row.approval = self._new(approval)
        row.diff = row.diff or _input_diff(e.tool_input)
        row.status = "awaiting"
        v.pending[e.approval_id] = row
        return Change(change.parts | APPROVALS, change.item)

    def _approval_resolved(self, e: Any) -> Change:
        v = self.view
        row = v.tool_calls.get(e.approval_id)
        parts = 0
        if row is None:  # decided without asking: no request came first
            row = ToolCallItem(v.task_index, v.turn or None, e.seq, e.approval_id, e.tool,
                               e.tool_input or {}, e.tier or 0)
            v.tool_calls[e.approval_id] = row
            change = self._add(row)
        else:
            row = self._own(row)
            row.seqs.append(e.seq)
            change = Change(ITEMS, row.index)
        if row.approval is None:
            row.approval = self._new(ApprovalView(e.approval_id, e.tool, "", row.tool_input,
                                                  row.tier, ""))
        approval = self._own_approval(row)
        approval.state = "allowed" if e.allowed else "denied"
        approval.via, approval.remember = e.via, e.remember
        approval.scope, approval.grant_id = e.scope, e.grant_id
        approval.rule, approval.error = e.rule, e.error
        approval.answer_reason = e.reason
        approval.answered_ts = e.ts
        if row.status in ("awaiting", "running"):
            row.status = "allowed" if e.allowed else "denied"
        if v.pending.pop(e.approval_id, None) is not None:
            parts |= APPROVALS
        if e.allowed and e.remember and approval.prefix:
            grant = GrantView(approval.tool, approval.prefix, approval.tier,
                              e.scope or "session", e.grant_id)
            if grant not in v.grants:
                v.grants.append(grant)
                parts |= GRANTS
        return Change(change.parts | parts, change.item)

    def _decision_error(self, e: Any) -> Change:
        return self._notice("decision_error", e, turn=e.turn)

    def _model_usage(self, e: Any) -> Change:
        v = self.view
        v.input_tokens += e.input_tokens
        v.output_tokens += e.output_tokens
        v.model_calls += 1
        if e.cost_usd is not None:
            v.cost_usd = (v.cost_usd or 0.0) + e.cost_usd
        v.cached_tokens += e.cached_read_tokens or 0
        v.thought_tokens += e.thought_tokens or 0
        if e.context_size:  # a level, not a delta: the latest wins
            v.context = (e.context_used or 0, e.context_size)
        if e.model and not v.model:
            v.model = e.model
            return Change(USAGE | RUN)
        return Change(USAGE)

    def _plan_frozen(self, e: Any) -> Change:
        v = self.view
        v.plan_version += 1
        old = v.checks
        checks: dict[str, CheckView] = {}
        for check in e.checks:
            check = check if isinstance(check, VerificationCheck) else VerificationCheck(**check)
            before = old.get(check.id)
            if before is not None and before.name == check.name and before.command == check.command:
                checks[check.id] = before
            else:
                checks[check.id] = self._new(CheckView(check.id, check.name, check.command,
                                                       v.plan_version))
        v.checks = checks
        if v.plan_version == 1:
            return self._notice("plan", e, parts=VERIFICATION)
        change = self._notice("plan", e, parts=VERIFICATION, suffix=" (changed)")
        self.view.items[change.item].level = "warning"  # type: ignore[attr-defined]
        return change

    def _verification_start(self, e: Any) -> Change:
        check = self._own_check(self._check(e))
        check.status = "running"
        return Change(VERIFICATION)

    def _verification_end(self, e: Any) -> Change:
        check = self._own_check(self._check(e))
        check.status = "passed" if e.passed else "failed"
        check.output, check.duration_ms = e.output, e.duration_ms
        return Change(VERIFICATION)

    def _check(self, e: Any) -> CheckView:
        v = self.view
        check = v.checks.get(e.check_id)
        if check is None:  # a check outside the frozen plan: show it rather than drop it
            check = v.checks[e.check_id] = self._new(CheckView(e.check_id, e.name, None,
                                                               v.plan_version))
        return check

    def _cancellation_observed(self, e: Any) -> Change:
        self.view.cancel_reason = e.reason
        return self._notice("cancel", e, parts=RUN, turn=e.turn)

    def _task_escalated(self, e: Any) -> Change:
        return self._notice("escalation", e)

    def _model_retry(self, e: Any) -> Change:
        return self._notice("retry", e, turn=e.turn)

    # an external agent's session ---------------------------------------------------------------
    def _agent_config(self, e: Any) -> Change:
        v = self.view
        v.options = tuple(e.options)
        model = next((o for o in v.options if o.category == "model" or o.id == "model"), None)
        if model is not None and isinstance(model.value, str):
            v.model = model.value
        return Change(RUN)

    def _session_info(self, e: Any) -> Change:
        self.view.title = e.title  # the session's info as it stands (None: no title now)
        return Change(RUN)

    def _agent_notice(self, e: Any) -> Change:
        return self._notice("agent_notice", e)

    def _history(self, e: Any) -> tuple[HistoryItem, Change]:
        """The open history item (the last item, when it is one), or a new one."""
        items = self.view.items
        if items and type(items[-1]) is HistoryItem:
            item = self._own(items[-1])
            item.seqs.append(e.seq)
            return item, Change(ITEMS, item.index)
        item = HistoryItem(self.view.task_index, e.seq)
        return item, self._add(item)

    def _history_message(self, e: Any) -> Change:
        item, change = self._history(e)
        item.add_text(e.role, e.text)
        return change

    def _history_tool(self, e: Any) -> Change:
        item, change = self._history(e)
        status = f" ({e.status})" if e.status else ""
        item.set_tool(e.call_id, f"{e.title or e.tool}{status}")
        return change


def _join_seqs(seqs: list[int] | range, seq: int, stop: int) -> list[int] | range:
    """`seqs` followed by `[seq, stop)`, kept a `range` while they run on without a gap."""
    if seqs and seqs[-1] == seq - 1 and (type(seqs) is range or len(seqs) == 1):
        return range(seqs[0], stop)
    joined = list(seqs)
    joined.extend(range(seq, stop))
    return joined


def fold_events(events: Iterable[BaseEvent], grants: Iterable[Any] = ()) -> RunView:
    """Fold a whole sequence of events into a fresh view."""
    return RunFold(grants).apply_all(events)
