"""The session boundary of cockpit: typed events, the `Session` with its two planes, standing
approval grants and every shell rule (`shell`), saved grants, deny rules and approval policies
(`grants`), the write-ahead journal, the pure fold, and the engines behind a session.

Never imports Textual: anything here runs headless, in a script, or under another UI.

Every name below loads its module on first use (`from engine_adapter import Session` imports
the session and what it needs, nothing else), so a command that needs one family of the
boundary, or none, pays only for that: building the event models alone takes ~0.3 s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine_adapter.lazy import lazy_face
from engine_adapter.version import __version__

_HOMES: dict[str, str] = {
    "AgentChoice": "engine_adapter.events",
    "AgentCommand": "engine_adapter.events",
    "AgentConfig": "engine_adapter.events",
    "AgentEnd": "engine_adapter.events",
    "AgentInfo": "engine_adapter.events",
    "AgentMode": "engine_adapter.events",
    "AgentNotice": "engine_adapter.events",
    "AgentPlan": "engine_adapter.events",
    "AgentOption": "engine_adapter.events",
    "AgentReady": "engine_adapter.events",
    "AgentRunner": "engine_adapter.runner",
    "AgentStart": "engine_adapter.events",
    "AnswerValue": "engine_adapter.events",
    "ApprovalController": "engine_adapter.runner",
    "ApprovalGrant": "engine_adapter.shell",
    "ApprovalRequest": "engine_adapter.grants",
    "ApprovalRequested": "engine_adapter.events",
    "ApprovalResolved": "engine_adapter.events",
    "BaseEvent": "engine_adapter.events",
    "CancelToken": "engine_adapter.runner",
    "CancellationObserved": "engine_adapter.events",
    "Classification": "engine_adapter.shell",
    "CommandsAvailable": "engine_adapter.events",
    "DESTRUCTIVE": "engine_adapter.shell",
    "DecisionError": "engine_adapter.events",
    "DeclarationRequired": "engine_adapter.events",
    "EVENT_ADAPTER": "engine_adapter.events",
    "EVENT_CLASSES": "engine_adapter.events",
    "EVENT_TYPES": "engine_adapter.events",
    "EventParseError": "engine_adapter.events",
    "EventSink": "engine_adapter.runner",
    "GrantStore": "engine_adapter.grants",
    "HarnessEvent": "engine_adapter.events",
    "HistoryMessage": "engine_adapter.events",
    "HistoryTool": "engine_adapter.events",
    "JournalError": "engine_adapter.journal",
    "JsonlEventJournal": "engine_adapter.journal",
    "ModelDecisionEvent": "engine_adapter.events",
    "ModelRetry": "engine_adapter.events",
    "ModelUpdate": "engine_adapter.events",
    "ModelUsage": "engine_adapter.events",
    "PhaseChanged": "engine_adapter.events",
    "PolicyDecision": "engine_adapter.grants",
    "PromptNote": "engine_adapter.events",
    "FilesMentioned": "engine_adapter.events",
    "QuestionAnswered": "engine_adapter.events",
    "QuestionAsked": "engine_adapter.events",
    "QuestionField": "engine_adapter.events",
    "QuestionOption": "engine_adapter.events",
    "RunFold": "engine_adapter.view",
    "RunView": "engine_adapter.view",
    "Session": "engine_adapter.session",
    "SessionInfoChanged": "engine_adapter.events",
    "SessionState": "engine_adapter.state",
    "TaskEscalated": "engine_adapter.events",
    "TaskState": "engine_adapter.state",
    "ToolEnd": "engine_adapter.events",
    "ToolStart": "engine_adapter.events",
    "TurnEnd": "engine_adapter.events",
    "TurnStart": "engine_adapter.events",
    "VerificationCheck": "engine_adapter.events",
    "VerificationEnd": "engine_adapter.events",
    "VerificationPlanFrozen": "engine_adapter.events",
    "VerificationStart": "engine_adapter.events",
    "CheckpointTaken": "engine_adapter.events",
    "WorkspaceRewound": "engine_adapter.events",
    "ModeChanged": "engine_adapter.events",
    "classify_command": "engine_adapter.shell",
    "dump_event": "engine_adapter.events",
    "grant_prefix": "engine_adapter.shell",
    "load_policy": "engine_adapter.grants",
    "parse_error_text": "engine_adapter.events",
    "parse_event": "engine_adapter.events",
    "read_journal": "engine_adapter.journal",
    "stamped": "engine_adapter.events",
}
"""Each name of the face, and the module it is imported from on first use."""

__all__ = ["__version__", *_HOMES]

if TYPE_CHECKING:
    from engine_adapter.events import (
        EVENT_ADAPTER as EVENT_ADAPTER,
    )
    from engine_adapter.events import (
        EVENT_CLASSES as EVENT_CLASSES,
    )
    from engine_adapter.events import (
        EVENT_TYPES as EVENT_TYPES,
    )
    from engine_adapter.events import (
        AgentChoice as AgentChoice,
    )
    from engine_adapter.events import (
        AgentCommand as AgentCommand,
    )
    from engine_adapter.events import (
        AgentConfig as AgentConfig,
    )
    from engine_adapter.events import (
        AgentEnd as AgentEnd,
    )
    from engine_adapter.events import (
        AgentInfo as AgentInfo,
    )
    from engine_adapter.events import (
        AgentMode as AgentMode,
    )
    from engine_adapter.events import (
        AgentNotice as AgentNotice,
    )
    from engine_adapter.events import (
        AgentOption as AgentOption,
    )
    from engine_adapter.events import (
        AgentPlan as AgentPlan,
    )
    from engine_adapter.events import (
        AgentReady as AgentReady,
    )
    from engine_adapter.events import (
        AgentStart as AgentStart,
    )
    from engine_adapter.events import (
        AnswerValue as AnswerValue,
    )
    from engine_adapter.events import (
        ApprovalRequested as ApprovalRequested,
    )
    from engine_adapter.events import (
        ApprovalResolved as ApprovalResolved,
    )
    from engine_adapter.events import (
        BaseEvent as BaseEvent,
    )
    from engine_adapter.events import (
        CancellationObserved as CancellationObserved,
    )
    from engine_adapter.events import (
        CheckpointTaken as CheckpointTaken,
    )
    from engine_adapter.events import (
        CommandsAvailable as CommandsAvailable,
    )
    from engine_adapter.events import (
        DecisionError as DecisionError,
    )
    from engine_adapter.events import (
        DeclarationRequired as DeclarationRequired,
    )
    from engine_adapter.events import (
        EventParseError as EventParseError,
    )
    from engine_adapter.events import (
        FilesMentioned as FilesMentioned,
    )
    from engine_adapter.events import (
        HarnessEvent as HarnessEvent,
    )
    from engine_adapter.events import (
        HistoryMessage as HistoryMessage,
    )
    from engine_adapter.events import (
        HistoryTool as HistoryTool,
    )
    from engine_adapter.events import (
        ModeChanged as ModeChanged,
    )
    from engine_adapter.events import (
        ModelDecisionEvent as ModelDecisionEvent,
    )
    from engine_adapter.events import (
        ModelRetry as ModelRetry,
    )
    from engine_adapter.events import (
        ModelUpdate as ModelUpdate,
    )
    from engine_adapter.events import (
        ModelUsage as ModelUsage,
    )
    from engine_adapter.events import (
        PhaseChanged as PhaseChanged,
    )
    from engine_adapter.events import (
        PromptNote as PromptNote,
    )
    from engine_adapter.events import (
        QuestionAnswered as QuestionAnswered,
    )
    from engine_adapter.events import (
        QuestionAsked as QuestionAsked,
    )
    from engine_adapter.events import (
        QuestionField as QuestionField,
    )
    from engine_adapter.events import (
        QuestionOption as QuestionOption,
    )
    from engine_adapter.events import (
        SessionInfoChanged as SessionInfoChanged,
    )
    from engine_adapter.events import (
        TaskEscalated as TaskEscalated,
    )
    from engine_adapter.events import (
        ToolEnd as ToolEnd,
    )
    from engine_adapter.events import (
        ToolStart as ToolStart,
    )
    from engine_adapter.events import (
        TurnEnd as TurnEnd,
    )
    from engine_adapter.events import (
        TurnStart as TurnStart,
    )
    from engine_adapter.events import (
        VerificationCheck as VerificationCheck,
    )
    from engine_adapter.events import (
        VerificationEnd as VerificationEnd,
    )
    from engine_adapter.events import (
        VerificationPlanFrozen as VerificationPlanFrozen,
    )
    from engine_adapter.events import (
        VerificationStart as VerificationStart,
    )
    from engine_adapter.events import (
        WorkspaceRewound as WorkspaceRewound,
    )
    from engine_adapter.events import (
        dump_event as dump_event,
    )
    from engine_adapter.events import (
        parse_error_text as parse_error_text,
    )
    from engine_adapter.events import (
        parse_event as parse_event,
    )
    from engine_adapter.events import (
        stamped as stamped,
    )
    from engine_adapter.grants import (
        ApprovalRequest as ApprovalRequest,
    )
    from engine_adapter.grants import (
        GrantStore as GrantStore,
    )
    from engine_adapter.grants import (
        PolicyDecision as PolicyDecision,
    )
    from engine_adapter.grants import (
        load_policy as load_policy,
    )
    from engine_adapter.journal import (
        JournalError as JournalError,
    )
    from engine_adapter.journal import (
        JsonlEventJournal as JsonlEventJournal,
    )
    from engine_adapter.journal import (
        read_journal as read_journal,
    )
    from engine_adapter.runner import (
        AgentRunner as AgentRunner,
    )
    from engine_adapter.runner import (
        ApprovalController as ApprovalController,
    )
    from engine_adapter.runner import (
        CancelToken as CancelToken,
    )
    from engine_adapter.runner import (
        EventSink as EventSink,
    )
    from engine_adapter.session import (
        Session as Session,
    )
    from engine_adapter.shell import (
        DESTRUCTIVE as DESTRUCTIVE,
    )
    from engine_adapter.shell import (
        ApprovalGrant as ApprovalGrant,
    )
    from engine_adapter.shell import (
        Classification as Classification,
    )
    from engine_adapter.shell import (
        classify_command as classify_command,
    )
    from engine_adapter.shell import (
        grant_prefix as grant_prefix,
    )
    from engine_adapter.state import (
        SessionState as SessionState,
    )
    from engine_adapter.state import (
        TaskState as TaskState,
    )
    from engine_adapter.view import (
        RunFold as RunFold,
    )
    from engine_adapter.view import (
        RunView as RunView,
    )


__getattr__, __dir__ = lazy_face(__name__, _HOMES)
