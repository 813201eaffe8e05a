"""`cockpit grants …`: list, revoke, deny and clear saved grants from the command line (the
commands, registered under `grants` in `cockpit.cli.main`).

Saved grants live in the user's config directory (`cockpit.paths.grants_dir()`), never in a
project: `user.toml` for every project, `projects/…` for one. Session grants live only inside a
running cockpit (its grants screen, key `g`, lists and revokes them).

Light at import (`cockpit --help` loads it): the grant store is imported by each command.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, cast

import typer

if TYPE_CHECKING:
    from engine_adapter.grants import GrantEntry, GrantStore, Scope

__all__ = ["HELP", "clear", "deny", "list_grants", "listing", "revoke"]

HELP = ("Saved grants and deny rules: what `a` (always allow) kept in the project or user "
        "scope. They live in your config directory, never in a project.")
"""The help of `cockpit grants`."""

CwdOption = Annotated[Path | None, typer.Option(
    "--cwd", metavar="DIR", help="The project (default: the current directory).")]


def _store(cwd: Path | None) -> GrantStore:
    from cockpit.paths import grants_dir
    from engine_adapter.grants import GrantStore

    project = os.path.abspath(cwd) if cwd is not None else os.getcwd()
    return GrantStore(grants_dir(), project=project, workspace=project)


def _scope(value: str | None, *, allowed: tuple[str, ...] | None = None) -> Scope | None:
    """The scope `--scope` names (one of `allowed`, default every scope), or exit 2."""
    from engine_adapter.grants import SCOPES

    if value is None:
        return None
    allowed = SCOPES if allowed is None else allowed
    if value not in allowed:
        _fail(f"--scope {value!r}: one of {', '.join(allowed)}")
    return cast("Scope", value)  # (one of `allowed`, the scopes: checked above)


def _fail(message: str) -> NoReturn:
    typer.echo(f"cockpit: error: {message}", err=True)
    raise typer.Exit(2)


def _warn_problems(store: GrantStore) -> None:
    for problem in store.problems:
        typer.echo(f"cockpit: warning: {problem}", err=True)


def _when(entry: GrantEntry) -> str:
    return entry.last_used.astimezone().strftime("%Y-%m-%d %H:%M") if entry.last_used \
        else "never"


def _visible(text: str, limit: int = 80) -> str:
    shown = "".join(ch if ch.isprintable() else "?" for ch in text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def listing(entries: list[GrantEntry]) -> list[str]:
    """The lines of `cockpit grants list`: a header, then one entry a line."""
    rows = [("ID", "SCOPE", "KIND", "TOOL", "PREFIX", "MAX TIER", "LAST USED", "NOTE")]
    rows += [(e.key, e.scope, e.kind, _visible(e.tool, 40), _visible(e.prefix),
              str(e.max_tier) if e.max_tier is not None else "-", _when(e),
              _visible(e.note, 60)) for e in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
            + "  " + row[-1] for row in rows]


def list_grants(
    scope: Annotated[str | None, typer.Option(
        "--scope", help="Only this scope: project or user (session grants live in a running "
        "cockpit: press g there).")] = None,
    cwd: CwdOption = None,
) -> None:
    """List saved grants and deny rules in force here: ID, scope, tool, prefix, last use."""
    from engine_adapter.grants.gate import ApprovalGate

    chosen = _scope(scope)
    store = _store(cwd)
    _warn_problems(store)
    if chosen == "session":
        typer.echo("Session grants live only in a running cockpit: press g there to see and "
                   "revoke them.")
        return
    said = set(store.problems)  # one line per reason (grants all off: one reason for both)
    for saved in ("project", "user"):
        why = store.unavailable(saved)
        if why and chosen in (None, saved) and why not in said:
            said.add(why)
            typer.echo(f"cockpit: note: {why}", err=True)
    entries = [e for e in ApprovalGate([], store).entries() if chosen in (None, e.scope)]
    if not entries:
        typer.echo("No saved grants or deny rules here" + (f" in the {chosen} scope"
                                                           if chosen else "") + ".")
        return
    for line in listing(entries):
        typer.echo(line.rstrip())


def revoke(
    entry_id: Annotated[str, typer.Argument(metavar="ID", help="The id `grants list` shows.")],
    cwd: CwdOption = None,
) -> None:
    """Remove one saved grant or deny rule by its id (from this project's file or yours)."""
    from engine_adapter.grants import GrantFileError

    store = _store(cwd)
    try:
        entry = store.revoke(entry_id)
    except GrantFileError as exc:
        _fail(str(exc))
    kind = "grant" if entry.kind == "allow" else "deny rule"
    typer.echo(f"revoked {entry.scope} {kind} {entry.id}: {_visible(entry.tool, 40)} "
               f"`{_visible(entry.prefix)}`")


def deny(
    tool: Annotated[str, typer.Argument(help="The tool (shell, …), or * for every tool.")],
    prefix: Annotated[str, typer.Argument(help='The program prefix, quoted: "git push".')],
    scope: Annotated[str, typer.Option(
        "--scope", help="user (every project, the default) or project (this one).")] = "user",
    note: Annotated[str, typer.Option("--note", help="Why, for whoever reads the list.")] = "",
    cwd: CwdOption = None,
) -> None:
    """Deny a program prefix at once, whatever a grant, policy or --auto-approve would allow.

    It matches any command the call may run that starts with the prefix: in a chain, in
    `bash -c '…'`, after sudo/env/xargs, at any path (`/usr/bin/git push`)."""
    from engine_adapter.grants import GrantFileError

    chosen = _scope(scope, allowed=("project", "user"))
    assert chosen is not None
    store = _store(cwd)
    try:
        rule = store.add_deny(chosen, tool, prefix, note)
    except GrantFileError as exc:
        _fail(str(exc))
    where = "every project" if chosen == "user" else f"project {store.project}"
    typer.echo(f"denied {_visible(tool, 40)} `{_visible(rule.prefix)}` in {where} "
               f"(id {rule.id}; `cockpit grants revoke {rule.id}` lifts it)")


def clear(
    scope: Annotated[str, typer.Option(
        "--scope", help="project (this one) or user (every project).")],
    cwd: CwdOption = None,
) -> None:
    """Remove every saved allow grant of a scope (deny rules stay: revoke them by id)."""
    from engine_adapter.grants import GrantFileError

    chosen = _scope(scope, allowed=("project", "user"))
    assert chosen is not None
    store = _store(cwd)
    try:
        count = store.clear(chosen)
    except GrantFileError as exc:
        _fail(str(exc))
    typer.echo(f"removed {count} {chosen} grant{'s' if count != 1 else ''}")
