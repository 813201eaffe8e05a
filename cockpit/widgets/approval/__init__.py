"""The approval bar: the oldest pending approval in full, and what each key would do.

- `bar`: `ApprovalBar`; `input`: every key of the call's input, styled and cut to the bar;
  `scope`: after `a`, what each scope of a grant would allow; `arming`: which request a key
  answers (the one drawn) and from when (`ARM_SECONDS` after it was first drawn).
"""

from cockpit.widgets.approval.arming import ARM_SECONDS, KeyArming, Target
from cockpit.widgets.approval.bar import ApprovalBar
from cockpit.widgets.approval.scope import ScopeChoice, always_text, project_label

__all__ = ["ARM_SECONDS", "ApprovalBar", "KeyArming", "ScopeChoice", "Target", "always_text",
           "project_label"]
