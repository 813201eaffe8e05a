"""Every key binding of the cockpit, declared once.

Each `KeySpec` has an `id` (what a user keymap names, as `[keymap]` in `config.toml`), a default
key, the action it runs and the text the footer and the `?` help screen show. Widgets and apps
take their `BINDINGS` from `bindings(scope)`, and the help screen lists `KEYS` with the user's
keymap applied, so the footer, the help and a remapping can never disagree.

Another app (the replay viewer) adds its own keys with `register(KeySpec(..., scope="replay"))`
and builds its `BINDINGS` with `bindings("replay")`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from textual.binding import Binding

__all__ = ["KEYS", "KeySpec", "bindings", "effective_key", "help_rows", "key_label",
           "register"]


@dataclass(frozen=True)
class KeySpec:
    """One binding: `id` is stable (keymaps name it), `key` is the default key."""

    id: str
    key: str
    action: str
    description: str
    scope: str
    show: bool = True
    priority: bool = False
    help: str = ""
    key_display: str | None = None


KEYS: list[KeySpec] = [
    # Live run: approvals and control (app scope: they work whatever has focus).
    KeySpec("approve", "y", "approve", "allow once", "app",
            help="Allow the oldest pending tool call, this once."),
    KeySpec("approve-always", "a", "approve_always", "always allow", "app",
            help="Allow it and grant calls with the same program prefix: then choose how "
            "long (s, p or u; a again = this session)."),
    KeySpec("deny", "n", "deny", "deny", "app", help="Deny the oldest pending tool call."),
    KeySpec("grant-session", "s", "grant_scope('session')", "this session", "app",
            help="After a: keep the grant for this session (forgotten when cockpit quits)."),
    KeySpec("grant-project", "p", "grant_scope('project')", "this project", "app",
            help="After a: save the grant for this project (its real path) in your config "
            "directory, never in the workspace."),
    KeySpec("grant-user", "u", "grant_scope('user')", "every project", "app",
            help="After a: save the grant for every project (your user scope)."),
    KeySpec("grant-back", "escape", "scope_back", "back", "app", key_display="esc",
            help="After a: back to the approval, nothing granted."),
    KeySpec("cancel", "escape", "cancel_run", "cancel run", "app", key_display="esc",
            help="Cancel the run (press twice within 2 seconds)."),
    KeySpec("quit", "ctrl+q", "quit_cockpit", "quit", "app", priority=True,
            help="Quit (asks first while the run is live; quitting cancels it cleanly)."),
    KeySpec("help", "question_mark", "help", "help", "app", key_display="?",
            help="Show this help."),
    KeySpec("grants", "g", "grants", "grants", "app",
            help="Every grant and deny rule in force, with its scope and last use; revoke one."),
    # Transcript: moving through items.
    KeySpec("item-up", "up", "cursor_up", "previous item", "transcript", show=False,
            help="Select the previous transcript item."),
    KeySpec("item-down", "down", "cursor_down", "next item", "transcript", show=False,
            help="Select the next transcript item."),
    KeySpec("item-first", "home", "cursor_first", "first item", "transcript", show=False,
            help="Select the first item."),
    KeySpec("item-last", "end", "cursor_last", "follow", "transcript", show=False,
            help="Select the last item and follow the run."),
    KeySpec("page-up", "pageup", "page_up", "page up", "transcript", show=False,
            help="Scroll up a page."),
    KeySpec("page-down", "pagedown", "page_down", "page down", "transcript", show=False,
            help="Scroll down a page."),
    KeySpec("expand", "enter", "expand", "expand", "transcript",
            help="Expand or collapse the item; long output opens in a pager."),
    KeySpec("inspect", "i", "inspect", "raw events", "transcript",
            help="Show the raw events behind the selected item."),
    # Pager and inspector screens.
    KeySpec("close", "escape", "close", "close", "pager", key_display="esc",
            help="Close the pager or inspector."),
    KeySpec("close-q", "q", "close", "close", "pager", show=False, help="Close."),
    # The grants screen.
    KeySpec("revoke", "delete", "revoke", "revoke", "grants", key_display="del",
            help="Revoke the selected grant or deny rule (saved ones are removed from their "
            "file)."),
    KeySpec("grants-close", "escape", "close", "close", "grants", key_display="esc",
            help="Close the grants screen."),
    KeySpec("grants-close-q", "q", "close", "close", "grants", show=False, help="Close."),
]

_SCOPE_TITLES = {"app": "Run", "transcript": "Transcript", "pager": "Pager and inspector",
                 "grants": "Grants screen"}


def register(*specs: KeySpec, title: str | None = None) -> None:
    """Add bindings for another screen or app (ids must be new)."""
    known = {spec.id for spec in KEYS}
    for spec in specs:
        if spec.id in known:
            raise ValueError(f"duplicate key binding id {spec.id!r}")
        KEYS.append(spec)
        known.add(spec.id)
        if title is not None:
            _SCOPE_TITLES.setdefault(spec.scope, title)


def bindings(scope: str) -> list[Binding]:
    """The Textual `Binding`s of one scope, each carrying its spec's id."""
    return [
        Binding(spec.key, spec.action, spec.description, show=spec.show, id=spec.id,
                priority=spec.priority, key_display=spec.key_display, tooltip=spec.help)
        for spec in KEYS if spec.scope == scope
    ]


def effective_key(spec: KeySpec, keymap: Mapping[str, str] | None = None) -> str:
    """The key that runs `spec` once a user keymap is applied, as shown to a human."""
    if keymap and spec.id in keymap:
        return keymap[spec.id]
    return spec.key_display or spec.key


def key_label(app: object, binding_id: str) -> str:
    """The key that runs binding `binding_id` in `app`, the user's keymap (`app.config`)
    applied: what a hint such as "press i to …" must name."""
    spec = next(spec for spec in KEYS if spec.id == binding_id)
    return effective_key(spec, getattr(getattr(app, "config", None), "keymap", None))


def help_rows(scopes: Iterable[str] | None = None,
              keymap: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
    """(section, key, what it does) rows for the help screen, in declaration order."""
    wanted = list(scopes) if scopes is not None else list(_SCOPE_TITLES)
    rows: list[tuple[str, str, str]] = []
    for scope in wanted:
        for spec in KEYS:
            if spec.scope == scope:
                rows.append((_SCOPE_TITLES.get(scope, scope), effective_key(spec, keymap),
                             spec.help or spec.description))
    return rows
