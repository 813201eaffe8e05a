"""How the steps of a task read: the run's start and end, turns, phases, the model's decisions,
text, usage and retries, tool calls and their approvals, verification, cancel and escalation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine_adapter.description import Description, Tone
from engine_adapter.diff_summary import diff_stats
from engine_adapter.input_fields import input_line
from engine_adapter.sandbox import UNAVAILABLE, sandbox_label
from engine_adapter.text import plural
from engine_adapter.wording import approval_verdict, duration_text, end_lines

__all__ = ["STEP_DESCRIBERS", "SUMMARY_LIMIT", "sandbox_warning"]

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
    # (≡, not U+2630: Unicode 16 made that one wide, so Rich draws it two cells and most
    # terminals one, which shifts the row and leaves a stale cell at its end)
    return Description("plan", _checks_text(e.checks) or "no checks", "info", "≡",
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


STEP_DESCRIBERS: dict[str, Callable[[Any], Description]] = {
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
}
"""The describer of each event type of a task's steps."""
