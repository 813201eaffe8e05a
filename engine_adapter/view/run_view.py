"""The view state the fold builds: `RunView`, and the flags of what a change touched.

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
from typing import Generic, NamedTuple, TypeVar

from engine_adapter.events import DEFAULT_MODE, AgentOption
from engine_adapter.view.items import Item, QuestionItem, ToolCallItem
from engine_adapter.view.records import CheckView, CommandView, GrantView, PlanRow, TurnView

__all__ = [
    "APPROVALS",
    "COMMANDS",
    "GRANTS",
    "ITEMS",
    "PLAN",
    "QUESTIONS",
    "RUN",
    "USAGE",
    "VERIFICATION",
    "Change",
    "ChangeSet",
    "RowMap",
    "RunView",
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
PLAN = 256  # the agent's plan


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


_Row = TypeVar("_Row", bound=Item)


class RowMap(Mapping[str, _Row], Generic[_Row]):
    """Ids (of calls, approvals, questions) to their transcript rows, read through the rows'
    positions (each of a row of `kind`)."""

    __slots__ = ("_items", "_kind", "_positions")

    def __init__(self, items: list[Item], positions: dict[str, int], kind: type[_Row]) -> None:
        self._items, self._positions, self._kind = items, positions, kind

    def __getitem__(self, key: str) -> _Row:
        row = self._items[self._positions[key]]
        if not isinstance(row, self._kind):  # the fold keeps each map to rows of one kind
            raise TypeError(f"{key!r} is a {type(row).__name__}, not a {self._kind.__name__}")
        return row

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
        # The run started and its external agent has not answered yet (`agent_start` said
        # `ready=False`, no `agent_ready` so far).
        self.starting = False
        self.title: str | None = None  # the agent's name for its session, when it gave one
        self.options: tuple[AgentOption, ...] = ()  # the agent's settings
        self.sandbox: str | None = None  # where the run's commands go, and why there is none
        self.sandbox_network: bool | None = None
        self.sandbox_note: str | None = None
        self.agent_sandbox: str | None = None  # where an external agent's process runs
        self.status = "idle"  # idle | running | completed | failed | cancelled
        self.result: str | None = None
        self.error: str | None = None
        self.phase: str | None = None
        # the cockpit's permission mode (`mode_changed`; a run that never changed it ran in
        # the default) and what it means here when that differs from its name
        self.mode: str = DEFAULT_MODE
        self.mode_note: str | None = None
        self.turn = 0
        self.turns: list[TurnView] = []
        self.items: list[Item] = []
        self.call_rows: dict[str, int] = {}  # call id -> its row's position (this task's)
        self.pending_rows: dict[str, int] = {}  # approval id -> its row's position, oldest first
        self.grants: list[GrantView] = []
        self.checks: dict[str, CheckView] = {}
        self.question_rows: dict[str, int] = {}  # open question id -> its row's position
        self.commands: tuple[CommandView, ...] = ()  # what the agent offers now
        self.plan_version = 0
        # The agent's plan as it last sent it (this task's): entries (content, status,
        # priority) and how many more it had than are kept.
        self.plan: tuple[PlanRow, ...] = ()
        self.plan_dropped = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd: float | None = None
        # Costs an agent reported in another currency than USD, by its code (at most four).
        self.other_costs: dict[str, float] = {}
        self.cached_tokens = 0  # input tokens read from a prompt cache (of `input_tokens`)
        self.thought_tokens = 0
        self.context: tuple[int, int] | None = None  # (used, size) of the context window
        self.model_calls = 0
        self.started_ts: float | None = None
        self.ended_ts: float | None = None
        self.last_ts: float | None = None
        self.events = 0
        self.cancel_reason: str | None = None
        # the workspace checkpoints so far, (turn, id) in order (turn None: a run's end): what
        # a rewind key offers
        self.checkpoints: tuple[tuple[int | None, str], ...] = ()
        self.shared = 0  # rows below this position may be shared with a copy of this view
        self.owned: set[int] = set()  # ... except these, already copied for this view

    @property
    def tokens_reported(self) -> bool:
        """Whether any model call reported its token counts (else the 0s read "unknown", not
        0): an agent's session report (`scope="session"`) is no call and carries none."""
        return self.model_calls > 0

    @property
    def live(self) -> bool:
        """Whether a task is running."""
        return self.status == "running"

    @property
    def tool_calls(self) -> RowMap[ToolCallItem]:
        """This task's tool calls by call id (their rows)."""
        return RowMap(self.items, self.call_rows, ToolCallItem)

    @property
    def pending(self) -> RowMap[ToolCallItem]:
        """Approvals waiting for a decision by approval id (their rows), oldest first."""
        return RowMap(self.items, self.pending_rows, ToolCallItem)

    @property
    def questions(self) -> RowMap[QuestionItem]:
        """The agent's open questions by question id (their `QuestionItem` rows), oldest
        first."""
        return RowMap(self.items, self.question_rows, QuestionItem)

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
                     "question_rows", "other_costs"):
            setattr(new, name, getattr(self, name).copy())
        self.shared = new.shared = len(self.items)
        self.owned, new.owned = set(), set()
        return new
