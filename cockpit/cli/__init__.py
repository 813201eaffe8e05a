"""The `cockpit` command line (typer): every command registered by name in `main`.

- `main`: the typer app, the registration of every command, `version`.
- `run`: `cockpit demo` and `cockpit run`, how a run is presented (the TUI or the headless
  lines) and how it ends (its exit code); `preflight`: what a command does before it runs (its
  options checked and read, the one handler of setup errors); `options`: the options of the
  commands that run a task, declared once.
- `conversations`: `cockpit sessions` and `cockpit resume`; `catalogue`: `cockpit agents` and
  `cockpit models`; `journals`: `cockpit replay`, `cockpit journals` and `cockpit export`;
  `grants`: `cockpit grants …`; `rewind`: `cockpit checkpoints` and `cockpit rewind`.

`entry()` here is the console script (and `python -m cockpit`): `cockpit version` and
`cockpit --version` answer before typer is imported, since typer's dispatch of any command
costs more than the whole answer (its help option is coerced through pydantic); every other
command line goes to the typer app.
"""

from __future__ import annotations

import sys

__all__ = ["entry", "version_line"]


def version_line() -> str:
    """What `cockpit version` and `cockpit --version` print."""
    from cockpit import __version__

    return f"cockpit {__version__}"


def entry() -> None:
    """The `cockpit` console script. (Not named `main`: that is the typer app's module.)"""
    if sys.argv[1:] in (["version"], ["--version"]):
        print(version_line())
        return
    from cockpit.cli.main import main as run_app

    run_app()
