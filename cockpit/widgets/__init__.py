"""The cockpit's widgets. They render a `RunView` (from `engine_adapter.fold`), never a Session,
so the live cockpit and the replay viewer share them. Start with `RunDisplay`."""

from .approval import ApprovalBar
from .panels import GrantsPanel, StatusLine, VerificationPanel
from .pump import ChangeSet, FramePump
from .run_display import RunDisplay
from .transcript import Transcript

__all__ = [
    "ApprovalBar",
    "ChangeSet",
    "FramePump",
    "GrantsPanel",
    "RunDisplay",
    "StatusLine",
    "Transcript",
    "VerificationPanel",
]
