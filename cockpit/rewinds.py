"""Rewinding a run's workspace, as `cockpit rewind`, the live cockpit and the replay viewer do it.

One way for the three (the work itself is `engine_adapter.checkpoints.rewind_run`):

- `read_run`: a journal's checkpoints and rewinds, from only the lines that carry them;
- `rewind_journal`: a rewind of an ended run, appended to its journal and its hash chain
  (`cockpit rewind`, and the rewind key of the replay viewer);
- `rewind_conversation`: a rewind in the live cockpit, recorded through the latest task's
  `Session` (in order with the run's events);
- `preview`: what a rewind would do, with the diffs, as the rewind screen shows it;
- `plan_lines`: the plan, one path a line (`cockpit rewind` prints them);
- `Rewinder`: what the rewind key asks (`ConversationRewinder` live, `JournalRewinder` in
  replay); the screens' flow around it is the apps' shared base (`cockpit.base_app`).

Everything here reads files, hashes and diffs: call it in a worker thread, never on the event
loop. Every refusal is a `RewindError` whose message is one line for the user.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cockpit.paths import checkpoint_dir, own_paths
from engine_adapter.checkpoints import (
    Beneath,
    CheckpointStore,
    RewindOutcome,
    RewindRefused,
    RunCheckpoints,
    StoreDamaged,
    rewind_run,
    rewound_event,
)
from engine_adapter.events import BaseEvent, WorkspaceRewound, parse_event, stamped
from engine_adapter.files import unified_diff
from engine_adapter.journal import JournalError, JsonlEventJournal, writer_alive
from engine_adapter.text import escaped

if TYPE_CHECKING:
    from engine_adapter import Session

__all__ = ["PREVIEW_DIFF_CHARS", "PREVIEW_FILE_BYTES", "ConversationRewinder",
           "JournalRewinder", "RewindError", "RewindPreview", "Rewinder", "checkpoint_store",
           "plan_lines", "preview", "read_run", "rewind_conversation", "rewind_journal"]

PREVIEW_FILE_BYTES = 1 << 20
"""Bytes of one file read for its diff; a bigger file is named, not diffed."""
PREVIEW_DIFF_CHARS = 256 * 1024
"""Characters of diff text in one preview, all files together; the rest is named only."""

_WANTED = re.compile(
    rb'"type"\s*:\s*"(?:agent_start|agent_end|checkpoint_taken|workspace_rewound)"')
"""The lines `read_run` parses (any writer's layout: spaces, other key orders)."""


class RewindError(Exception):
    """A rewind that cannot be done or recorded; the message is one line, nothing changed."""


def checkpoint_store(*journals: Path) -> CheckpointStore:
    """The cockpit's checkpoint store (`checkpoint_dir()`), keeping the cockpit's own folders
    (`own_paths`) and `journals` (a run's `--journal` may be in its workspace) out of every
    checkpoint and rewind."""
    return CheckpointStore(checkpoint_dir(), keep_out=(*own_paths(), *journals))


def read_run(path: Path) -> RunCheckpoints:
    """The run's checkpoints, from only the lines that carry them (a journal of streamed text
    is skimmed, not parsed), and its last line (for the next `seq`)."""
    events: list[BaseEvent] = []
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
        raise RewindError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    run = RunCheckpoints.of(events)
    with contextlib.suppress(ValueError):  # torn: the next seq follows the last good one read
        run.last_seq = max(run.last_seq, int(parse_event(last).seq))
    return run


def _refusal(exc: Exception) -> RewindError:
    if isinstance(exc, OSError) and not isinstance(exc, JournalError):
        return RewindError(f"the workspace could not be read: {exc.strerror or exc}")
    return RewindError(str(exc))


_REFUSED = (RewindRefused, StoreDamaged, JournalError, OSError)


def rewind_journal(path: Path, *, to: int | None, undo: bool = False, dry_run: bool = False,
                   store: CheckpointStore | None = None) -> RewindOutcome:
    """Rewind (or, `dry_run`, plan) the workspace of the ended run journaled at `path`; a
    rewind done is appended to the journal (`workspace_rewound`, the chain continued; the
    journal is locked meanwhile, so one rewind at a time). `RewindError` for a run still
    going, no checkpoints, an unknown turn, the workspace gone, a damaged store."""
    run = read_run(path)
    if writer_alive(path):
        raise RewindError(f"{path}: the run is still going; rewind from its cockpit, or when "
                          "it has ended")
    store = store or checkpoint_store(path)
    try:
        if dry_run:
            return rewind_run(store, run, to=to, undo=undo, dry_run=True)
        with JsonlEventJournal(path) as writer:  # locked: one rewind at a time
            outcome = rewind_run(store, run, to=to, undo=undo)
            event = rewound_event(run, outcome, to=to, undo=undo)
            writer.write(stamped(event, run.session_id, run.last_seq + 1, time.time()))
        return outcome
    except _REFUSED as exc:
        raise _refusal(exc) from None


def rewind_conversation(store: CheckpointStore, tasks: Sequence[Iterable[BaseEvent]], *,
                        task: int, turn: int, dry_run: bool = False,
                        record: Callable[[WorkspaceRewound], object] | None = None
                        ) -> RewindOutcome:
    """Rewind (or plan) a live conversation's workspace to the start of task `task`'s turn
    `turn` (`tasks`: each task's events, the conversation's present last). A rewind done is
    handed to `record` (the latest task's `Session.record`). `RewindError` as `rewind_journal`.
    """
    if not 1 <= task <= len(tasks):
        raise RewindError(f"the conversation has no task {task}")
    run = RunCheckpoints.of_conversation(tasks, task)
    try:
        outcome = rewind_run(store, run, to=turn, dry_run=dry_run)
        if not dry_run and record is not None:
            record(rewound_event(run, outcome, to=turn))
        return outcome
    except _REFUSED as exc:
        raise _refusal(exc) from None


def plan_lines(outcome: RewindOutcome, *, dry_run: bool) -> list[str]:
    """The plan (or what was done), one path a line, escaped: restored, brought back, removed,
    left alone (and why), failed (and why)."""
    restore, back, remove = (("would restore", "would bring back", "would remove") if dry_run
                             else ("restored", "brought back", "removed"))
    plan = outcome.plan
    failed = {path for path, _ in outcome.failed}
    gone = set(plan.brought_back)
    lines = [f"{restore} {escaped(p)}" for p in plan.restore if p not in failed | gone]
    lines += [f"{back} {escaped(p)}" for p in plan.brought_back if p not in failed]
    lines += [f"{remove} {escaped(p)}" for p in plan.remove if p not in failed]
    lines += [f"left alone {escaped(p)}: {why}" for p, why in plan.left_alone]
    lines += [f"failed {escaped(p)}: {why}" for p, why in outcome.failed]
    return lines


@dataclass(frozen=True)
class RewindPreview:
    """What a rewind would do: the dry outcome, its text (the plan, then the diffs) and the
    diff part of that text (coloured by the pager)."""

    outcome: RewindOutcome
    text: str
    diff: str

    @property
    def empty(self) -> bool:
        """Whether the rewind would change nothing."""
        return self.outcome.plan.empty


def _text(data: bytes | None) -> str | None:
    """A file's bytes as text for a diff, None when it is not text."""
    if data is None or b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def _current(below: Beneath | None, path: str) -> bytes | None:
    """Up to `PREVIEW_FILE_BYTES` + 1 bytes of `path` as it is now (None: unreadable, a link
    or gone); links are never followed."""
    if below is None:
        return None
    try:
        folder, name = below.split(path)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     dir_fd=folder)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(PREVIEW_FILE_BYTES + 1)


def _diff(store: CheckpointStore, below: Beneath | None, outcome: RewindOutcome,
          path: str, *, removed: bool, room: int) -> str:
    plan = outcome.plan
    now = None if path in plan.brought_back else _current(below, path)
    if removed:
        wanted: bytes | None = b""
    else:
        entry = plan.target[path]
        if entry.kind == "l":
            return f"--- {escaped(path)}\n[a link to {escaped(entry.digest)}]\n"
        if entry.size > PREVIEW_FILE_BYTES:
            return f"--- {escaped(path)}\n[{entry.size:,} bytes: too big to show a diff]\n"
        try:
            wanted = store.get(entry.digest)
        except StoreDamaged as exc:
            return f"--- {escaped(path)}\n[{exc}]\n"
    if now is None and path not in plan.brought_back:
        return f"--- {escaped(path)}\n[now a link, or unreadable: its content is not shown]\n"
    if now is not None and len(now) > PREVIEW_FILE_BYTES:
        return f"--- {escaped(path)}\n[over {PREVIEW_FILE_BYTES:,} bytes now: too big to show]\n"
    old, new = _text(now), _text(wanted)
    if (now is not None and old is None) or new is None:
        return f"--- {escaped(path)}\n[binary file]\n"
    diff = unified_diff(old if now is not None else None, new or "", path, limit=room)
    if removed:  # the file goes: its diff ends in nothing, as git shows a deletion
        diff = diff.replace(f"\n+++ b/{path}\n", "\n+++ /dev/null\n", 1)
    return escaped(diff) if diff else ""


def preview(outcome: RewindOutcome, store: CheckpointStore, workspace: str, *,
            title: str) -> RewindPreview:
    """The preview of a dry `outcome` in `workspace`: `title`, the plan's lines, then each
    path's diff (from now to what the rewind leaves), capped in all to `PREVIEW_DIFF_CHARS`."""
    plan = outcome.plan
    head = [title, ""]
    if plan.empty:
        head.append("Nothing to rewind: the workspace is already as it was there.")
    head += plan_lines(outcome, dry_run=True)
    diffs: list[str] = []
    room = PREVIEW_DIFF_CHARS
    try:
        below: Beneath | None = Beneath(workspace)
    except OSError:
        below = None
    try:
        paths = [(p, False) for p in plan.restore] + [(p, True) for p in plan.remove]
        for number, (path, removed) in enumerate(paths):
            if room <= 0:
                diffs.append(f"[{len(paths) - number} more file(s) not shown: the preview "
                             "holds this much]\n")
                break
            diff = _diff(store, below, outcome, path, removed=removed, room=room)
            diffs.append(diff)
            room -= len(diff)
    finally:
        if below is not None:
            below.close()
    diff = "".join(diffs)
    text = "\n".join(head) + ("\n\n" + diff if diff else "\n")
    return RewindPreview(outcome, text, diff)


class Rewinder(Protocol):
    """Where a rewind key's rewind goes: a live conversation's Sessions, or an ended journal.
    `refusal` is asked on the event loop (cheap); `preview` and `rewind` read and write files:
    call them in a worker thread. Both raise `RewindError` (one line, nothing changed)."""

    def refusal(self, task: int) -> str | None:
        """Why task `task`'s turns cannot be rewound to now (None: they can be)."""

    def where(self, task: int, turn: int) -> str:
        """How the target reads for the user ("turn 2", "turn 2 of task 1")."""

    def preview(self, task: int, turn: int) -> RewindPreview:
        """What the rewind would do, with the diffs."""

    def rewind(self, task: int, turn: int) -> RewindOutcome:
        """Do the rewind and record it."""


def _title(where: str, workspace: str | None) -> str:
    return f"workspace {escaped(workspace or '?')}, back to the start of {where}:"


class JournalRewinder:
    """Rewinds for the replay viewer: the ended run journaled at `path` (its only task)."""

    def __init__(self, path: Path,
                 store: Callable[[], CheckpointStore] | None = None) -> None:
        self.path = path
        self._store = store or (lambda: checkpoint_store(path))

    def refusal(self, task: int) -> str | None:
        """Never refused before looking (the journal says why, in `preview`)."""
        return None

    def where(self, task: int, turn: int) -> str:
        """`turn N` (a journal holds one task)."""
        return f"turn {turn}"

    def preview(self, task: int, turn: int) -> RewindPreview:
        """The dry rewind of the journal's run, with its diffs."""
        store = self._store()
        outcome = rewind_journal(self.path, to=turn, dry_run=True, store=store)
        workspace = read_run(self.path).workspace
        return preview(outcome, store, os.path.realpath(workspace or "."),
                       title=_title(self.where(task, turn), workspace))

    def rewind(self, task: int, turn: int) -> RewindOutcome:
        """The rewind, appended to the journal (as `cockpit rewind` does)."""
        return rewind_journal(self.path, to=turn, store=self._store())


class ConversationRewinder:
    """Rewinds for the live cockpit: its Sessions (`sessions()`, the present last), each task's
    checkpoints in its own Session's `checkpoints` store; a rewind is recorded through the
    latest Session (`Session.record`)."""

    def __init__(self, sessions: Callable[[], Sequence[Session]],
                 note: Callable[[int, int], str] | None = None) -> None:
        self._sessions = sessions
        self._note = note  # what the rewind means for the conversation (recorded with it)

    def refusal(self, task: int) -> str | None:
        """A task is running, or the task took no checkpoints."""
        sessions = self._sessions()
        if not sessions[-1].done:
            return ("a task is running: wait for it to end, or cancel it (escape twice), then "
                    "rewind")
        if not 1 <= task <= len(sessions) or sessions[task - 1].checkpoints is None:
            return "this run takes no checkpoints ([checkpoints] enabled = false in config.toml)"
        return None

    def where(self, task: int, turn: int) -> str:
        """`turn N`, and the task's number when the conversation has had several."""
        return f"turn {turn}" if len(self._sessions()) == 1 else f"turn {turn} of task {task}"

    def _store(self, task: int) -> CheckpointStore:
        checkpoints = self._sessions()[task - 1].checkpoints
        if checkpoints is None:
            raise RewindError("this run takes no checkpoints")
        return checkpoints.store

    def _histories(self) -> list[Sequence[BaseEvent]]:
        return [session.history for session in self._sessions()]

    def preview(self, task: int, turn: int) -> RewindPreview:
        """The dry rewind of the conversation's workspace, with its diffs."""
        store = self._store(task)
        outcome = rewind_conversation(store, self._histories(), task=task, turn=turn,
                                      dry_run=True)
        workspace = self._sessions()[task - 1].state.cwd
        return preview(outcome, store, os.path.realpath(workspace or "."),
                       title=_title(self.where(task, turn), workspace))

    def rewind(self, task: int, turn: int) -> RewindOutcome:
        """The rewind, recorded through the latest Session."""
        latest = self._sessions()[-1]

        said = self._note(task, turn) if self._note is not None else ""

        def record(event: WorkspaceRewound) -> None:
            try:
                latest.record(event.model_copy(update={"conversation": said or None}))
            except (JournalError, OSError) as exc:
                raise RewindError(f"the workspace was rewound, but the journal could not "
                                  f"record it: {exc}") from None

        return rewind_conversation(self._store(task), self._histories(), task=task,
                                   turn=turn, record=record)
