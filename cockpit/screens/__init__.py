"""Screens shown over the cockpit: help, pager (and the raw-event inspector), quit confirmation
(and an attached client's detach), grants, a rewind's preview and confirmation, a fleet
denial's reason; and the live cockpit's own default screen (`RunScreen`).

Each loads on first use: the replay viewer never pays for the grants screen (and the saved
grants behind it) it does not show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine_adapter.lazy import lazy_face

_HOMES = {
    "DenyReasonScreen": "cockpit.screens.deny",
    "DetachScreen": "cockpit.screens.detach",
    "GrantsScreen": "cockpit.screens.grants",
    "HelpScreen": "cockpit.screens.help",
    "PagerScreen": "cockpit.screens.pager",
    "QuitScreen": "cockpit.screens.quit",
    "RewindScreen": "cockpit.screens.rewind",
    "RunScreen": "cockpit.screens.run",
}

__all__ = ["DenyReasonScreen", "DetachScreen", "GrantsScreen", "HelpScreen", "PagerScreen",
           "QuitScreen", "RewindScreen", "RunScreen"]

if TYPE_CHECKING:
    from cockpit.screens.deny import DenyReasonScreen as DenyReasonScreen
    from cockpit.screens.detach import DetachScreen as DetachScreen
    from cockpit.screens.grants import GrantsScreen as GrantsScreen
    from cockpit.screens.help import HelpScreen as HelpScreen
    from cockpit.screens.pager import PagerScreen as PagerScreen
    from cockpit.screens.quit import QuitScreen as QuitScreen
    from cockpit.screens.rewind import RewindScreen as RewindScreen
    from cockpit.screens.run import RunScreen as RunScreen

__getattr__, __dir__ = lazy_face(__name__, _HOMES)
