"""How each event reads to a human: one `Description` per event type, shared by the fold's
transcript notices, the headless lines and the export.

Adding an event type touches its model (`events.py`), its fold handler and its describer here —
nothing else has to restate how it reads. Texts are raw: the parts an agent or a tool chose are
untrusted, and each view displays them through `engine_adapter.text` its own way.

The small wording helpers every view shares live here too: durations, the wait for a human, an
approval's verdict, and how a run's end reads (the error first, never the reply in its place).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from .diff_summary import diff_stats
from .input_fields import input_line
from .questions import answer_text, fields_text
from .sandbox import UNAVAILABLE, sandbox_label
from .text import plural

__all__ = [
    "COMMAND_SIGILS",
    "DESCRIBERS",
    "Description",
    "Tone",
    "approval_verdict",
    "call_timing",
    "command_token",
    "describe",
    "duration_text",
    "end_lines",
    "option_value_name",
    "options_text",
    "sandbox_warning",
    "timing_text",
    "verdict_text",
]

Tone = Literal["plain", "strong", "dim", "good", "bad", "warn", "info", "accent"]
"""How a line should stand out; each view maps it to its own colours."""

_LEVELS = {"bad": "error", "warn": "warning"}
SUMMARY_LIMIT = 400  # characters of one input value in a one-line summary


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


def duration_text(ms: float) -> str:
    """`12 ms`, `1.4 s`, `3 min 5 s`."""
    if ms < 1_000:
        return f"{ms:.0f} ms"
    seconds = ms / 1_000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def timing_text(duration_ms: float | None, waited_ms: float | None = None,
                waited_for: str = "you") -> str:
    """How long a call ran and, apart, how long it waited for an answer: `0.4 s · waited 12 s
    for you`. `duration_ms` excludes the wait (see `ToolCallItem.work_ms`)."""
    parts = [] if duration_ms is None else [duration_text(max(0.0, duration_ms))]
    if waited_ms is not None and waited_ms >= 1:
        parts.append(f"waited {duration_text(waited_ms)} for {waited_for}")
    return " · ".join(parts)


def call_timing(call: Any, human: str = "you") -> str:
    """A tool call's timing (a fold `ToolCallItem`): how long it ran, the wait for an answer
    left out, and the wait apart when a human was asked (or nobody answered for a second or
    more): `0.4 s · waited 12 s for you`."""
    approval = call.approval
    waited = approval.waited_ms if approval is not None else None
    if waited is not None and not (approval.via == "human"
                                   or (approval.via == "auto" and waited >= 1_000)):
        waited = None  # answered by a rule at once: nobody waited
    return timing_text(call.work_ms, waited, human)


def verdict_text(state: str, via: str | None, remember: bool = False, *,
                 human: str = "you", scope: str | None = None, grant_id: str | None = None,
                 rule: str | None = None, error: str | None = None) -> str:
    """An approval's verdict in the words every view uses: `allowed by you`, `always allowed
    by you`, `allowed by a standing grant`, `denied automatically`, `awaiting approval`
    (`human` names who answered: a report read later says `a human`).

    What decided it, when the journal says (`approval_resolved`'s optional fields): a saved
    grant's scope and id (`allowed by a project grant g-3f9a2c1b (shell `git status`)`), a
    deny rule (`denied by a deny rule d-81b2c3e4 (user): shell `git push``), the policy rule
    (`allowed by the policy (ci.toml rule 2: …)`) or its error, and where a human's `[a]
    always` kept the grant (`always allowed by you (project g-…)`). Leave `grant_id` and
    `rule` out for a short badge."""
    if state == "pending":
        return "awaiting approval"
    verdict = "allowed" if state == "allowed" else "denied"
    ident = f" {grant_id}" if grant_id else ""
    if via == "grant":
        kind = f"a {scope} grant" if scope in ("project", "user") else "a standing grant"
        return f"{verdict} by {kind}{ident}" + (f" ({rule})" if rule else "")
    if via == "deny-rule":
        return (f"{verdict} by a deny rule{ident}" + (f" ({scope})" if scope else "")
                + (f": {rule}" if rule else ""))
    if via == "policy":
        if error:
            return f"{verdict}: the approval policy failed ({error})"
        return f"{verdict} by the policy" + (f" ({rule})" if rule else "")
    who = {"human": f"by {human}", "auto": "automatically"}.get(via or "",
                                                                f"({via})" if via else "")
    if remember and state == "allowed":
        verdict = "always allowed"
        if scope in ("project", "user"):
            who += f" ({scope}{ident})"
    return f"{verdict} {who}".strip()


def approval_verdict(approval: Any, *, human: str = "you", full: bool = True) -> str:
    """`verdict_text` of a fold `ApprovalView` (or an `approval_resolved` event, `allowed`
    for its state), with whatever it records of what decided; `full=False` leaves out the id
    and the rule (a row's badge)."""
    state = getattr(approval, "state", None) or (
        "allowed" if getattr(approval, "allowed", False) else "denied")
    return verdict_text(state, approval.via, approval.remember, human=human,
                        scope=getattr(approval, "scope", None),
                        grant_id=getattr(approval, "grant_id", None) if full else None,
                        rule=getattr(approval, "rule", None) if full else None,
                        error=getattr(approval, "error", None))


def _lines(text: str | None) -> list[str]:
    return [line.rstrip("\r") for line in (text or "").rstrip("\n").split("\n")] if text else []


def end_lines(status: str, error: str | None, stderr: list[str] | None = None) -> list[str]:
    """How a run's end reads, error first: `failed: <error>` (`completed` alone), then the rest
    of a multi-line error, then the agent's stderr tail unless the error already quotes it.
    The reply is never put in the error's place (see `cockpit.outcome`)."""
    error_lines = _lines(error)
    head = f"{status}: {error_lines[0]}" if error_lines else status
    rest = error_lines[1:]
    tail = [line for line in (stderr or []) if line.strip()]
    if tail and not (error and tail[-1].strip() in error):
        rest += ["last lines the agent wrote to stderr:", *(f"  {line}" for line in tail)]
    return [head, *rest]


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


def _agent_name(event: Any) -> str | None:
    agent = event.agent
    if agent is None:
        return None
    return f"{agent.title or agent.name} {agent.version}".strip() or None


# The describers, one per event type ---------------------------------------------------------

def sandbox_warning(event: Any) -> str | None:
    """What an `agent_start` says when its commands wanted a sandbox this machine lacks: why
    there is none, the fix, and what happens meanwhile (every view shows it at the start of the
    run: a TUI hides what was printed before it); None otherwise."""
    if getattr(event, "sandbox", None) != UNAVAILABLE:
        return None
    note = event.sandbox_note or "this machine has none"
    return (f"⚠ no sandbox: {note}. Until then every command asks before it runs; "
            "--sandbox off runs them without one on purpose.")


def _agent_start(e: Any) -> Description:
    where = sandbox_label(e.sandbox, e.sandbox_network)
    about = " · ".join(str(p) for p in (e.engine, _agent_name(e), e.model, e.cwd, where) if p)
    task = e.task or ("(none: the conversation was opened)" if e.resumed else "")
    warning = sandbox_warning(e)
    details = tuple(line for line in (about, warning) if line)
    return Description("start", task, "strong", "▶", "task: ", details)


def _agent_end(e: Any) -> Description:
    head, *rest = end_lines(e.status, e.error, e.stderr)
    tone: Tone = {"completed": "good", "cancelled": "warn"}.get(e.status, "bad")  # type: ignore
    return Description("end", head, tone, "■", "", tuple(rest))


def _turn_start(e: Any) -> Description:
    return Description("turn", f"{e.turn}", "dim", "─", "turn ")


def _turn_end(e: Any) -> Description:
    stop = f" ({e.stop_reason})" if e.stop_reason else ""
    return Description("turn end", f"{e.turn}{stop}", "dim", "─", "end of turn ")


def _phase_changed(e: Any) -> Description:
    text = f"{e.previous} → {e.phase}" if e.previous else e.phase
    return Description("phase", text, "info", "◆", "phase ")


def _declaration_required(e: Any) -> Description:
    return Description("declare!", e.reason, "warn", "!")


def _model_decision(e: Any) -> Description:
    what = e.tool or e.action
    text = f"{what} {_summary(e.tool_input)}".rstrip()
    if e.rationale:
        text += f" — {e.rationale}"
    return Description("decide", text, "accent", "→")


def _model_update(e: Any) -> Description:
    if e.channel == "thought":
        return Description("thinking", e.text, "dim", "∴")
    return Description("model", e.text, "strong", " ")


def _tool_start(e: Any) -> Description:
    summary = _summary(e.tool_input) or e.title or ""
    where = sandbox_label(e.sandbox, e.sandbox_network)  # a command: where it runs
    tier = f"tier {e.tier}" + (f", {where}" if where else "")
    return Description("tool ▶", f"{e.call_id} {e.tool} [{tier}] {summary}".rstrip(),
                       "plain", "▶")


def _tool_end(e: Any) -> Description:
    diff = e.diff
    detail = " · ".join(p for p in (e.error, _output_gist(e.tool, e.output),
                                    f"diff {diff_stats(diff)}" if diff else "") if p)
    took = f" {duration_text(e.duration_ms)}" if e.duration_ms is not None else ""
    text = f"{e.call_id} {e.tool}{took}" + (f": {detail}" if detail else "")
    return Description("tool ✔" if e.ok else "tool ✘", text, "good" if e.ok else "bad",
                       "✓" if e.ok else "✗")


def _approval_requested(e: Any) -> Description:
    grantable, why = e.grant_verdict  # the Session's verdict, shown as it is
    if grantable:
        always = f"[a] always would allow: {e.prefix}"
    else:
        always = "[a] always: cannot be granted" + (f": {why}" if why else "")
    what = input_line(e.tool_input) if isinstance(e.tool_input, dict) else ""
    text = (f"{e.approval_id} {e.tool} [tier {e.tier}] " + (f"{what} — " if what else "")
            + f"{e.reason} · {always}")
    return Description("ask ?", text, "warn", "?")


def _approval_resolved(e: Any) -> Description:
    verdict = approval_verdict(e)
    said = f" · reason: {e.reason}" if e.reason else ""  # the human's words, passed on
    # Decided without asking (a grant, a deny rule, the policy): say what was decided.
    what = input_line(e.tool_input) if isinstance(e.tool_input, dict) and e.tool_input else ""
    return Description("allowed" if e.allowed else "denied",
                       f"{e.approval_id} {e.tool}" + (f" {what}" if what else "")
                       + f": {verdict}" + said, "good" if e.allowed else "bad",
                       "✓" if e.allowed else "⊘")


def _question_asked(e: Any) -> Description:
    form = fields_text(e.fields)
    return Description("question", f"{e.question_id} {e.message}" + (f" — {form}" if form
                                                                     else ""),
                       "warn", "?", "the agent asks: ")


def _question_answered(e: Any) -> Description:
    label, tone = {"accept": ("answered", "good"), "decline": ("declined", "bad")}.get(
        e.action, ("cancelled", "warn"))
    said = answer_text((), e.action, e.values, via=e.via, reason=e.reason, human="a human")
    return Description(label, f"{e.question_id} {said}", tone, "→")  # type: ignore[arg-type]


COMMAND_SIGILS = "$@#!"
"""A command whose name starts with one of these (codex's `$skills`) is typed as it is named."""


def command_token(name: str) -> str:
    """What a human types for an agent's command: `/review`, or `$imagegen` as it is named."""
    return name if name[:1] in COMMAND_SIGILS else f"/{name}"


def _commands_available(e: Any) -> Description:
    names = ", ".join(command_token(c.name) for c in e.commands)
    return Description("commands", names or "(none)", "dim", "/", "the agent offers: ")


def _prompt_note(e: Any) -> Description:
    how = "while it worked" if e.delivery == "in_turn" else "with the task"
    return Description("note", e.text, "info", "✎", f"passed on to the agent {how}: ")


def _decision_error(e: Any) -> Description:
    details = (f"raw: {e.raw}",) if e.raw else ()
    return Description("error", f"malformed decision: {e.error}", "bad", "✗", "", details)


def _model_retry(e: Any) -> Description:
    return Description("retry", f"{e.error} — retry {e.attempt} of {e.max_attempts} in "
                       f"{e.delay_s:g} s", "warn", "↻")


def _model_usage(e: Any) -> Description:
    cost = f", ${e.cost_usd:.4f}" if e.cost_usd is not None else ""
    cached = e.cached_read_tokens
    cached_text = f" ({cached:,} cached)" if cached else ""
    model = f" ({e.model})" if e.model else ""
    return Description("usage", f"{e.input_tokens:,} in{cached_text} / {e.output_tokens:,} out "
                       f"tokens{cost}{model}", "dim")


def _checks_text(checks: list[Any]) -> str:
    return "; ".join(f"{c.name} ({c.command})" if c.command else c.name for c in checks)


def _plan_frozen(e: Any) -> Description:
    return Description("plan", _checks_text(e.checks) or "no checks", "info", "☰",
                       "verification plan: ")


def _verification_start(e: Any) -> Description:
    return Description("check ▶", e.name, "plain", "▶", "check ")


def _verification_end(e: Any) -> Description:
    took = f" {duration_text(e.duration_ms)}" if e.duration_ms is not None else ""
    last = _last_line(e.output)
    return Description("check ✔" if e.passed else "check ✘",
                       f"{e.name}{took}" + (f": {last}" if last else ""),
                       "good" if e.passed else "bad", "✓" if e.passed else "✗", "check ")


def _cancellation_observed(e: Any) -> Description:
    turn = f" (turn {e.turn})" if e.turn else ""
    return Description("stopping", f"{e.reason}{turn}", "warn", "⊘", "stopping: ")


def _task_escalated(e: Any) -> Description:
    target = f"to {e.target}: " if e.target else ""
    return Description("escalate", f"{target}{e.reason}", "warn", "⇧", "escalated ")


# An external agent's session ------------------------------------------------------------------

def option_value_name(option: Any) -> str:
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


def options_text(options: Any, *, skip: Any = ()) -> str:
    """`model Sonnet · reasoning effort High · fast mode off`: each of an agent's settings
    (`AgentOption`s) by its name and current value; those whose id is in `skip` left out."""
    left_out = set(skip)
    return " · ".join(f"{(o.name or o.id).strip().lower()} {option_value_name(o)}"
                      for o in options if o.id not in left_out)


_HISTORY_ROLES = {"user": "you", "agent": "agent", "thought": "agent, thinking"}


def _agent_config(e: Any) -> Description:
    return Description("settings", options_text(e.options) or "none", "info", "⚙", "settings: ")


def _session_info(e: Any) -> Description:
    return Description("title", e.title or "(none)", "info", "✎", "session title: ")


def _agent_notice(e: Any) -> Description:
    tone: Tone = {"warning": "warn", "error": "bad"}.get(e.level, "info")  # type: ignore
    return Description("note", e.text, tone, "!" if e.level != "info" else "·")


def _history_message(e: Any) -> Description:
    return Description("history", f"{_HISTORY_ROLES.get(e.role, e.role)}: {e.text}", "dim",
                       "⟲", "earlier, ")


def _history_tool(e: Any) -> Description:
    status = f" ({e.status})" if e.status else ""
    return Description("history", f"tool {e.call_id} {e.title or e.tool}{status}", "dim", "⟲",
                       "earlier, ")


DESCRIBERS: dict[str, Callable[[Any], Description]] = {
    "agent_start": _agent_start,
    "agent_end": _agent_end,
    "turn_start": _turn_start,
    "turn_end": _turn_end,
    "phase_changed": _phase_changed,
    "declaration_required": _declaration_required,
    "model_decision": _model_decision,
    "model_update": _model_update,
    "tool_start": _tool_start,
    "tool_end": _tool_end,
    "approval_requested": _approval_requested,
    "approval_resolved": _approval_resolved,
    "decision_error": _decision_error,
    "model_usage": _model_usage,
    "verification_plan_frozen": _plan_frozen,
    "verification_start": _verification_start,
    "verification_end": _verification_end,
    "cancellation_observed": _cancellation_observed,
    "task_escalated": _task_escalated,
    "model_retry": _model_retry,
    "question_asked": _question_asked,
    "question_answered": _question_answered,
    "commands_available": _commands_available,
    "prompt_note": _prompt_note,
    "agent_config": _agent_config,
    "session_info": _session_info,
    "agent_notice": _agent_notice,
    "history_message": _history_message,
    "history_tool": _history_tool,
}
"""Each event type's describer (a test checks every type in `EVENT_TYPES` has one)."""


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def describe(event: Any) -> Description:
    """How `event` reads. An event type without a describer (a newer writer's) reads as its
    type and its fields."""
    describer = DESCRIBERS.get(event.type)
    if describer is not None:
        return describer(event)
    fields = event.model_dump(exclude={"type", "session_id", "seq", "ts"})
    return Description(event.type, _compact(fields), "plain")
