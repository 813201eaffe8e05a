"""The session boundary of cockpit: typed events, the `Session` with its two planes, standing
approval grants, the write-ahead journal, the pure fold, and the engines behind a session.

Never imports Textual: anything here runs headless, in a script, or under another UI.
"""

from .events import (
    AgentEnd,
    AgentStart,
    ApprovalRequested,
    ApprovalResolved,
    CancellationObserved,
    DecisionError,
    DeclarationRequired,
    EventParseError,
    HarnessEvent,
    ModelDecisionEvent,
    ModelRetry,
    ModelUpdate,
    ModelUsage,
    PhaseChanged,
    TaskEscalated,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    VerificationCheck,
    VerificationEnd,
    VerificationPlanFrozen,
    VerificationStart,
    parse_event,
)
from .fold import RunFold, RunView
from .grants import ApprovalGrant, grant_prefix
from .journal import JournalError, JsonlEventJournal, read_journal
from .runner import AgentRunner, ApprovalController, CancelToken, EventSink
from .session import Session
from .state import SessionState, TaskState

__version__ = "0.1.0"

__all__ = [
    "AgentEnd",
    "AgentRunner",
    "AgentStart",
    "ApprovalController",
    "ApprovalGrant",
    "ApprovalRequested",
    "ApprovalResolved",
    "CancelToken",
    "CancellationObserved",
    "DecisionError",
    "DeclarationRequired",
    "EventParseError",
    "EventSink",
    "HarnessEvent",
    "JournalError",
    "JsonlEventJournal",
    "ModelDecisionEvent",
    "ModelRetry",
    "ModelUpdate",
    "ModelUsage",
    "PhaseChanged",
    "RunFold",
    "RunView",
    "Session",
    "SessionState",
    "TaskEscalated",
    "TaskState",
    "ToolEnd",
    "ToolStart",
    "TurnEnd",
    "TurnStart",
    "VerificationCheck",
    "VerificationEnd",
    "VerificationPlanFrozen",
    "VerificationStart",
    "grant_prefix",
    "parse_event",
    "read_journal",
]
