"""The cockpit's widgets. They render a `RunView` (from `engine_adapter.view`), never a Session,
so the live cockpit and the replay viewer share them. Start with `RunDisplay`."""

from cockpit.widgets.approval import ApprovalBar
from cockpit.widgets.end_panel import EndPanel
from cockpit.widgets.panels import GrantsPanel, StatusLine, VerificationPanel
from cockpit.widgets.run_display import RunDisplay
from cockpit.widgets.transcript import Transcript

__all__ = [
    "ApprovalBar",
    "EndPanel",
    "GrantsPanel",
    "RunDisplay",
    "StatusLine",
    "Transcript",
    "VerificationPanel",
]
