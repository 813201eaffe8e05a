"""What a permission mode (`engine_adapter.events.modes`) decides at the gate, for any engine.

- `plan` refuses every gated call that could write or run something: only the read-only kinds
  (`PLAN_ASKS`: an agent's read, search, fetch, think, or its request to leave plan mode) still
  reach the human. Everything else is denied at once, with the words the agent is told.
- `ask` lets no standing grant and no policy's allow answer: the human sees every call.
- `auto` allows, unasked, a call of tier 3 or lower that the run's sandbox contains (see
  `auto_refusal`), when a human is present; tier 4, a change to the verification plan and
  anything uncontained ask, and say why.
- `accept-edits` and `auto` allow, unasked, an edit of tier 2 (`edit_runs`): a plain edit inside
  the workspace, which the engine judged so (the built-in's tier-2 edits never reach the gate in
  these modes; an ACP agent's `fs/write_text_file` does, so the journal says the mode ran it).
  Whatever is more than a plain edit — a file that runs later, a file the human was asked about
  this turn — comes at tier 3 or 4 and asks as before.

A mode never answers what deny rules or a policy's deny refuse, and the unattended rules stay as
they are: `auto` widens nothing when nobody watches.
"""

from __future__ import annotations

from engine_adapter.events import mode_label
from engine_adapter.shell import EDIT

__all__ = ["AUTO_ASKS", "EDIT_RULE", "EDIT_TOOLS", "PLAN_ASKS", "PLAN_REFUSAL",
           "auto_refusal", "edit_runs", "mode_refusal", "mode_rule"]

PLAN_ASKS = frozenset({"read", "search", "fetch", "think", "switch_mode"})
"""Tools (an ACP agent's tool kinds) plan mode still lets the human answer: they read, or ask
to leave plan mode. Every other gated call — an edit, a command, a plan that runs checks, a
switch to editing — is denied."""

PLAN_REFUSAL = ("plan mode: the cockpit is read-only, so nothing is written or run; describe "
                "the change you would make instead (the human switches the mode to let it run)")
"""What the agent is told when plan mode denies a call (in the denial and the tool result)."""


def mode_refusal(mode: str, tool: str) -> str | None:
    """Why `mode` denies a call of `tool` without asking (plan mode), or None."""
    if mode == "plan" and tool not in PLAN_ASKS:
        return PLAN_REFUSAL
    return None


EDIT_TOOLS = frozenset({"edit", "write_file"})
"""The tools that edit a file: the built-in's `write_file` and `edit`, and the `edit` an ACP
agent's client-side write is gated as."""

EDIT_RULE = "an edit inside the workspace"
"""How the journal says why accept-edits (or auto) let an edit run: `accept edits mode: …`."""


def edit_runs(mode: str, tool: str, tier: int) -> bool:
    """Whether `mode` lets an edit run without asking: accept-edits and auto, for a tier-2 call
    of an edit tool (`EDIT_TOOLS`; `shell.EDIT`: a plain edit inside the workspace, as the engine
    judged it). An ACP agent's own `edit` permission is never this low (its kind is tier 3: the
    agent writes it itself, past the cockpit's checks). Ask asks and plan denies."""
    return mode in ("accept-edits", "auto") and tool in EDIT_TOOLS and tier == EDIT


AUTO_ASKS = frozenset({"alter_verification"})
"""Tools auto mode always asks about: changing a frozen verification plan is the human's call
(no grant covers it either), whatever the sandbox contains."""


def auto_refusal(*, tool: str, tier: int, run_sandboxed: bool, sandboxed: bool | None,
                 auto_max_tier: int | None, attended: bool) -> str | None:
    """Why auto mode asks for a call rather than allowing it (None: it runs unasked).

    Contained means: the run's sandbox is active (its `agent_start` said so), the call's
    commands run in it (`sandboxed` is not False: True, or no command), and, for an external
    agent's own tool, the agent itself runs sandboxed (`auto_max_tier`, as for
    `--auto-approve`: a cap below the tier means it does not)."""
    if not attended:
        return "nobody is watching: the unattended rules decide"
    if tier >= 4:
        return "tier 4 always asks"
    if tool in AUTO_ASKS:
        return "a change to the verification plan always asks"
    if not run_sandboxed:
        return "no sandbox is active, so auto asks as accept edits does"
    if sandboxed is False:
        return "it would run outside the sandbox"
    if auto_max_tier is not None and tier > auto_max_tier:
        return "the agent runs it itself, outside the sandbox"
    return None


def mode_rule(mode: str, detail: str) -> str:
    """How the journal names what a mode decided: `plan mode: …`."""
    return f"{mode_label(mode)} mode: {detail}"
