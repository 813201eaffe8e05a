"""The fold of what an agent says to the human besides its work, and back: its questions and
their answers (a `QuestionItem` row; `RunView.questions` holds the open ones), the commands it
offers (`RunView.commands`) and the notes passed on to it (a notice row).

`dialogue_handlers(fold)` gives `RunFold` its handlers for these four events; the fold's rules
(pure, copy on write) hold here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .fold import COMMANDS, ITEMS, QUESTIONS, Change, CommandView, QuestionItem, RunFold

__all__ = ["dialogue_handlers"]


def dialogue_handlers(fold: RunFold) -> dict[str, Callable[[Any], Change]]:
    """The fold's handlers for `question_asked`, `question_answered`, `commands_available` and
    `prompt_note`."""

    def asked(e: Any) -> Change:
        v = fold.view
        change = fold._add(QuestionItem(v.task_index, v.turn or None, e.seq, e.question_id,
                                        e.message, list(e.fields), e.call_id))
        v.questions[e.question_id] = v.items[change.item]
        return Change(change.parts | QUESTIONS, change.item)

    def answered(e: Any) -> Change:
        v = fold.view
        row = v.questions.pop(e.question_id, None)
        if row is None:  # already closed, or its question is not in this view: find its row
            row = next((i for i in reversed(v.items) if type(i) is QuestionItem
                        and i.question_id == e.question_id and i.state == "pending"), None)
            if row is None:
                return Change(QUESTIONS)
        row = fold._own(row)
        row.seqs.append(e.seq)
        row.state, row.values, row.via, row.reason = e.action, e.values, e.via, e.reason
        return Change(ITEMS | QUESTIONS, row.index)

    def commands(e: Any) -> Change:
        fold.view.commands = tuple(CommandView(c.name, c.description, c.hint)
                                   for c in e.commands)
        return Change(COMMANDS)

    def note(e: Any) -> Change:
        return fold._notice("note", e)

    return {"question_asked": asked, "question_answered": answered,
            "commands_available": commands, "prompt_note": note}

