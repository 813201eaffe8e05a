"""The Session: one run of an engine, with its two planes.

- `session`: `Session` (events out through `events()`, control in through `resolve_approval()`,
  `answer_question()` and `cancel()`).
- `history`: the append-only log every `events()` stream is a cursor into.
- `approvals`: `ApprovalDesk`, the Session's approvals (gated calls asked, answered by rules,
  grants, policies or the human); `question_desk`: `QuestionDesk`, the questions waiting for the
  human; `cancel`: the cancel token.
"""

from engine_adapter.session.session import Session

__all__ = ["Session"]
