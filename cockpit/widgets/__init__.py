"""The cockpit's widgets. They render a `RunView` (from `engine_adapter.view`), never a Session,
so the live cockpit and the replay viewer share them. Start with `RunDisplay`.

- `run_display`: `RunDisplay`, the whole picture of a run; `panels`: the status line, the
  verification and grants panels; `plan_panel`: the agent's plan; `transcript/` and
  `approval/`: the transcript and the approval bar; `question_form`: an agent's question as a
  form; `end_panel`: how a task ended; `composer`: the message box; `pager`, `scroll_box`,
  `key_hints`; `safe_text`: how untrusted text is displayed.
"""

from cockpit.widgets.approval import (
    ARM_SECONDS,
    ApprovalBar,
    ScopeChoice,
    always_text,
    project_label,
)
from cockpit.widgets.composer import MESSAGE_LIMIT, Composer
from cockpit.widgets.end_panel import EndPanel
from cockpit.widgets.key_hints import KeyHints
from cockpit.widgets.pager import TextPager
from cockpit.widgets.panels import GrantsPanel, StatusLine, VerificationPanel
from cockpit.widgets.plan_panel import PlanPanel
from cockpit.widgets.question_form import QuestionForm
from cockpit.widgets.run_display import RunDisplay
from cockpit.widgets.safe_text import clean, clean_line, styled, styled_line
from cockpit.widgets.scroll_box import scroll_panel_target
from cockpit.widgets.transcript import Transcript, item_text, raw_events_text

__all__ = [
    "ARM_SECONDS",
    "MESSAGE_LIMIT",
    "ApprovalBar",
    "Composer",
    "EndPanel",
    "GrantsPanel",
    "KeyHints",
    "PlanPanel",
    "QuestionForm",
    "RunDisplay",
    "ScopeChoice",
    "StatusLine",
    "TextPager",
    "Transcript",
    "VerificationPanel",
    "always_text",
    "clean",
    "clean_line",
    "item_text",
    "project_label",
    "raw_events_text",
    "scroll_panel_target",
    "styled",
    "styled_line",
]
