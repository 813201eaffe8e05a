"""The journal replay viewer: `ReplayApp` (the live screen's widgets at any event of a journal,
with a timeline), the journal picker, and what the viewer exits with when the human asks to
resume the run it shows (`ResumeRequest`, once the `ResumeCheck` it was handed allows it)."""

from cockpit.replay.app import ReplayApp
from cockpit.replay.picker import ResumeCheck, ResumeRequest
from cockpit.replay.screen import ReplayScreen

__all__ = ["ReplayApp", "ReplayScreen", "ResumeCheck", "ResumeRequest"]
