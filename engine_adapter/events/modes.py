"""The cockpit's permission modes, and the event of a change of mode.

A mode says what may run without the human's yes, for every engine alike (the Session's gate
enforces it, see `engine_adapter.grants.modes`):

- `ask`: every edit and every command asks, with its diff (no standing grant answers);
- `accept-edits`: edits inside the workspace run, commands ask (the default);
- `auto`: what the sandbox contains runs unasked; tier 4 still asks, and without an active
  sandbox it asks as `accept-edits` does;
- `plan`: read-only: no edit and no command runs; the agent is told.

These are the cockpit's own modes; an external agent may have modes of its own (its `modes` in
`agent_start`), which the cockpit maps to where it can (`engine_adapter.engines.acp`).
"""

from __future__ import annotations

from typing import Literal, get_args

from engine_adapter.events.base import BaseEvent

__all__ = ["DEFAULT_MODE", "MODES", "ModeChanged", "PermissionMode", "mode_label", "next_mode",
           "parse_mode"]

PermissionMode = Literal["ask", "accept-edits", "auto", "plan"]
"""The cockpit's permission modes, in the order the mode key cycles through them."""

MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)
DEFAULT_MODE: PermissionMode = "accept-edits"

_LABELS: dict[str, str] = {"ask": "ask", "accept-edits": "accept edits", "auto": "auto",
                           "plan": "plan"}
_SPELLINGS: dict[str, PermissionMode] = {
    "ask": "ask", "accept-edits": "accept-edits", "accept_edits": "accept-edits",
    "acceptedits": "accept-edits", "accept edits": "accept-edits", "auto": "auto",
    "plan": "plan"}


def parse_mode(text: str | None) -> PermissionMode | None:
    """The cockpit mode `text` names (`accept-edits`, `accept_edits` and `acceptEdits` alike,
    any case), or None: not one of the cockpit's (an agent's own mode id, say)."""
    if not text:
        return None
    return _SPELLINGS.get(text.strip().casefold())


def mode_label(mode: str | None) -> str:
    """A mode in words for the status line and the transcript ("accept edits")."""
    return _LABELS.get(mode or "", mode or "")


def next_mode(mode: str | None) -> PermissionMode:
    """The mode after `mode` in the mode key's cycle (ask → accept edits → auto → plan → ask)."""
    found = parse_mode(mode) or DEFAULT_MODE
    return MODES[(MODES.index(found) + 1) % len(MODES)]


class ModeChanged(BaseEvent):
    """The cockpit's permission mode is now `mode` (`previous`: the one before, None at the
    run's start). `source` says who changed it ("start": the mode the run began in, "human": the
    mode key, or an embedder's word); `note` what it means here when that differs from the
    mode's name ("no sandbox is active: auto asks as accept edits does"). An external agent's
    own mode, where the cockpit maps it, shows as the agent's `phase_changed`."""

    type: Literal["mode_changed"] = "mode_changed"
    mode: PermissionMode
    previous: PermissionMode | None = None
    source: str | None = None
    note: str | None = None
