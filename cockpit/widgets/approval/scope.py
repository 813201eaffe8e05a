"""The approval bar's scope step: after `a`, what each scope would allow, one line a scope.

`a` does not grant at once: it offers the scope — `s` this session, `p` this project, `u` every
project (keys from `cockpit.keys`, the user's keymap applied) — each line saying exactly what it
would allow ("always allow shell `git status …` in ~/src/app"), or why that scope is not
available for this run. The live app decides which scopes are available (the Session's gate);
this module only words them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rich.text import Text

from cockpit.keys import key_label
from cockpit.styles import Palette
from cockpit.widgets.safe_text import clean_line
from engine_adapter.lookalikes import lookalike_marks, marks_line
from engine_adapter.view import ApprovalView

__all__ = ["ScopeChoice", "always_text", "project_label", "scope_hint", "scope_keys",
           "scope_where"]


def always_text(approval: ApprovalView, where: str | None = "in this session", *,
                warn: bool = True) -> str:
    """What `[a] always` would do for this call, from the verdict its request carried:
    "always allow shell `git status …` in this session" (`where`: "in ~/src/app", …; None:
    left out) or "cannot be granted: why". A prefix with look-alike characters says so
    (`warn`): the grant allows the look-alike program, not the one it looks like."""
    if approval.grantable:
        odd = lookalike_marks(approval.tool) + lookalike_marks(approval.prefix)
        note = f" — ⚠ {clean_line(marks_line(odd), 300)}" if odd and warn else ""
        return (f"always allow {clean_line(approval.tool, 40)} "
                f"`{clean_line(approval.prefix, 80)} …`" + (f" {where}" if where else "")
                + note)
    why = approval.ungrantable_reason
    return "cannot be granted" + (f": {clean_line(why, 300)}" if why else "")


@dataclass(frozen=True)
class ScopeChoice:
    """The scope step for one approval: the project as shown ("~/src/app", None: no project)
    and, per scope, why it is not available (absent: it is)."""

    approval_id: str
    project: str | None
    unavailable: dict[str, str] = field(default_factory=dict)


def project_label(path: str | None) -> str | None:
    """A project path as the bar shows it: the home directory as `~`."""
    if not path:
        return None
    home = os.path.expanduser("~")
    if home not in ("~", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


def scope_where(scope: str, project: str | None) -> str:
    """How a scope ends the sentence: "in this session", "in ~/src/app", "in every project"."""
    if scope == "project":
        return f"in {clean_line(project, 200)}" if project else "in this project"
    if scope == "user":
        return "in every project"
    return "in this session"


def scope_hint(app: object) -> str:
    """What follows `[a] always allow …` before the step: which keys choose the scope."""
    s, p, u = (key_label(app, f"grant-{scope}") for scope in ("session", "project", "user"))
    return f"(then {s} session · {p} project · {u} everywhere)"


_NOTES = {"session": "until cockpit quits", "project": "saved", "user": "saved"}


def scope_keys(approval: ApprovalView, choice: ScopeChoice, app: object,
               palette: Palette) -> Text:
    """The keys part of the bar during the scope step: one line a scope, then the way out."""
    text = Text()
    text.append(f"{always_text(approval, where=None)}, where?", palette.warning)
    for scope in ("session", "project", "user"):
        key = key_label(app, f"grant-{scope}")
        why = choice.unavailable.get(scope)
        text.append("\n")
        if why is None:
            text.append(f"[{key}]", palette.success)
            where = scope_where(scope, choice.project)
            text.append(f" {always_text(approval, where=where, warn=False)}")
            text.append(f"  ({_NOTES[scope]})", palette.dim)
        else:
            text.append(f"[{key}] {scope_where(scope, choice.project)}: unavailable — "
                        f"{clean_line(why, 300)}", palette.dim)
    once, deny = key_label(app, "approve"), key_label(app, "deny")
    back = key_label(app, "grant-back")
    text.append(f"\n[{once}]", palette.success)
    text.append(" allow once   ")
    text.append(f"[{deny}]", palette.error)
    text.append(" deny   ")
    text.append(f"[{back}]", palette.accent)
    text.append(" back")
    return text
