"""`CheckpointSettings`: whether checkpoints are taken, and what the store may hold."""

from __future__ import annotations

from dataclasses import dataclass

from engine_adapter.checkpoints.snapshot import LARGE_BYTES

__all__ = ["STORE_BYTES", "CheckpointSettings"]

STORE_BYTES = 2 << 30
"""The store's default cap (2 GiB): past it, the oldest runs' checkpoints are pruned."""


@dataclass(frozen=True)
class CheckpointSettings:
    """`enabled`: take checkpoints at all. `max_store_bytes`: the store's cap (None: none).
    `prune`: drop the oldest runs' checkpoints when over the cap (else keep them and stop
    taking new ones). `large_bytes`: files over this are recorded by size and hash only.
    `ignore`: names (shell patterns) never recorded, beside the default caches."""

    enabled: bool = True
    max_store_bytes: int | None = STORE_BYTES
    prune: bool = True
    large_bytes: int = LARGE_BYTES
    ignore: tuple[str, ...] = ()
