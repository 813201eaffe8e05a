"""The journal replay viewer: `ReplayApp` (the live screen's widgets at any event of a journal,
with a timeline), the journal picker, and the summaries behind `cockpit journals`."""

from cockpit.replay.app import ReplayApp, ReplayScreen

__all__ = ["ReplayApp", "ReplayScreen"]
