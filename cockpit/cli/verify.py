"""`cockpit verify JOURNAL`: whether a journal was edited after its run, and where.

Light at import (`cockpit --help` loads it): the checker is imported when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

__all__ = ["EXIT_CHANGED", "EXIT_INTACT", "EXIT_UNCHAINED", "EXIT_UNREADABLE", "VERIFY_HELP",
           "run_verify", "verify"]

EXIT_INTACT = 0
"""Every line follows the one before it (the run may still have ended early: the output says)."""
EXIT_CHANGED = 1
"""A line was changed, removed, inserted or moved: the output names the first one."""
EXIT_UNREADABLE = 2
"""No such file, a directory, it cannot be read, or it is another tool's session file."""
EXIT_UNCHAINED = 3
"""Some or all lines carry no chain (written before journals were chained): nothing to check."""

VERIFY_HELP = (
    "Check that a journal was not edited after its run: each line carries a hash of the one "
    "before it, so a line changed, removed, inserted or moved is found and named. Exit codes: "
    "0 intact, 1 changed (the first changed line is printed), 2 cannot read, 3 unchained "
    "(written before journals were chained, in whole or in part). The chain has no secret: "
    "someone who rewrites the whole file and recomputes every hash is not detected, and lines "
    "cut off the end read as a run that stopped early.")
"""The help of `cockpit verify`."""


def verify(
    journal: str = typer.Argument(..., help="The journal file (.jsonl) to check."),
) -> None:
    """Check a journal's chain (its help text, one paragraph: `VERIFY_HELP`)."""
    raise typer.Exit(run_verify(journal))


def run_verify(path: str) -> int:
    """Print the verdict on `path` (one line: stdout, or stderr for a changed or unreadable
    journal) and return the exit code."""
    from engine_adapter.journal import check_file, detect_foreign, writer_alive

    file = Path(path).expanduser()
    if not file.exists():
        return _fail(f"no journal at {path!r}; check the path, or run `cockpit journals` to "
                     "list recent ones")
    if file.is_dir():
        return _fail(f"{path!r} is a directory; give a journal file (.jsonl)")
    foreign = detect_foreign(file)
    if foreign is not None:
        return _fail(foreign.message(repr(path)) + " (it has no cockpit chain to check)")
    try:
        verdict = check_file(file)
    except OSError as exc:
        return _fail(f"cannot read {path!r}: {exc.strerror or exc}")
    if verdict.tampered:
        print(f"{path}: {verdict.summary()}", file=sys.stderr)
        return EXIT_CHANGED
    if verdict.status == "empty":
        return _fail(f"{path!r} is empty: nothing to check")
    summary = verdict.summary()
    if not verdict.ended and verdict.status != "unchained" and writer_alive(file):
        summary += " (a run is writing it now)"
    print(f"{path}: {summary}")
    return EXIT_INTACT if verdict.status == "intact" else EXIT_UNCHAINED


def _fail(message: str) -> int:
    print(f"cockpit: {message}", file=sys.stderr)
    return EXIT_UNREADABLE
