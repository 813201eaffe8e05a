"""How a run reads: the pure fold of events into view state, and the words every view shares.

Shared by the live cockpit, replay and export; no Textual, no I/O, no clock.

- `fold`: `RunFold.apply(event) -> Change`, the one fold (a handler per event type).
- `run_view`: `RunView`, what the cockpit shows as of the last event, and the `Change` flags.
- `items`: the transcript's rows; `records`: the immutable records (approvals, checks, grants,
  turns, commands) a view holds.
- `describe`: how each event reads to a human, one `Description` per event type; `wording`:
  durations, waits, verdicts and how a run's end reads; `task_end`: how a task ended (error
  first, the reply once, the files it changed); `input_fields`: a tool input laid out for a
  human; `diff_summary`: reading a unified diff an engine made.
"""

from engine_adapter.view.describe import (
    COMMAND_SIGILS,
    DESCRIBERS,
    SUMMARY_LIMIT,
    Description,
    Tone,
    command_token,
    describe,
    option_value_name,
    options_text,
    sandbox_warning,
)
from engine_adapter.view.diff_summary import (
    FileChange,
    LineKind,
    changed_files,
    diff_counts,
    diff_stats,
    line_kinds,
    merge_changes,
    preview_start,
)
from engine_adapter.view.fold import NOTHING, RunFold, fold_events
from engine_adapter.view.input_fields import (
    Field,
    input_fields,
    input_line,
    input_lookalikes,
    input_text,
    one_row,
)
from engine_adapter.view.items import (
    DecisionItem,
    DeferredText,
    EndItem,
    HistoryItem,
    Item,
    MessageItem,
    NoticeItem,
    QuestionItem,
    ToolCallItem,
    input_diff,
)
from engine_adapter.view.records import ApprovalView, CheckView, CommandView, GrantView, TurnView
from engine_adapter.view.run_view import (
    APPROVALS,
    COMMANDS,
    GRANTS,
    ITEMS,
    QUESTIONS,
    RUN,
    USAGE,
    VERIFICATION,
    Change,
    ChangeSet,
    RowMap,
    RunView,
)
from engine_adapter.view.task_end import (
    TaskEnd,
    changes_lines,
    reply_in_messages,
    reply_in_text,
    task_changes,
    task_end_of,
)
from engine_adapter.view.wording import (
    INPUT_CHANGED,
    approval_verdict,
    call_timing,
    duration_text,
    end_lines,
    input_changed_text,
    timing_text,
    verdict_text,
)

__all__ = [
    "APPROVALS",
    "COMMANDS",
    "COMMAND_SIGILS",
    "DESCRIBERS",
    "GRANTS",
    "INPUT_CHANGED",
    "ITEMS",
    "NOTHING",
    "QUESTIONS",
    "RUN",
    "SUMMARY_LIMIT",
    "USAGE",
    "VERIFICATION",
    "ApprovalView",
    "Change",
    "ChangeSet",
    "CheckView",
    "CommandView",
    "DecisionItem",
    "DeferredText",
    "Description",
    "EndItem",
    "Field",
    "FileChange",
    "GrantView",
    "HistoryItem",
    "Item",
    "LineKind",
    "MessageItem",
    "NoticeItem",
    "QuestionItem",
    "RowMap",
    "RunFold",
    "RunView",
    "TaskEnd",
    "Tone",
    "ToolCallItem",
    "TurnView",
    "approval_verdict",
    "call_timing",
    "changed_files",
    "changes_lines",
    "command_token",
    "describe",
    "diff_counts",
    "diff_stats",
    "duration_text",
    "end_lines",
    "fold_events",
    "input_changed_text",
    "input_diff",
    "input_fields",
    "input_line",
    "input_lookalikes",
    "input_text",
    "line_kinds",
    "merge_changes",
    "one_row",
    "option_value_name",
    "options_text",
    "preview_start",
    "reply_in_messages",
    "reply_in_text",
    "sandbox_warning",
    "task_changes",
    "task_end_of",
    "timing_text",
    "verdict_text",
]
