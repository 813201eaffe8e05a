"""cockpit: the Textual application and the command line over an `engine_adapter.Session`.

`from cockpit import CockpitApp, ReplayApp` imports either app on first use, so `cockpit --help`
and the headless printer never load Textual.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from engine_adapter.version import __version__

FRAME_CAP = 120
"""Textual's frame cap (`TEXTUAL_FPS`), set here, before Textual is first imported (it reads
the variable once); one the user set wins. The stream's deliveries are paced by the frame pump
(`cockpit.live.pump`, 60 a second at most), so the cap only spaces frames: after each frame Textual
waits one to two periods of it before the next, and a key pressed just after a stream's frame
waits that long for its own (measured, bench/bench_model.py's key run, with the transcript drawn
after the key's frame: key->frame p95 while a reply streamed 2.3x the idle one at 60, 1.0-1.5x at
120)."""
os.environ.setdefault("TEXTUAL_FPS", str(FRAME_CAP))

__all__ = ["FRAME_CAP", "CockpitApp", "ReplayApp", "__version__"]

if TYPE_CHECKING:
    from cockpit.live import CockpitApp
    from cockpit.replay import ReplayApp


def __getattr__(name: str) -> object:
    if name == "CockpitApp":
        from cockpit.live import CockpitApp

        return CockpitApp
    if name == "ReplayApp":
        from cockpit.replay import ReplayApp

        return ReplayApp
    raise AttributeError(f"module 'cockpit' has no attribute {name!r}")
