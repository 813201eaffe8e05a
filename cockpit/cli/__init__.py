"""The `cockpit` command line (typer): every command registered by name in `main`.

- `main`: the typer app and its commands; `run`: `cockpit demo` and `cockpit run` and how a
  run is presented (the TUI or the headless lines) and ends (its exit code).
- `options`: the options of the commands that run a task, declared once.
- `conversations`: `cockpit sessions` and `cockpit resume`; `journals`: `cockpit replay`,
  `cockpit journals` and `cockpit export`; `grants`: `cockpit grants …`.
"""

from cockpit.cli.main import main

__all__ = ["main"]
