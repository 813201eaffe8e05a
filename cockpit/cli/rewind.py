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

import contextlib
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from engine_adapter.checkpoints import CheckpointStore, RewindOutcome, RunCheckpoints
    from engine_adapter.events import WorkspaceRewound

__all__ = ["EXIT_REFUSED", "checkpoints", "rewind", "run_checkpoints", "run_rewind"]

EXIT_REFUSED = 2
"""No such journal, no checkpoints, an unknown turn, the workspace gone, a damaged store."""

_WANTED = re.compile(
    rb'"type"\s*:\s*"(?:agent_start|agent_end|checkpoint_taken|workspace_rewound)"')
"""The lines `_read` parses (any writer's layout: spaces, other key orders)."""


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


def _read(path: Path) -> RunCheckpoints:
    """The run's checkpoints, from only the lines that carry them (a journal of streamed
    text is skimmed, not parsed) and its last line (for the next `seq`)."""
    from engine_adapter.checkpoints import RunCheckpoints
    from engine_adapter.events import parse_event

    events = []
    last = b""
    try:
        with open(path, "rb") as handle:
            for line in handle:
                if line.strip():
                    last = line
                if _WANTED.search(line):
                    try:
                        events.append(parse_event(line))
                    except ValueError:
                        continue  # a damaged line: the verifier's business, not ours
    except OSError as exc:
        raise _Refused(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    run = RunCheckpoints.of(events)
    with contextlib.suppress(ValueError):  # torn: the next seq follows the last good one read
        run.last_seq = max(run.last_seq, int(parse_event(last).seq))
    return run


def _store() -> CheckpointStore:
    from cockpit.paths import checkpoint_dir
    from engine_adapter.checkpoints import CheckpointStore

    return CheckpointStore(checkpoint_dir())


def run_checkpoints(journal: str | None) -> int:
    """Print the rows of `cockpit checkpoints`; the exit code."""
    from engine_adapter.checkpoints import RewindRefused, StoreDamaged, checkpoint_rows
    from engine_adapter.text import escaped

    try:
        path = _journal(journal)
        run = _read(path)
        if not run.any:
            raise _Refused(f"{path}: the run has no checkpoints (they were off, or it ran "
                           "before cockpit took them)")
        store = _store()
        rows = checkpoint_rows(store, run)
    except (_Refused, RewindRefused, StoreDamaged) as exc:
        return _fail(str(exc))
    workspace = escaped(run.workspace or "?")
    print(f"# {path}: workspace {workspace}", file=sys.stderr)
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.ts))
        print(f"turn {row.turn}  {when}  {row.files} files  changed since: +{row.added} "
              f"~{row.modified} -{row.deleted}")
    return 0


def _lines(outcome: RewindOutcome, *, dry_run: bool) -> list[str]:
    from engine_adapter.text import escaped

    restore, remove = ("would restore", "would remove") if dry_run else ("restored", "removed")
    failed = {path for path, _ in outcome.failed}
    lines = [f"{restore} {escaped(p)}" for p in outcome.plan.restore if p not in failed]
    lines += [f"{remove} {escaped(p)}" for p in outcome.plan.remove if p not in failed]
    lines += [f"left alone {escaped(p)}: {why}" for p, why in outcome.plan.left_alone]
    lines += [f"failed {escaped(p)}: {why}" for p, why in outcome.failed]
    return lines


def run_rewind(journal: str | None, *, to: int | None, undo: bool, dry_run: bool,
               yes: bool = False) -> int:
    """Do (or list) the rewind; the exit code: 0 done, 1 some paths failed, 2 refused."""
    from engine_adapter import JournalError, JsonlEventJournal
    from engine_adapter.checkpoints import RewindRefused, StoreDamaged, rewind_run
    from engine_adapter.journal import writer_alive

    if (to is None) == (not undo):
        return _fail("give either --to N (a turn, see `cockpit checkpoints`) or --undo")
    try:
        path = _journal(journal)
        run = _read(path)
        if writer_alive(path):
            raise _Refused(f"{path}: the run is still going; rewind from its cockpit, or when "
                           "it has ended")
        store = _store()
        if not dry_run and not yes and sys.stdin.isatty():
            preview = rewind_run(store, run, to=to, undo=undo, dry_run=True)
            for line in _lines(preview, dry_run=True):
                print(line)
            if preview.plan.empty:
                print("nothing to rewind: the workspace is already as it was", file=sys.stderr)
                return 0
            if not typer.confirm("Rewind the workspace?", default=False):
                print("nothing changed", file=sys.stderr)
                return 0
        writer = None if dry_run else JsonlEventJournal(path)  # locked: one rewind at a time
        try:
            outcome = rewind_run(store, run, to=to, undo=undo, dry_run=dry_run)
            for line in _lines(outcome, dry_run=dry_run):
                print(line)
            if writer is not None:
                writer.write(_event(run, outcome, to=to, undo=undo))
        finally:
            if writer is not None:
                writer.close()
    except (_Refused, RewindRefused, StoreDamaged, JournalError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"the workspace could not be read: {exc.strerror or exc}")
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


def _event(run: RunCheckpoints, outcome: RewindOutcome, *, to: int | None,
           undo: bool) -> WorkspaceRewound:
    from engine_adapter.events import WorkspaceRewound, stamped

    assert outcome.before is not None and outcome.after is not None
    plan = outcome.plan
    target = outcome.before.id if not undo else run.rewinds[-1].before
    if not undo:
        taken = run.turns[to].checkpoint if to is not None else None
        target = taken or target
    event = WorkspaceRewound(
        to_turn=to, undo=undo, checkpoint=target, before=outcome.before.id,
        after=outcome.after.id, restored=plan.restore, removed=plan.remove,
        left_alone=[f"{p}: {why}" for p, why in plan.left_alone],
        failed=[f"{p}: {why}" for p, why in outcome.failed])
    return stamped(event, run.session_id, run.last_seq + 1, time.time())
