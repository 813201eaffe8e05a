"""Checkpoints of a workspace and rewinds to them (a tool package: never imports the session,
the engines, the journal, the view or Textual).

- `store`: `CheckpointStore`, content-addressed blobs and trees plus one manifest a checkpoint,
  in the cockpit's data dir; `StoreDamaged` when a part is missing or changed.
- `listing`: which paths are recorded (git's tracked and untracked, not ignored; a walk
  elsewhere), `snapshot`: `Snapshotter` takes one (stat cache, links as links, a size cap).
- `restore` / `rewind`: the plan (the run's changes back, others' left alone) and doing it.
- `history`: `RunCheckpoints`, a run's checkpoints and rewinds read from its events.
- `beneath`: `Beneath`, paths opened below a root without following a link out of it.
- `checkpointer`: `Checkpointer`, a run's checkpoints off the event loop, for the Session.
- `settings`: `CheckpointSettings` (`[checkpoints]` in config.toml).
"""

from engine_adapter.checkpoints.beneath import Beneath
from engine_adapter.checkpoints.checkpointer import Checkpointer
from engine_adapter.checkpoints.entries import Entry, bad_path, same_content
from engine_adapter.checkpoints.history import RunCheckpoints
from engine_adapter.checkpoints.listing import DEFAULT_IGNORE, kept_out, list_paths
from engine_adapter.checkpoints.manifest import Manifest
from engine_adapter.checkpoints.restore import RewindPlan, apply_plan, check_blobs, plan_rewind
from engine_adapter.checkpoints.rewind import (
    CheckpointRow,
    RewindOutcome,
    RewindRefused,
    checkpoint_rows,
    rewind,
    rewind_run,
    rewound_event,
)
from engine_adapter.checkpoints.settings import STORE_BYTES, CheckpointSettings
from engine_adapter.checkpoints.snapshot import LARGE_BYTES, Snapshotter, Taken, changes
from engine_adapter.checkpoints.store import CheckpointStore, StoreDamaged

__all__ = [
    "DEFAULT_IGNORE",
    "LARGE_BYTES",
    "STORE_BYTES",
    "Beneath",
    "CheckpointRow",
    "CheckpointSettings",
    "CheckpointStore",
    "Checkpointer",
    "Entry",
    "Manifest",
    "RewindOutcome",
    "RewindPlan",
    "RewindRefused",
    "RunCheckpoints",
    "Snapshotter",
    "StoreDamaged",
    "Taken",
    "apply_plan",
    "bad_path",
    "changes",
    "check_blobs",
    "checkpoint_rows",
    "kept_out",
    "list_paths",
    "plan_rewind",
    "rewind",
    "rewind_run",
    "rewound_event",
    "same_content",
]
