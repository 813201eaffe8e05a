"""The `cockpit` command line: the typer app, and every command registered on it by name.

Each command's docstring is its help text; each lives in the module of its family (`run`,
`conversations`, `catalogue`, `journals`, `verify`, `grants`). Every one of those modules is
light at import, so `cockpit --help` and `cockpit version` load neither Textual nor the event
models: a command imports what it needs when it runs.
"""

from __future__ import annotations

import sys
from contextlib import suppress
from typing import Annotated

import typer

from cockpit.cli import (
    attach,
    catalogue,
    conversations,
    grants,
    host,
    journals,
    rewind,
    run,
    verify,
    version_line,
)
from cockpit.cli.options import bare_flags_in_help
from cockpit.cli.preflight import new_command

__all__ = ["app", "main", "safe_output", "version"]

bare_flags_in_help()  # `--headless`, not `--headless <bool>`, in every command's --help

app = typer.Typer(
    name="cockpit",
    help="A terminal cockpit for AI agent runs: watch every event live, approve tool calls by "
    "keypress, and replay the run's journal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def version() -> None:
    """Print the cockpit version."""
    typer.echo(version_line())


def _version_option(given: bool) -> None:
    if given:
        version()
        raise typer.Exit()


@app.callback()
def _options(
    show_version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_version_option,
        help="Print the cockpit version (as `cockpit version` does) and exit.")] = False,
) -> None:
    """The options before any command (`--version`)."""
    new_command()


# The commands, in the order `cockpit --help` lists them.
app.command()(version)
app.command()(run.demo)
app.command()(run.run)
app.command()(catalogue.agents)
app.command()(catalogue.models)
app.command(help=journals.REPLAY_HELP)(journals.replay)
app.command()(journals.journals)
app.command(help=journals.EXPORT_HELP)(journals.export)
app.command(help=verify.VERIFY_HELP)(verify.verify)
app.command()(rewind.checkpoints)
app.command()(rewind.rewind)
app.command()(conversations.sessions)
app.command()(conversations.resume)

grants_app = typer.Typer(name="grants", help=grants.HELP, no_args_is_help=True)
grants_app.command("list")(grants.list_grants)
grants_app.command()(grants.revoke)
grants_app.command()(grants.deny)
grants_app.command()(grants.clear)
app.add_typer(grants_app)

app.command()(host.ps)
app.command()(attach.attach)
host_app = typer.Typer(name="host", help=host.HOST_HELP, invoke_without_command=True)
host_app.callback()(host.host)
host_app.command("status")(host.host_status)
host_app.command("stop")(host.host_stop)
app.add_typer(host_app)


def safe_output() -> None:
    """Make stdout and stderr replace a character their encoding cannot show (`?`) rather than
    raise: `PYTHONIOENCODING=ascii`, a C locale, a lone surrogate in an agent's text."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") == "strict":
            with suppress(ValueError, OSError):  # closed or detached: nothing to protect
                reconfigure(errors="replace")


def main() -> None:
    """Run the typer app on the command line (the console script, `cockpit.cli.entry`, answers
    `version` before this, without typer)."""
    safe_output()
    app()
