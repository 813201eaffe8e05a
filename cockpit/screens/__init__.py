"""Screens shown over the cockpit: help, pager, raw-event inspector, quit confirmation, grants."""

from cockpit.screens.grants import GrantsScreen
from cockpit.screens.help import HelpScreen
from cockpit.screens.pager import PagerScreen
from cockpit.screens.quit import QuitScreen

__all__ = ["GrantsScreen", "HelpScreen", "PagerScreen", "QuitScreen"]
