"""The session boundary of cockpit: typed events, the `Session` with its two planes, standing
approval grants, the write-ahead journal, the pure fold, and the engines behind a session.

Never imports Textual: anything here runs headless, in a script, or under another UI.
"""

from . import events as _events
from .events import *  # noqa: F403 - every event class: `events.__all__` follows HarnessEvent
from .fold import RunFold, RunView
from .grants import ApprovalGrant, grant_prefix
from .journal import JournalError, JsonlEventJournal, read_journal
from .runner import AgentRunner, ApprovalController, CancelToken, EventSink
from .session import Session
from .state import SessionState, TaskState

__version__ = "0.1.0"

__all__ = [
    *_events.__all__,
    "AgentRunner",
    "ApprovalController",
    "ApprovalGrant",
    "CancelToken",
    "EventSink",
    "JournalError",
    "JsonlEventJournal",
    "RunFold",
    "RunView",
    "Session",
    "SessionState",
    "TaskState",
    "grant_prefix",
    "read_journal",
]
