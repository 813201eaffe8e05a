"""How each event reads to a human: one `Description` per event type, shared by the fold's
transcript notices, the headless lines and the export.

Adding an event type touches its model (`events`), its fold handler and its describer here —
nothing else has to restate how it reads. Texts are raw: the parts an agent or a tool chose are
untrusted, and each view displays them through `engine_adapter.text` its own way. The small
wording helpers every view shares (durations, the wait for a human, an approval's verdict, how a
run's end reads) are in `wording`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Literal, NamedTuple

from engine_adapter.events import (
    AgentConfig,
    AgentEnd,
    AgentNotice,
    AgentOption,
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
    VerificationCheck,
    VerificationEnd,
    VerificationPlanFrozen,
    VerificationStart,
    WorkspaceRewound,
    answer_text,
    fields_text,
    link_text,
    mode_label,
)
from engine_adapter.sandbox import UNAVAILABLE, agent_place_label, is_sandboxed, sandbox_label
from engine_adapter.text import plural
from engine_adapter.view.diff_summary import diff_stats
from engine_adapter.view.input_fields import input_line
from engine_adapter.view.wording import (
    approval_verdict,
    duration_text,
    end_lines,
    input_changed_text,
)

__all__ = [
    "COMMAND_SIGILS",
    "DESCRIBERS",
    "SUMMARY_LIMIT",
    "Description",
    "Tone",
    "agent_sandbox_warning",
    "command_token",
    "currency_code",
    "describe",
    "option_value_name",
    "options_text",
    "sandbox_warning",
]

Tone = Literal["plain", "strong", "dim", "good", "bad", "warn", "info", "accent"]
"""How a line should stand out; each view maps it to its own colours."""

_LEVELS = {"bad": "error", "warn": "warning"}


class Description(NamedTuple):
    """How one event reads.

    `label` heads a headless line; `text` is what happened, one line; `icon` and `lead` begin
    the transcript's line for it (`line`); `details` are lines that belong under it (an
    agent's stderr tail, a model's raw reply)."""

    label: str
    text: str
    tone: Tone = "plain"
    icon: str = "·"
    lead: str = ""
    details: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The transcript's and the export's line: icon, lead, text."""
        return f"{self.icon} {self.lead}{self.text}"

    @property
    def level(self) -> str:
        """The fold's notice level: "info", "warning" or "error"."""
        return _LEVELS.get(self.tone, "info")


# A task's steps ----------------------------------------------------------------------------------

SUMMARY_LIMIT = 400  # characters of one input value in a one-line summary


def _summary(tool_input: Any) -> str:
    return input_line(tool_input, limit=SUMMARY_LIMIT) if isinstance(tool_input, dict) else ""


def _last_line(text: str) -> str:
    lines = [line.strip(" \t\r") for line in text.split("\n") if line.strip(" \t\r")]
    return lines[-1] if lines else ""


def _output_gist(tool: str, output: str) -> str:
    """A command's last line (where test runners sum up); for other tools, a line count."""
    lines = [line for line in output.split("\n") if line.strip(" \t\r")]
    if tool == "shell" or len(lines) <= 1:
        return _last_line(output)
    return plural(len(lines), "line")


def _agent_name(event: AgentStart | AgentReady) -> str | None:
    agent = event.agent
    if agent is None:
        return None
    return f"{agent.title or agent.name} {agent.version}".strip() or None


def _where(e: AgentStart | AgentReady) -> str | None:
    """Where the run's commands go: an external agent's process first, then its terminals."""
    where = sandbox_label(e.sandbox, e.sandbox_network)
    if e.agent_sandbox:
        where = f"{agent_place_label(e.agent_sandbox)} · terminals: {where}" if where \
            else agent_place_label(e.agent_sandbox)
    return where


# The describers, one per event type ---------------------------------------------------------

def sandbox_warning(event: AgentStart | AgentReady) -> str | None:
    """What an `agent_start` says when its commands wanted a sandbox this machine lacks: why
    there is none, the fix, and what happens meanwhile (every view shows it at the start of the
    run: a TUI hides what was printed before it); None otherwise."""
    if getattr(event, "sandbox", None) != UNAVAILABLE:
        return None
    note = event.sandbox_note or "this machine has none"
    return (f"⚠ no sandbox: {note}. Until then every command asks before it runs; "
            "--sandbox off runs them without one on purpose.")


def agent_sandbox_warning(event: AgentStart | AgentReady) -> str | None:
    """What an `agent_start` says when the external agent's process runs outside the sandbox
    (off on purpose, or none on this machine); None when contained or not an agent's run."""
    state = getattr(event, "agent_sandbox", None)
    if not state or is_sandboxed(state):
        return None
    return (f"⚠ {agent_place_label(state)}: what the agent runs of its own is not contained; "
            "--auto-approve answers its own tools for reads only.")


def _agent_start(e: AgentStart) -> Description:
    about = " · ".join(str(p) for p in (e.engine, _agent_name(e), e.model, e.cwd, _where(e))
                       if p)
    task = e.task or ("(none: the conversation was opened)" if e.resumed else "")
    if e.ready is False and not task:
        task = "(none: the conversation is being opened)"
    warning = sandbox_warning(e)
    continues = f"continues the conversation of {e.resumes}" if e.resumes else None
    details = tuple(line for line in (about, continues, warning, agent_sandbox_warning(e))
                    if line)
    return Description("start", task, "strong", "▶", "task: ", details)


def _agent_ready(e: AgentReady) -> Description:
    session = None
    if e.acp_session_id:
        how = f", reopened by {e.resumed}" if e.resumed else \
            ", new" if e.new_session else ""
        session = f"session {e.acp_session_id}{how}"
    text = " · ".join(p for p in (_agent_name(e) or "the agent", session, _where(e)) if p)
    details = tuple(line for line in (sandbox_warning(e), agent_sandbox_warning(e)) if line)
    return Description("ready", text, "info", "◆", "agent ready: ", details)


def _agent_end(e: AgentEnd) -> Description:
    head, *rest = end_lines(e.status, e.error, e.stderr)
    tone: Tone = "good" if e.status == "completed" else "warn" if e.status == "cancelled" else "bad"
    return Description("end", head, tone, "■", "", tuple(rest))


def _turn_start(e: TurnStart) -> Description:
    return Description("turn", f"{e.turn}", "dim", "─", "turn ")


def _turn_end(e: TurnEnd) -> Description:
    stop = f" ({e.stop_reason})" if e.stop_reason else ""
    return Description("turn end", f"{e.turn}{stop}", "dim", "─", "end of turn ")


def _phase_changed(e: PhaseChanged) -> Description:
    text = f"{e.previous} → {e.phase}" if e.previous else e.phase
    return Description("phase", text, "info", "◆", "phase ")


def _mode_changed(e: ModeChanged) -> Description:
    mode = mode_label(e.mode)
    text = f"{mode_label(e.previous)} → {mode}" if e.previous else mode
    if e.source and e.source not in ("human", "start"):
        text += f" (by {e.source})"
    if e.note:
        text += f": {e.note}"
    tone: Tone = "warn" if e.note or e.mode == "auto" else "info"
    return Description("mode", text, tone, "◇", "permission mode ")


def _declaration_required(e: DeclarationRequired) -> Description:
    return Description("declare!", e.reason, "warn", "!")


def _model_decision(e: ModelDecisionEvent) -> Description:
    what = e.tool or e.action
    text = f"{what} {_summary(e.tool_input)}".rstrip()
    if e.rationale:
        text += f" — {e.rationale}"
    return Description("decide", text, "accent", "→")


def _model_update(e: ModelUpdate) -> Description:
    if e.channel == "thought":
        return Description("thinking", e.text, "dim", "∴")
    return Description("model", e.text, "strong", " ")


def _tool_start(e: ToolStart) -> Description:
    summary = _summary(e.tool_input) or e.title or ""
    where = sandbox_label(e.sandbox, e.sandbox_network)  # a command: where it runs
    agent = agent_place_label(e.agent_sandbox)  # an external agent: where the agent runs
    tier = "".join((f"tier {e.tier}", f", {where}" if where else "", f", {agent}" if agent
                    else ""))
    text = f"{e.call_id} {e.tool} [{tier}] {summary}".rstrip()
    changed = input_changed_text(e.approved_input)
    if changed:  # the approval was for another input: say so, with both
        return Description("tool ▶", f"{text} · {changed}", "warn", "⚠")
    if e.revision:  # the input as it now stands (sent after the call began)
        return Description("tool ▶", f"{e.call_id} {e.tool} [{tier}] input now: "
                           f"{_summary(e.tool_input) or 'an empty input'}", "plain", "▶")
    return Description("tool ▶", text, "plain", "▶")


def _tool_end(e: ToolEnd) -> Description:
    diff = e.diff
    detail = " · ".join(p for p in (e.error, _output_gist(e.tool, e.output),
                                    f"diff {diff_stats(diff)}" if diff else "") if p)
    took = f" {duration_text(e.duration_ms)}" if e.duration_ms is not None else ""
    text = f"{e.call_id} {e.tool}{took}" + (f": {detail}" if detail else "")
    return Description("tool ✔" if e.ok else "tool ✘", text, "good" if e.ok else "bad",
                       "✓" if e.ok else "✗")


def _approval_requested(e: ApprovalRequested) -> Description:
    grantable, why = e.grant_verdict  # the Session's verdict, shown as it is
    if grantable:
        always = f"[a] always would allow: {e.prefix}"
    else:
        always = "[a] always: cannot be granted" + (f": {why}" if why else "")
    what = input_line(e.tool_input)
    text = (f"{e.approval_id} {e.tool} [tier {e.tier}] " + (f"{what} — " if what else "")
            + f"{e.reason} · {always}")
    return Description("ask ?", text, "warn", "?")


def _approval_resolved(e: ApprovalResolved) -> Description:
    verdict = approval_verdict(e)
    said = f" · reason: {e.reason}" if e.reason else ""  # the human's words, passed on
    # Decided without asking (a grant, a deny rule, the policy): say what was decided.
    what = input_line(e.tool_input) if isinstance(e.tool_input, dict) and e.tool_input else ""
    return Description("allowed" if e.allowed else "denied",
                       f"{e.approval_id} {e.tool}" + (f" {what}" if what else "")
                       + f": {verdict}" + said, "good" if e.allowed else "bad",
                       "✓" if e.allowed else "⊘")

def _decision_error(e: DecisionError) -> Description:
    details = (f"raw: {e.raw}",) if e.raw else ()
    return Description("error", f"malformed decision: {e.error}", "bad", "✗", "", details)


def _model_retry(e: ModelRetry) -> Description:
    return Description("retry", f"{e.error} — retry {e.attempt} of {e.max_attempts} in "
                       f"{e.delay_s:g} s", "warn", "↻")


def currency_code(code: str | None) -> str:
    """A currency code as letters only (it comes from the agent, or a journal)."""
    return "".join(ch for ch in (code or "").upper() if "A" <= ch <= "Z")[:10] or "?"


def _model_usage(e: ModelUsage) -> Description:
    if e.scope == "session":  # the agent's report on its session: no tokens of a call
        parts = []
        if e.context_size and e.context_size > 0:
            used = max(0, e.context_used or 0)
            parts.append(f"context {min(used * 100 // e.context_size, 999)}% of "
                         f"{e.context_size:,} tokens")
        if e.cost is not None:
            parts.append(f"+${e.cost:.4f}" if e.currency == "USD" else
                         f"+{e.cost:.4f} {currency_code(e.currency)}")
        return Description("usage", " · ".join(parts) or "usage reported", "dim")
    cost = f", ${e.cost_usd:.4f}" if e.cost_usd is not None else ""
    cached = e.cached_read_tokens
    cached_text = f" ({cached:,} cached)" if cached else ""
    model = f" ({e.model})" if e.model else ""
    return Description("usage", f"{e.input_tokens:,} in{cached_text} / {e.output_tokens:,} out "
                       f"tokens{cost}{model}", "dim")


def _checks_text(checks: Iterable[VerificationCheck]) -> str:
    return "; ".join(f"{c.name} ({c.command})" if c.command else c.name for c in checks)


def _plan_frozen(e: VerificationPlanFrozen) -> Description:
    # (≡, not U+2630: Unicode 16 made that one wide, so Rich draws it two cells and most
    # terminals one, which shifts the row and leaves a stale cell at its end)
    return Description("plan", _checks_text(e.checks) or "no checks", "info", "≡",
                       "verification plan: ")


def _verification_start(e: VerificationStart) -> Description:
    return Description("check ▶", e.name, "plain", "▶", "check ")


def _verification_end(e: VerificationEnd) -> Description:
    took = f" {duration_text(e.duration_ms)}" if e.duration_ms is not None else ""
    last = _last_line(e.output)
    return Description("check ✔" if e.passed else "check ✘",
                       f"{e.name}{took}" + (f": {last}" if last else ""),
                       "good" if e.passed else "bad", "✓" if e.passed else "✗", "check ")


def _cancellation_observed(e: CancellationObserved) -> Description:
    turn = f" (turn {e.turn})" if e.turn else ""
    return Description("stopping", f"{e.reason}{turn}", "warn", "⊘", "stopping: ")


def _task_escalated(e: TaskEscalated) -> Description:
    target = f"to {e.target}: " if e.target else ""
    return Description("escalate", f"{target}{e.reason}", "warn", "⇧", "escalated ")


def _checkpoint_taken(e: CheckpointTaken) -> Description:
    at = f"turn {e.turn}" if e.turn is not None else "the run's end"
    if e.error is not None:
        return Description("checkpoint", f"{at}: {e.error}", "warn", "⚑", "checkpoint ")
    large = (f"; {e.large_count} file(s) over the size cap recorded by hash only "
             f"({', '.join(e.large[:3])})" if e.large_count else "")
    return Description("checkpoint", f"{at}: {e.files} files, +{e.added} ~{e.modified} "
                       f"-{e.deleted}{large}", "warn" if large else "dim", "⚑", "checkpoint ")


def _workspace_rewound(e: WorkspaceRewound) -> Description:
    what = "undid the latest rewind" if e.undo else f"to the start of turn {e.to_turn}"
    left = f", {len(e.left_alone)} left alone" if e.left_alone else ""
    failed = f", {len(e.failed)} failed" if e.failed else ""
    talk = f"; {e.conversation}" if e.conversation else ""
    return Description("rewind", f"{what}: {len(e.restored)} restored, {len(e.removed)} "
                       f"removed{left}{failed}{talk}", "warn" if e.failed else "plain", "↶",
                       "workspace rewound ")




# An external agent's session ---------------------------------------------------------------------

def _question_asked(e: QuestionAsked) -> Description:
    form = fields_text(e.fields)
    # The link cut here, so a long one still shows where it ends; the views escape it.
    link = f" — link: {link_text(e.url, 500)}" if e.url is not None else ""
    return Description("question", f"{e.question_id} {e.message}" + (f" — {form}" if form
                                                                     else "") + link,
                       "warn", "?", "the agent asks: ")


def _question_answered(e: QuestionAnswered) -> Description:
    ends: dict[str, tuple[str, Tone]] = {"accept": ("answered", "good"),
                                         "decline": ("declined", "bad")}
    label, tone = ends.get(e.action, ("cancelled", "warn"))
    said = answer_text((), e.action, e.values, via=e.via, reason=e.reason, human="a human")
    return Description(label, f"{e.question_id} {said}", tone, "→")


COMMAND_SIGILS = "$@#!"
"""A command whose name starts with one of these (codex's `$skills`) is typed as it is named."""


def command_token(name: str) -> str:
    """What a human types for an agent's command: `/review`, or `$imagegen` as it is named."""
    return name if name[:1] in COMMAND_SIGILS else f"/{name}"


def _commands_available(e: CommandsAvailable) -> Description:
    names = ", ".join(command_token(c.name) for c in e.commands)
    return Description("commands", names or "(none)", "dim", "/", "the agent offers: ")


def _agent_plan(e: AgentPlan) -> Description:
    entries = e.entries
    total = len(entries) + max(0, e.dropped)
    done = sum(1 for x in entries if x.status == "completed")
    now = next((x for x in entries if x.status == "in_progress"), None)
    text = f"{done} of {total} done" if total else "(no entries)"
    if now is not None:
        text += f" · now: {now.content[:200]}"
    return Description("plan", text, "accent", "≡", "the agent's plan: ")


def _prompt_note(e: PromptNote) -> Description:
    how = "while it worked" if e.delivery == "in_turn" else "with the task"
    return Description("note", e.text, "info", "✎", f"passed on to the agent {how}: ")


_DELIVERIES = {"embedded": "its contents", "link": "as a link", "context": "its text"}
MENTIONS_SHOWN = 20  # mentions one line names (a task holds at most 20)


def byte_size(size: int) -> str:
    """`512 B`, `1.2 KB`, `3.4 MB`: a file's size as people read it."""
    if size < 1000:
        return f"{size} B"
    value = size / 1000
    for unit in ("KB", "MB"):
        if value < 1000:
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def _files_mentioned(e: FilesMentioned) -> Description:
    sent, refused = [], []
    for file in e.files[:MENTIONS_SHOWN]:
        # one line: a name's line breaks and tabs read as escapes (each view marks the rest)
        name = "@" + file.path[:200].replace("\n", "\\n").replace("\t", "\\t")
        if file.sent:
            size = f"{byte_size(file.size)}, " if file.size is not None else ""
            sent.append(f"{name} ({size}{_DELIVERIES.get(file.delivery, file.delivery)})")
        else:
            refused.append(f"{name}: {(file.reason or 'not sent')[:300]}")
    parts = [" · ".join(sent)] if sent else []
    if refused:
        parts.append("not sent: " + " · ".join(refused))
    more = len(e.files) - MENTIONS_SHOWN
    text = " · ".join(parts) + (f" · {more} more" if more > 0 else "") or "(none)"
    return Description("mentions", text, "warn" if refused else "info", "@",
                       "files sent with the task: " if sent else "files mentioned: ")

def option_value_name(option: AgentOption) -> str:
    """An agent setting's current value as the agent names it ("on"/"off" for a boolean)."""
    value = option.value
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "?"
    for choice in option.choices:
        if choice.value == value:
            return choice.name or choice.value
    return str(value)


def options_text(options: Iterable[AgentOption], *, skip: Iterable[str] = ()) -> str:
    """`model Sonnet · reasoning effort High · fast mode off`: each of an agent's settings
    (`AgentOption`s) by its name and current value; those whose id is in `skip` left out."""
    left_out = set(skip)
    return " · ".join(f"{(o.name or o.id).strip().lower()} {option_value_name(o)}"
                      for o in options if o.id not in left_out)


_HISTORY_ROLES = {"user": "you", "agent": "agent", "thought": "agent, thinking"}


def _agent_config(e: AgentConfig) -> Description:
    return Description("settings", options_text(e.options) or "none", "info", "⚙", "settings: ")


def _session_info(e: SessionInfoChanged) -> Description:
    return Description("title", e.title or "(none)", "info", "✎", "session title: ")


def _agent_notice(e: AgentNotice) -> Description:
    tone: Tone = "warn" if e.level == "warning" else "bad" if e.level == "error" else "info"
    return Description("note", e.text, tone, "!" if e.level != "info" else "·")


def _history_message(e: HistoryMessage) -> Description:
    return Description("history", f"{_HISTORY_ROLES.get(e.role, e.role)}: {e.text}", "dim",
                       "⟲", "earlier, ")


def _history_tool(e: HistoryTool) -> Description:
    status = f" ({e.status})" if e.status else ""
    return Description("history", f"tool {e.call_id} {e.title or e.tool}{status}", "dim", "⟲",
                       "earlier, ")




DESCRIBERS: dict[str, Callable[[Any], Description]] = {
    event_class.model_fields["type"].default: describer for event_class, describer in (
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
        (AgentConfig, _agent_config),
        (SessionInfoChanged, _session_info),
        (AgentNotice, _agent_notice),
        (HistoryMessage, _history_message),
        (HistoryTool, _history_tool),
        (CheckpointTaken, _checkpoint_taken),
        (WorkspaceRewound, _workspace_rewound),
        (ModeChanged, _mode_changed),
    )
}
"""Each event type's describer, keyed by its class's `type` (a test holds every describer's
parameter to the class it is listed with, and every type in `EVENT_TYPES` to a describer)."""


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def describe(event: BaseEvent) -> Description:
    """How `event` reads. An event type without a describer (a newer writer's) reads as its
    type and its fields."""
    describer = DESCRIBERS.get(event.type)
    if describer is not None:
        return describer(event)
    fields = event.model_dump(exclude={"type", "session_id", "seq", "ts"})
    return Description(event.type, _compact(fields), "plain")
