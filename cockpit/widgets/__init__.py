"""The cockpit's widgets. They render a `RunView` (from `engine_adapter.fold`), never a Session,
so the live cockpit and the replay viewer share them. Start with `RunDisplay`."""

from .approval import ApprovalBar
from .end_panel import EndPanel
from .panels import GrantsPanel, StatusLine, VerificationPanel
from .run_display import RunDisplay
from .transcript import Transcript

__all__ = [
    "ApprovalBar",
    "EndPanel",
    "GrantsPanel",
    "RunDisplay",
    "StatusLine",
    "Transcript",
    "VerificationPanel",
]
