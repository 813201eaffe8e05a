"""The session boundary of cockpit: typed events, the `Session` with its two planes, standing
approval grants and every shell rule (`shell`), saved grants, deny rules and approval policies
(`grants`), the write-ahead journal, the pure fold, and the engines behind a session.

Never imports Textual: anything here runs headless, in a script, or under another UI.
"""

from engine_adapter.events import schema as _events
from engine_adapter.events.schema import *  # noqa: F403 - every event class: `events.__all__` follows HarnessEvent
from engine_adapter.grants import ApprovalRequest, GrantStore, PolicyDecision, load_policy
from engine_adapter.journal import JournalError, JsonlEventJournal, read_journal
from engine_adapter.runner import AgentRunner, ApprovalController, CancelToken, EventSink
from engine_adapter.session import Session
from engine_adapter.shell import (
    DESTRUCTIVE,
    ApprovalGrant,
    Classification,
    classify_command,
    grant_prefix,
)
from engine_adapter.state import SessionState, TaskState
from engine_adapter.view import RunFold, RunView

__version__ = "0.1.0"

__all__ = [
    *_events.__all__,
    "DESTRUCTIVE",
    "AgentRunner",
    "ApprovalController",
    "ApprovalGrant",
    "ApprovalRequest",
    "CancelToken",
    "Classification",
    "EventSink",
    "GrantStore",
    "JournalError",
    "JsonlEventJournal",
    "PolicyDecision",
    "RunFold",
    "RunView",
    "Session",
    "SessionState",
    "TaskState",
    "classify_command",
    "grant_prefix",
    "load_policy",
    "read_journal",
]
