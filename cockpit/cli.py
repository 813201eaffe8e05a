"""The `cockpit` command line (a typer app). Each command's docstring is its help text."""

from __future__ import annotations

import typer

from . import __version__

app = typer.Typer(
    name="cockpit",
    help="A terminal cockpit for AI agent runs: watch every event live, approve tool calls by "
    "keypress, and replay the run's journal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def version() -> None:
    """Print the cockpit version."""
    typer.echo(f"cockpit {__version__}")


def main() -> None:
    """Console-script entry point."""
    app()
