"""Screens shown over the cockpit: help, pager, raw-event inspector, quit confirmation."""

from .help import HelpScreen
from .pager import PagerScreen
from .quit import QuitScreen

__all__ = ["HelpScreen", "PagerScreen", "QuitScreen"]
