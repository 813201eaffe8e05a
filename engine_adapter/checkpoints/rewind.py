"""`rewind`: restore a workspace to a checkpoint, itself recorded as two checkpoints.

Before changing anything the workspace is checkpointed as it is (`before_rewind`: what `--undo`
puts back), the plan is made against the baseline (what the run, or the last rewind, left) and
every blob it needs is checked; after it, the result is checkpointed again (`after_rewind`: the
baseline of the next rewind or undo).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine_adapter.checkpoints.manifest import Manifest
from engine_adapter.checkpoints.restore import RewindPlan, apply_plan, check_blobs, plan_rewind
from engine_adapter.checkpoints.snapshot import Snapshotter
from engine_adapter.checkpoints.store import CheckpointStore

__all__ = ["RewindOutcome", "rewind"]


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
    wanted, left = store.entries(target), store.entries(baseline)
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
