"""Screens shown over the cockpit: help, pager, raw-event inspector, quit confirmation, grants."""

from .grants import GrantsScreen
from .help import HelpScreen
from .pager import PagerScreen
from .quit import QuitScreen

__all__ = ["GrantsScreen", "HelpScreen", "PagerScreen", "QuitScreen"]
