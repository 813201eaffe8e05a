"""`cockpit checkpoints [JOURNAL]` and `cockpit rewind [JOURNAL] --to N | --undo`: a run's
workspace checkpoints, and putting the workspace back to one.

Both read the workspace and the checkpoints from the journal, so they work from any folder;
without a JOURNAL, the most recent run's. A failure is one line on stderr and exit 2, with
nothing changed. A rewind is journaled (`workspace_rewound`, appended to the run's journal and
its chain) and is itself undoable (`--undo`). With a terminal on stdin, a rewind lists what it
would do and asks first (`--yes` does not ask); with none, it acts without asking.

Light at import (`cockpit --help` loads it).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer

__all__ = ["EXIT_REFUSED", "checkpoints", "rewind", "run_checkpoints", "run_rewind"]

EXIT_REFUSED = 2
"""No such journal, no checkpoints, an unknown turn, the workspace gone, a damaged store."""

class _Refused(Exception):
    """One line for the user; exit 2."""


def checkpoints(
    journal: str | None = typer.Argument(
        None, help="The run's journal (.jsonl); default: the most recent run's."),
) -> None:
    """List a run's workspace checkpoints, one row a turn: `turn N`, when it was taken, and
    the files changed since it (+added ~modified -deleted), what `cockpit rewind --to N` would
    undo."""
    raise typer.Exit(run_checkpoints(journal))


def rewind(
    journal: str | None = typer.Argument(
        None, help="The run's journal (.jsonl); default: the most recent run's."),
    to: int | None = typer.Option(
        None, "--to", help="Restore the workspace to the start of turn N (see `cockpit "
        "checkpoints`)."),
    undo: bool = typer.Option(False, "--undo", help="Put back what the latest rewind "
                              "replaced."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would change; change "
                                 "nothing."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask, even on a terminal."),
) -> None:
    """Restore the run's workspace to the start of a turn: files the run changed after it are
    written back, files it created removed, files it deleted brought back; a file someone else
    changed since the run is left alone and listed. Prints one path a line. Never touches
    `.git`."""
    raise typer.Exit(run_rewind(journal, to=to, undo=undo, dry_run=dry_run, yes=yes))


def _fail(message: str) -> int:
    print(f"cockpit: {message}", file=sys.stderr)
    return EXIT_REFUSED


def _journal(given: str | None) -> Path:
    if given is not None:
        path = Path(given).expanduser()
        if not path.exists():
            raise _Refused(f"no journal at {given!r}; check the path, or run `cockpit journals`")
        if path.is_dir():
            raise _Refused(f"{given!r} is a directory; give a journal file (.jsonl)")
        return path
    from cockpit.journals import list_journals

    recent = list_journals(limit=20)
    if not recent:
        raise _Refused("no journals yet: give a journal file, or run something first")
    return recent[0].path


def run_checkpoints(journal: str | None) -> int:
    """Print the rows of `cockpit checkpoints`; the exit code."""
    from cockpit.rewinds import RewindError, checkpoint_store, read_run
    from engine_adapter.checkpoints import RewindRefused, StoreDamaged, checkpoint_rows
    from engine_adapter.text import escaped

    try:
        path = _journal(journal)
        run = read_run(path)
        if not run.any:
            raise _Refused(f"{path}: the run has no checkpoints (they were off, or it ran "
                           "before cockpit took them)")
        rows = checkpoint_rows(checkpoint_store(), run)
    except (_Refused, RewindError, RewindRefused, StoreDamaged) as exc:
        return _fail(str(exc))
    workspace = escaped(run.workspace or "?")
    print(f"# {path}: workspace {workspace}", file=sys.stderr)
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.ts))
        print(f"turn {row.turn}  {when}  {row.files} files  changed since: +{row.added} "
              f"~{row.modified} -{row.deleted}")
    return 0


def run_rewind(journal: str | None, *, to: int | None, undo: bool, dry_run: bool,
               yes: bool = False) -> int:
    """Do (or list) the rewind; the exit code: 0 done, 1 some paths failed, 2 refused."""
    from cockpit.rewinds import RewindError, plan_lines, rewind_journal

    if (to is None) == (not undo):
        return _fail("give either --to N (a turn, see `cockpit checkpoints`) or --undo")
    try:
        path = _journal(journal)
        if not dry_run and not yes and sys.stdin.isatty():
            preview = rewind_journal(path, to=to, undo=undo, dry_run=True)
            for line in plan_lines(preview, dry_run=True):
                print(line)
            if preview.plan.empty:
                print("nothing to rewind: the workspace is already as it was", file=sys.stderr)
                return 0
            if not typer.confirm("Rewind the workspace?", default=False):
                print("nothing changed", file=sys.stderr)
                return 0
        outcome = rewind_journal(path, to=to, undo=undo, dry_run=dry_run)
    except (_Refused, RewindError) as exc:
        return _fail(str(exc))
    for line in plan_lines(outcome, dry_run=dry_run):
        print(line)
    done = "would change" if dry_run else "changed"
    plan = outcome.plan
    if plan.empty and not outcome.failed:
        print("# nothing to rewind: the workspace is already as it was there"
              + (f" ({len(plan.left_alone)} left alone)" if plan.left_alone else ""),
              file=sys.stderr)
        return 0
    print(f"# {done}: {len(plan.restore)} restored, {len(plan.remove)} removed, "
          f"{len(plan.left_alone)} left alone" + ("" if dry_run else
                                                  "; `cockpit rewind --undo` puts it back"),
          file=sys.stderr)
    return 1 if outcome.failed else 0
