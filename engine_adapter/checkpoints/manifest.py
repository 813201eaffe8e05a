"""`Manifest`: one checkpoint's record, as the store keeps it (`manifests/<id>.json`).

A manifest names the workspace, the run it belongs to, the turn (None: the run's end, or a
rewind's own before/after state), when it was taken, where its path list came from (`git` or
`folder`), its root tree (the files themselves are in trees and blobs), and the paths over the
size cap, recorded by size and hash only.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["MANIFEST_VERSION", "Manifest"]

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class Manifest:
    """One checkpoint."""

    id: str
    run: str
    workspace: str
    root: str
    created: float
    turn: int | None = None
    kind: str = "turn"  # "turn", "end", "before_rewind", "after_rewind"
    source: str = "git"
    files: int = 0
    stored_bytes: int = 0
    large: list[str] = field(default_factory=list)
    version: int = MANIFEST_VERSION

    def to_json(self) -> bytes:
        """The manifest file's bytes."""
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> Manifest:
        """A manifest read back; `ValueError` when the bytes are not one."""
        raw: Any = json.loads(data)
        if not isinstance(raw, dict) or raw.get("version") != MANIFEST_VERSION:
            raise ValueError("not a checkpoint manifest of this version")
        try:
            manifest = cls(**raw)
        except TypeError as exc:
            raise ValueError(f"a manifest with the wrong fields: {exc}") from None
        text = (manifest.id, manifest.run, manifest.workspace, manifest.root)
        if not all(isinstance(v, str) for v in text) or not isinstance(manifest.large, list):
            raise ValueError("a manifest with fields of the wrong type")
        return manifest
