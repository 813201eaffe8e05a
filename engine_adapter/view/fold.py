"""The pure fold: events in, view state out. Shared by the live cockpit, replay and export.

`RunFold.apply(event)` updates a `RunView` (see `run_view`) in place and returns a `Change` naming
what it touched, so a widget redraws only that. No Textual, no I/O, no clock: folding the same
events always gives the same view, which is what lets replay seek by folding from a checkpoint.

Joining approvals to tool calls: an engine that gates a tool call uses the call's `call_id` as the
`approval_id`, so the approval and the call fold into one transcript row. An approval with an id
no call uses (`switch_to_editing`, say) gets a row of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Protocol, TypeVar

from engine_adapter.events import (
    AgentConfig,
    AgentEnd,
    AgentNotice,
    AgentPlan,
    AgentReady,
    AgentStart,
    ApprovalRequested,
    ApprovalResolved,
    BaseEvent,
    CancellationObserved,
    CheckpointTaken,
    CommandsAvailable,
    DecisionError,
    DeclarationRequired,
    FilesMentioned,
    HistoryMessage,
    HistoryTool,
    ModeChanged,
    ModelDecisionEvent,
    ModelRetry,
    ModelUpdate,
    ModelUsage,
    PhaseChanged,
    PromptNote,
    QuestionAnswered,
    QuestionAsked,
    SessionInfoChanged,
    TaskEscalated,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    VerificationEnd,
    VerificationPlanFrozen,
    VerificationStart,
    WorkspaceRewound,
    went_badly,
)
from engine_adapter.view.describe import (
    agent_sandbox_warning,
    currency_code,
    describe,
    sandbox_warning,
)
from engine_adapter.view.input_fields import input_lookalikes
from engine_adapter.view.items import (
    DecisionItem,
    DeferredText,
    EndItem,
    HistoryItem,
    Item,
    MessageItem,
    NoticeItem,
    QuestionItem,
    ToolCallItem,
    input_diff,
)
from engine_adapter.view.records import (
    ApprovalView,
    CheckView,
    CommandView,
    GrantLike,
    GrantView,
    PlanRow,
    TurnView,
)
from engine_adapter.view.run_view import (
    APPROVALS,
    COMMANDS,
    GRANTS,
    ITEMS,
    PLAN,
    QUESTIONS,
    RUN,
    USAGE,
    VERIFICATION,
    Change,
    RunView,
)

__all__ = ["NOTHING", "RunFold", "StreamEdge", "fold_events"]

NOTHING = Change(0)

_Row = TypeVar("_Row", bound=Item)


MAX_PLAN_ROWS = 200  # entries of an agent's plan kept in the view
PLAN_TEXT_LIMIT = 1000  # characters of one entry


def _text(value: object, limit: int) -> str:
    """A journal's value as text of at most `limit` characters ("" when it is not text)."""
    return value[:limit] if isinstance(value, str) else ""


def _a_cost(amount: float | None) -> bool:
    """Whether `amount` can be added to a total (NaN would poison it; a negative lies)."""
    return amount is not None and math.isfinite(amount) and amount >= 0


class StreamEdge(Protocol):
    """What `RunFold.apply_stream` reads of the outer two events of a stream: a `ModelUpdate`,
    or replay's lighter stand-in for one read off its journal line."""

    @property
    def seq(self) -> int: ...
    @property
    def ts(self) -> float: ...
    @property
    def turn(self) -> int | None: ...
    @property
    def channel(self) -> str: ...


NEW_CONVERSATION = "── new conversation ── (the tasks above are not part of it)"
"""The divider a task of a new conversation (`/clear`) opens with, after the earlier ones."""


class RunFold:
    """Folds events into a `RunView`. `apply` is pure with respect to the view it owns."""

    def __init__(self, grants: Iterable[GrantLike] = (), view: RunView | None = None) -> None:
        self.view = view if view is not None else RunView()
        for grant in grants:  # standing grants from earlier tasks, saved grants in force
            self.view.grants.append(GrantView.of(grant))
        self.rows_from_end: list[int] = []
        """Tool rows made by their `tool_end`: their start lies before what was folded (replay's
        view of a journal's last part says so on them), or is missing."""
        # Each event type's handler, bound to this fold (the table is `HANDLERS`, below).
        self._handlers: dict[str, Callable[[Any], Change]] = {
            event_type: handler.__get__(self) for event_type, handler in self.HANDLERS.items()}

    def apply(self, event: BaseEvent) -> Change:
        """Fold one event; returns what changed. Unknown event types change nothing."""
        view = self.view
        view.events += 1
        view.last_ts = event.ts
        handler = self._handlers.get(event.type)
        if handler is None:
            return NOTHING
        return handler(event)

    def set_grants(self, grants: Iterable[GrantLike]) -> Change:
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

    def apply_stream(self, first: StreamEdge, last: StreamEdge, count: int,
                     text: str | DeferredText) -> Change:
        """Fold `count` consecutive `model_update` events in one step, the same as applying each:
        `first` and `last` are the outer two; all share a turn and a channel, their seqs run
        from `first.seq` to `last.seq`, and their texts joined are `text` (replay folds long
        streams this way, leaving the text in the journal until it is drawn)."""
        view = self.view
        view.events += count
        view.last_ts = last.ts
        return self._stream(first.turn, first.channel, first.seq, last.seq + 1, text)

    def add_row(self, item: Item) -> Change:
        """Add a row no event makes (replay's notice that a view shows only part of a run)."""
        return self._add(item)

    # helpers ---------------------------------------------------------------------------------
    def _add(self, item: Item) -> Change:
        # Deltas only ever extend the last item: once another item follows, it is complete.
        self._close_message()
        items = self.view.items
        item.index = len(items)
        items.append(item)
        return Change(ITEMS, item.index)

    def _notice(self, kind: str, event: BaseEvent, *, parts: int = 0, turn: int | None = None,
                suffix: str = "", level: str | None = None) -> Change:
        """A notice row for `event`, reading as its one description (at its level, unless
        `level` says otherwise)."""
        view = self.view
        said = describe(event)
        item = NoticeItem(kind, view.task_index, turn if turn is not None else view.turn or None,
                          event.seq, said.line + suffix, level or said.level)
        change = self._add(item)
        return Change(change.parts | parts, change.item)

    def _own(self, index: int, kind: type[_Row]) -> _Row:
        """The row at `index`, this view's own to change (`RunView.own_row`), as the `kind` of
        row it is."""
        row = self.view.own_row(index)
        if not isinstance(row, kind):
            raise TypeError(f"row {index} is a {type(row).__name__}, not a {kind.__name__}")
        return row

    def _close_message(self) -> None:
        items = self.view.items
        if items:
            last = items[-1]
            if type(last) is MessageItem and not last.complete:
                self._own(len(items) - 1, MessageItem).complete = True

    def _tool_row(self, e: BaseEvent, call_id: str, tool: str, tool_input: dict[str, Any],
                  tier: int) -> tuple[ToolCallItem, Change]:
        """The row of call `call_id`, this view's own to change, with `e` among its events; a
        new row (from the other arguments) if the call has none yet in this task."""
        v = self.view
        index = v.call_rows.get(call_id)
        if index is None:
            row = ToolCallItem(v.task_index, v.turn or None, e.seq, call_id, tool, tool_input,
                               tier)
            change = self._add(row)
            v.call_rows[call_id] = change.item
            return row, change
        row = self._own(index, ToolCallItem)
        row.add_seq(e.seq)
        return row, Change(ITEMS, index)

    # handlers --------------------------------------------------------------------------------
    def _agent_start(self, e: AgentStart) -> Change:
        v = self.view
        # Another conversation (`/clear`) of the same cockpit: its tasks carry a new session id.
        divider = v.task_index > 0 and bool(v.session_id) and e.session_id != v.session_id
        v.task_index += 1
        v.session_id, v.task, v.engine = e.session_id, e.task, e.engine
        v.model, v.cwd = e.model, e.cwd
        v.agent_command = e.command
        v.starting = e.ready is False
        v.status, v.result, v.error, v.cancel_reason = "running", None, None, None
        v.turn = 0
        v.checks, v.plan_version = {}, 0
        v.plan, v.plan_dropped = (), 0  # a task's plan is the agent's for that task
        v.call_rows = {}  # call ids are per task: a new task's `call_1` is a new row
        v.started_ts, v.ended_ts = e.ts, None
        self._agent_facts(e)  # an older journal's agent run: all of them came here
        rule = self._add(NoticeItem("conversation", v.task_index, None, e.seq, NEW_CONVERSATION,
                                    "info")).item if divider else None
        change = self._with_warnings(self._notice("task", e, parts=RUN | VERIFICATION, turn=0),
                                     e)
        return change if rule is None else change._replace(more=(rule, *change.more))

    def _agent_ready(self, e: AgentReady) -> Change:
        v = self.view
        v.starting = False
        if e.engine:
            v.engine = e.engine
        self._agent_facts(e)
        return self._with_warnings(self._notice("agent", e, parts=RUN, turn=0), e)

    def _agent_facts(self, e: AgentStart | AgentReady) -> None:
        """What the agent said of itself and where the run's commands go: from `agent_ready`,
        or from an `agent_start` that carries them (older journals, engines ready at once)."""
        v = self.view
        agent = e.agent
        v.agent = (" ".join(p for p in (agent.title or agent.name, agent.version) if p) or None
                   if agent is not None else None)
        v.phase = e.mode  # an agent's mode carries over from the last task
        v.sandbox, v.sandbox_network = e.sandbox, e.sandbox_network
        v.sandbox_note = e.sandbox_note
        v.agent_sandbox = e.agent_sandbox
        if e.new_session or e.resumed:  # another agent session: its own title and settings
            v.title, v.options = None, ()

    def _with_warnings(self, change: Change, e: AgentStart | AgentReady) -> Change:
        """`change` with a warning row after it for each sandbox the run lacks (said at the
        top of the run, where it is seen)."""
        v = self.view
        more = []
        for warning in (sandbox_warning(e), agent_sandbox_warning(e)):
            if warning:
                more.append(self._add(NoticeItem("sandbox", v.task_index, 0, e.seq, warning,
                                                 "warning")).item)
        return change._replace(more=tuple(more)) if more else change

    def _agent_end(self, e: AgentEnd) -> Change:
        v = self.view
        self._close_message()
        v.status, v.result, v.error, v.ended_ts = e.status, e.result, e.error, e.ts
        v.starting = False  # an agent that could not start ends the run here
        parts, denied = RUN, []
        if v.pending_rows:  # nothing can be pending once the run is over
            for index in v.pending_rows.values():
                pending = v.items[index]
                if (isinstance(pending, ToolCallItem) and pending.approval is not None
                        and pending.approval.state == "pending"):
                    row = self._own(index, ToolCallItem)
                    row.approval = pending.approval._replace(state="denied")
                    row.status = "denied"
                    denied.append(index)
            v.pending_rows.clear()
            parts |= APPROVALS
        if v.question_rows:  # nor can a question be open
            for index in v.question_rows.values():
                question = self._own(index, QuestionItem)
                question.state, question.via = "cancel", "auto"
                question.reason = "the run ended"
                denied.append(index)
            v.question_rows.clear()
            parts |= QUESTIONS
        error = e.error
        if error is None and e.status == "cancelled" and v.cancel_reason:
            error = v.cancel_reason  # why it was cancelled, when the end itself does not say
            e = e.model_copy(update={"error": error})
        said = describe(e)
        change = self._add(EndItem(v.task_index, v.turn or None, e.seq, said.line, said.level,
                                   e.status, e.result, error, e.stderr))
        return Change(change.parts | parts, change.item, tuple(denied))

    def _turn_start(self, e: TurnStart) -> Change:
        v = self.view
        self._close_message()
        v.turn = e.turn
        v.turns.append(TurnView(v.task_index, e.turn, len(v.items)))
        return Change(RUN)

    def _turn_end(self, e: TurnEnd) -> Change:
        v = self.view
        self._close_message()
        if v.turns and v.turns[-1].turn == e.turn:
            v.turns[-1] = v.turns[-1]._replace(stop_reason=e.stop_reason)
        return Change(RUN)

    def _phase_changed(self, e: PhaseChanged) -> Change:
        self.view.phase = e.phase
        return self._notice("phase", e, parts=RUN)

    def _mode_changed(self, e: ModeChanged) -> Change:
        self.view.mode = e.mode
        self.view.mode_note = e.note
        return self._notice("mode", e, parts=RUN)

    def _declaration_required(self, e: DeclarationRequired) -> Change:
        return self._notice("declaration", e, turn=e.turn)

    def _model_decision(self, e: ModelDecisionEvent) -> Change:
        change = self._add(DecisionItem(self.view.task_index, e.turn, e.seq, e.action, e.tool,
                                        e.tool_input, e.rationale))
        if e.action == "plan" and e.tool is None and isinstance(e.tool_input, dict):
            # An ACP agent's plan in journals before `agent_plan`: the same entries, loosely.
            raw = e.tool_input.get("entries")
            entries = [x for x in raw if isinstance(x, dict)] if isinstance(raw, list) else []
            self._set_plan([(x.get("content"), x.get("status"), x.get("priority"))
                            for x in entries[:MAX_PLAN_ROWS]],
                           max(0, len(entries) - MAX_PLAN_ROWS))
            return Change(change.parts | PLAN, change.item)
        return change

    def _agent_plan(self, e: AgentPlan) -> Change:
        entries = e.entries
        self._set_plan([(x.content, x.status, x.priority) for x in entries[:MAX_PLAN_ROWS]],
                       max(0, len(entries) - MAX_PLAN_ROWS) + max(0, e.dropped))
        return self._notice("plan", e, parts=PLAN, turn=e.turn)

    def _set_plan(self, entries: list[tuple[object, object, object]], dropped: int) -> None:
        """The plan as it now stands: at most `MAX_PLAN_ROWS` entries, each text cut (a
        journal is untrusted: a line of a million entries must not become a million rows)."""
        rows = [PlanRow(_text(content, PLAN_TEXT_LIMIT), _text(status, 20) or "pending",
                        _text(priority, 20) or "medium") for content, status, priority in entries]
        self.view.plan = tuple(rows)
        self.view.plan_dropped = dropped

    def _model_update(self, e: ModelUpdate) -> Change:
        return self._stream(e.turn, e.channel, e.seq, e.seq + 1, e.text)

    def _stream(self, turn: int | None, channel: str, seq: int, stop: int,
                text: str | DeferredText) -> Change:
        """Streamed text with seqs `[seq, stop)`: extends the open message, or starts one."""
        v = self.view
        items = v.items
        if items:
            last = items[-1]
            if (type(last) is MessageItem and last.channel == channel and last.turn == turn
                    and not last.complete):
                self._own(len(items) - 1, MessageItem).extend(text, seq, stop)
                return Change(ITEMS, len(items) - 1)
        item = MessageItem(v.task_index, turn, seq, channel)
        if stop != seq + 1:
            item.seqs = range(seq, stop)
        item.extend(text)
        return self._add(item)

    def _tool_start(self, e: ToolStart) -> Change:
        self._close_message()
        # A row may exist already (its approval came first): the same row now runs.
        row, change = self._tool_row(e, e.call_id, e.tool, e.tool_input, e.tier)
        if e.approved_input is not None:
            row.approved_input = e.approved_input
        if e.revision:  # the same call's input as it now stands: the row keeps its run
            row.tool_input, row.tier = e.tool_input, e.tier
            row.title = e.title or row.title
            row.diff = input_diff(e.tool_input) or row.diff
            return change
        row.tool_input, row.tier = e.tool_input or row.tool_input, e.tier
        row.title = e.title
        row.permitted_by = e.permitted_by
        row.sandbox, row.sandbox_network = e.sandbox, e.sandbox_network
        row.agent_sandbox = e.agent_sandbox
        row.status = "running"
        row.started_ts = e.ts
        row.diff = input_diff(e.tool_input) or row.diff
        return change

    def _tool_end(self, e: ToolEnd) -> Change:
        # An end without a start (a torn or filtered journal) still gets a row.
        new = e.call_id not in self.view.call_rows
        row, change = self._tool_row(e, e.call_id, e.tool, {}, 0)
        if new:
            self.rows_from_end.append(change.item)
        row.status = "failed" if went_badly(e) else "ok"
        row.output, row.error, row.duration_ms = e.output, e.error, e.duration_ms
        row.exit_code = e.exit_code
        if e.title:  # the agent renamed the call while it ran
            row.title = e.title
        row.sandbox = e.sandbox or row.sandbox
        row.sandbox_blocked = e.sandbox_blocked
        if e.diff:
            row.diff = e.diff
        return change

    def _approval_requested(self, e: ApprovalRequested) -> Change:
        self._close_message()
        row, change = self._tool_row(e, e.approval_id, e.tool, e.tool_input, e.tier)
        row.approval = ApprovalView(e.approval_id, e.tool, e.reason, e.tool_input, e.tier,
                                    e.prefix, *e.grant_verdict, asked_ts=e.ts,
                                    lookalikes=input_lookalikes(e.tool_input, e.prefix,
                                                                tool=e.tool))
        row.diff = row.diff or input_diff(e.tool_input)
        row.status = "awaiting"
        self.view.pending_rows[e.approval_id] = change.item
        return Change(change.parts | APPROVALS, change.item)

    def _approval_resolved(self, e: ApprovalResolved) -> Change:
        v = self.view
        # Decided without asking (a grant, a deny rule, a policy): the row is made here.
        row, change = self._tool_row(e, e.approval_id, e.tool, e.tool_input or {}, e.tier or 0)
        approval = row.approval or ApprovalView(e.approval_id, e.tool, "", row.tool_input,
                                                row.tier, "")
        allowed = not went_badly(e)
        approval = row.approval = approval._replace(
            state="allowed" if allowed else "denied", via=e.via, remember=e.remember,
            scope=e.scope, grant_id=e.grant_id, rule=e.rule, error=e.error,
            answer_reason=e.reason, answered_ts=e.ts, edited=bool(e.edited))
        if row.status in ("awaiting", "running"):
            row.status = "allowed" if allowed else "denied"
        parts = change.parts
        if v.pending_rows.pop(e.approval_id, None) is not None:
            parts |= APPROVALS
        if allowed and e.remember and approval.prefix:
            grant = GrantView(approval.tool, approval.prefix, approval.tier,
                              e.scope or "session", e.grant_id)
            if grant not in v.grants:
                v.grants.append(grant)
                parts |= GRANTS
        return Change(parts, change.item)

    def _decision_error(self, e: DecisionError) -> Change:
        return self._notice("decision_error", e, turn=e.turn)

    def _model_usage(self, e: ModelUsage) -> Change:
        v = self.view
        # A journal is untrusted text: numbers that cannot be counts or costs are left out.
        v.input_tokens += max(0, e.input_tokens)
        v.output_tokens += max(0, e.output_tokens)
        if e.scope != "session":  # an agent's report on its session is no model call
            v.model_calls += 1
        if _a_cost(e.cost_usd):
            v.cost_usd = (v.cost_usd or 0.0) + (e.cost_usd or 0.0)
        elif _a_cost(e.cost) and e.currency and e.currency.upper() != "USD":
            currency = currency_code(e.currency)
            if currency in v.other_costs or len(v.other_costs) < 4:
                v.other_costs[currency] = v.other_costs.get(currency, 0.0) + (e.cost or 0.0)
        v.cached_tokens += max(0, e.cached_read_tokens or 0)
        v.thought_tokens += max(0, e.thought_tokens or 0)
        used, size = e.context_used or 0, e.context_size or 0
        if size > 0 and used >= 0:  # a level, not a delta: the latest wins
            v.context = (used, size)
        if e.model and not v.model:
            v.model = e.model
            return Change(USAGE | RUN)
        return Change(USAGE)

    def _plan_frozen(self, e: VerificationPlanFrozen) -> Change:
        v = self.view
        v.plan_version += 1
        old = v.checks
        checks: dict[str, CheckView] = {}
        for check in e.checks:
            before = old.get(check.id)
            if before is not None and before.name == check.name and before.command == check.command:
                checks[check.id] = before
            else:
                checks[check.id] = CheckView(check.id, check.name, check.command, v.plan_version)
        v.checks = checks
        if v.plan_version == 1:
            return self._notice("plan", e, parts=VERIFICATION)
        return self._notice("plan", e, parts=VERIFICATION, suffix=" (changed)", level="warning")

    def _verification_start(self, e: VerificationStart) -> Change:
        self._set_check(e, status="running")
        return Change(VERIFICATION)

    def _verification_end(self, e: VerificationEnd) -> Change:
        self._set_check(e, status="failed" if went_badly(e) else "passed", output=e.output,
                        duration_ms=e.duration_ms)
        return Change(VERIFICATION)

    def _set_check(self, e: VerificationStart | VerificationEnd, **changes: Any) -> None:
        v = self.view
        # A check outside the frozen plan: show it rather than drop it.
        check = v.checks.get(e.check_id) or CheckView(e.check_id, e.name, None, v.plan_version)
        v.checks[e.check_id] = check._replace(**changes)

    def _cancellation_observed(self, e: CancellationObserved) -> Change:
        self.view.cancel_reason = e.reason
        return self._notice("cancel", e, parts=RUN, turn=e.turn)

    def _task_escalated(self, e: TaskEscalated) -> Change:
        return self._notice("escalation", e)

    def _model_retry(self, e: ModelRetry) -> Change:
        return self._notice("retry", e, turn=e.turn)

    # the workspace's checkpoints: quiet when taken, a row when one failed or a rewind ran ----
    def _checkpoint_taken(self, e: CheckpointTaken) -> Change:
        if e.checkpoint is not None:
            self.view.checkpoints = (*self.view.checkpoints, (e.turn, e.checkpoint))
        if e.error is None and not e.large_count:
            return Change(RUN)
        change = self._notice("checkpoint", e, turn=e.turn)
        return Change(change.parts | RUN, change.item)

    def _workspace_rewound(self, e: WorkspaceRewound) -> Change:
        return self._notice("rewind", e)

    # an agent's dialogue: its questions, commands, notes, history and settings ----------------
    def _question_asked(self, e: QuestionAsked) -> Change:
        v = self.view
        change = self._add(QuestionItem(v.task_index, v.turn or None, e.seq, e.question_id,
                                        e.message, list(e.fields), e.call_id, e.url))
        v.question_rows[e.question_id] = change.item
        return Change(change.parts | QUESTIONS, change.item)

    def _question_answered(self, e: QuestionAnswered) -> Change:
        v = self.view
        index = v.question_rows.pop(e.question_id, None)
        if index is None:  # already closed, or its question is not in this view: find its row
            index = next((i for i in range(len(v.items) - 1, -1, -1)
                          if isinstance(item := v.items[i], QuestionItem)
                          and item.question_id == e.question_id and item.state == "pending"),
                         None)
            if index is None:
                return Change(QUESTIONS)
        row = v.own_row(index)
        assert isinstance(row, QuestionItem)
        row.add_seq(e.seq)
        row.state, row.values, row.via, row.reason = e.action, e.values, e.via, e.reason
        return Change(ITEMS | QUESTIONS, index)

    def _commands_available(self, e: CommandsAvailable) -> Change:
        self.view.commands = tuple(CommandView(c.name, c.description, c.hint)
                                   for c in e.commands)
        return Change(COMMANDS)

    def _prompt_note(self, e: PromptNote) -> Change:
        return self._notice("note", e)

    def _files_mentioned(self, e: FilesMentioned) -> Change:
        return self._notice("mentions", e)

    def _agent_notice(self, e: AgentNotice) -> Change:
        return self._notice("agent_notice", e)

    def _agent_config(self, e: AgentConfig) -> Change:
        v = self.view
        v.options = tuple(e.options)
        model = next((o for o in v.options if o.category == "model" or o.id == "model"), None)
        if model is not None and isinstance(model.value, str):
            v.model = model.value
        return Change(RUN)

    def _session_info(self, e: SessionInfoChanged) -> Change:
        self.view.title = e.title  # the session's info as it stands (None: no title now)
        return Change(RUN)

    def _history(self, e: HistoryMessage | HistoryTool) -> tuple[HistoryItem, Change]:
        """The open history item (the last item, when it is one), or a new one."""
        v = self.view
        items = v.items
        if items and type(items[-1]) is HistoryItem:
            item = v.own_row(len(items) - 1)
            assert isinstance(item, HistoryItem)
            item.add_seq(e.seq)
            return item, Change(ITEMS, item.index)
        new = HistoryItem(v.task_index, e.seq)
        return new, self._add(new)

    def _history_message(self, e: HistoryMessage) -> Change:
        item, change = self._history(e)
        item.add_text(e.role, e.text)
        return change

    def _history_tool(self, e: HistoryTool) -> Change:
        item, change = self._history(e)
        status = f" ({e.status})" if e.status else ""
        item.set_tool(e.call_id, f"{e.title or e.tool}{status}")
        return change

    # Each event type's handler, keyed by its class's `type` (a test holds every handler's
    # parameter to the class it is listed with, and every event type to a handler). Built in
    # the class body, where the handlers are plain functions.
    HANDLERS: ClassVar[dict[str, Callable[[RunFold, Any], Change]]] = {
        event_class.model_fields["type"].default: handler for event_class, handler in (
            (AgentStart, _agent_start),
            (AgentReady, _agent_ready),
            (AgentEnd, _agent_end),
            (TurnStart, _turn_start),
            (TurnEnd, _turn_end),
            (PhaseChanged, _phase_changed),
            (DeclarationRequired, _declaration_required),
            (ModelDecisionEvent, _model_decision),
            (ModelUpdate, _model_update),
            (ToolStart, _tool_start),
            (ToolEnd, _tool_end),
            (ApprovalRequested, _approval_requested),
            (ApprovalResolved, _approval_resolved),
            (DecisionError, _decision_error),
            (ModelUsage, _model_usage),
            (VerificationPlanFrozen, _plan_frozen),
            (VerificationStart, _verification_start),
            (VerificationEnd, _verification_end),
            (CancellationObserved, _cancellation_observed),
            (TaskEscalated, _task_escalated),
            (ModelRetry, _model_retry),
            (QuestionAsked, _question_asked),
            (QuestionAnswered, _question_answered),
            (CommandsAvailable, _commands_available),
            (AgentPlan, _agent_plan),
            (PromptNote, _prompt_note),
            (FilesMentioned, _files_mentioned),
            (AgentNotice, _agent_notice),
            (AgentConfig, _agent_config),
            (SessionInfoChanged, _session_info),
            (HistoryMessage, _history_message),
            (HistoryTool, _history_tool),
            (CheckpointTaken, _checkpoint_taken),
            (WorkspaceRewound, _workspace_rewound),
            (ModeChanged, _mode_changed),
        )
    }


def fold_events(events: Iterable[BaseEvent], grants: Iterable[GrantLike] = ()) -> RunView:
    """Fold a whole sequence of events into a fresh view."""
    return RunFold(grants).apply_all(events)
