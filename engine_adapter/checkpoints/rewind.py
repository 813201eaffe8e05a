"""`rewind`: restore a workspace to a checkpoint, itself recorded as two checkpoints.

Before changing anything the workspace is checkpointed as it is (`before_rewind`: what `--undo`
puts back), the plan is made against the baseline (what the run, or the last rewind, left) and
every blob it needs is checked (the store's `keep_out`, the cockpit's own files, are left out
of all three, even where an older checkpoint recorded them); after it, the result is
checkpointed again (`after_rewind`: the baseline of the next rewind or undo).

`rewind_run` and `checkpoint_rows` do it for a run as its events tell it (`RunCheckpoints`):
what `cockpit rewind` and `cockpit checkpoints` (and the rewind key) call; `rewound_event` is
the `workspace_rewound` event that records a rewind done (the caller stamps and journals it).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine_adapter.checkpoints.entries import Entry
from engine_adapter.checkpoints.history import RunCheckpoints
from engine_adapter.checkpoints.listing import kept_out
from engine_adapter.checkpoints.manifest import Manifest
from engine_adapter.checkpoints.restore import RewindPlan, apply_plan, check_blobs, plan_rewind
from engine_adapter.checkpoints.snapshot import Snapshotter
from engine_adapter.checkpoints.store import CheckpointStore
from engine_adapter.events import WorkspaceRewound

__all__ = ["CheckpointRow", "RewindOutcome", "RewindRefused", "checkpoint_rows", "rewind",
           "rewind_run", "rewound_event"]


@dataclass(frozen=True)
class RewindOutcome:
    """What a rewind did (or, dry, would do): the plan, what failed, and the two checkpoints
    around it (None when dry)."""

    plan: RewindPlan
    failed: list[tuple[str, str]]
    before: Manifest | None = None
    after: Manifest | None = None


def rewind(store: CheckpointStore, target: Manifest, baseline: Manifest, *,
           dry_run: bool = False, snapshotter: Snapshotter | None = None) -> RewindOutcome:
    """Rewind `target.workspace` to `target`, changes since `baseline` by others left alone.
    `StoreDamaged` (nothing changed) when a manifest, tree or blob it needs is bad; `OSError`
    when the workspace cannot be read."""
    workspace = target.workspace
    # The cockpit's own files are never rewound, even where an older checkpoint recorded them.
    out = kept_out(workspace, store.keep_out)
    wanted, left = _without(store.entries(target), out), _without(store.entries(baseline), out)
    taker = snapshotter or Snapshotter(store, workspace, run=target.run, previous=left)
    if dry_run:
        now = taker.take(kind="before_rewind", record=False)
        plan = plan_rewind(wanted, left, now.entries)
        return RewindOutcome(plan, [])
    before = taker.take(kind="before_rewind")
    plan = plan_rewind(wanted, left, before.entries)
    check_blobs(store, plan)
    failed = apply_plan(store, workspace, plan)
    after = taker.take(kind="after_rewind")
    return RewindOutcome(plan, failed, before.manifest, after.manifest)


def _without(entries: dict[str, Entry], out: tuple[str, ...]) -> dict[str, Entry]:
    """`entries` but those at or below a path of `out`."""
    if not out:
        return entries
    below = tuple(f"{p}/" for p in out)
    return {p: e for p, e in entries.items() if p not in out and not p.startswith(below)}


class RewindRefused(Exception):
    """A rewind that cannot be done (nothing was changed); the message is one line."""


@dataclass(frozen=True)
class CheckpointRow:
    """One turn's checkpoint as `cockpit checkpoints` lists it, with the paths changed since
    it (to the workspace as the run, or the latest rewind, left it): what a rewind there would
    remove (`added`), write back (`modified`) and bring back (`deleted`)."""

    turn: int
    ts: float
    checkpoint: str
    files: int
    added: int
    modified: int
    deleted: int


def _manifest(store: CheckpointStore, checkpoint: str | None, what: str) -> Manifest:
    if checkpoint is None:
        raise RewindRefused(f"{what} has no checkpoint")
    return store.read_manifest(checkpoint)  # StoreDamaged: the caller says it


def checkpoint_rows(store: CheckpointStore, run: RunCheckpoints) -> list[CheckpointRow]:
    """Each turn's checkpoint, oldest first; `StoreDamaged` when one does not read."""
    from engine_adapter.checkpoints.snapshot import changes

    baseline = store.entries(_manifest(store, run.baseline(), "the run"))
    rows: list[CheckpointRow] = []
    for turn in sorted(run.turns):
        taken = run.turns[turn]
        entries = store.entries(_manifest(store, taken.checkpoint, f"turn {turn}"))
        created, modified, deleted = changes(entries, baseline)
        rows.append(CheckpointRow(turn, taken.ts, str(taken.checkpoint), len(entries),
                                  len(created), len(modified), len(deleted)))
    return rows


def rewind_run(store: CheckpointStore, run: RunCheckpoints, *, to: int | None = None,
               undo: bool = False, dry_run: bool = False) -> RewindOutcome:
    """Rewind the run's workspace to turn `to`'s checkpoint, or (`undo`) undo its latest
    rewind. `RewindRefused` or `StoreDamaged` (one line each, nothing changed) when it cannot
    be done: no checkpoints, an unknown turn, no rewind to undo, the workspace gone."""
    import os

    if (to is None) == (not undo):
        raise RewindRefused("give either --to N (a turn) or --undo")
    if not run.any:
        raise RewindRefused("the run has no checkpoints (they were off, or it ran before "
                            "cockpit took them)")
    if undo:
        if not run.rewinds:
            raise RewindRefused("nothing to undo: the run's workspace was never rewound")
        latest = run.rewinds[-1]
        target, baseline = store.read_manifest(latest.before), store.read_manifest(latest.after)
    else:
        if to not in run.turns:
            known = ", ".join(str(t) for t in sorted(run.turns)) or "none"
            raise RewindRefused(f"the run has no checkpoint of turn {to} (turns: {known})")
        target = _manifest(store, run.turns[to].checkpoint, f"turn {to}")
        baseline = _manifest(store, run.baseline(), "the run")
    if run.workspace is not None and os.path.realpath(run.workspace) != target.workspace:
        raise RewindRefused(f"the checkpoint is of {target.workspace!r}, not of the run's "
                            f"workspace {run.workspace!r}: the journal or the store was changed")
    if baseline.workspace != target.workspace:
        raise RewindRefused("the run's checkpoints name two workspaces: the journal or the "
                            "store was changed")
    if not os.path.isdir(target.workspace):
        raise RewindRefused(f"the workspace {target.workspace} is gone")
    return rewind(store, target, baseline, dry_run=dry_run)


def rewound_event(run: RunCheckpoints, outcome: RewindOutcome, *, to: int | None,
                  undo: bool = False) -> WorkspaceRewound:
    """The `workspace_rewound` event of a rewind `rewind_run` did (not dry) for `run`: the
    target checkpoint, the two around it and the paths; unstamped (the Session, or the
    journal's writer, stamps it with the run's next `seq`)."""
    if outcome.before is None or outcome.after is None:
        raise ValueError("a dry rewind changed nothing: there is nothing to record")
    plan = outcome.plan
    if undo:
        target = run.rewinds[-1].before if run.rewinds else outcome.before.id
    else:
        taken = run.turns[to].checkpoint if to in run.turns else None
        target = taken or outcome.before.id
    return WorkspaceRewound(
        to_turn=to, undo=undo, checkpoint=target, before=outcome.before.id,
        after=outcome.after.id, restored=plan.restore, removed=plan.remove,
        left_alone=[f"{p}: {why}" for p, why in plan.left_alone],
        failed=[f"{p}: {why}" for p, why in outcome.failed])
