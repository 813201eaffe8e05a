"""The fold of what an agent says to the human besides its work, and back: its questions and
their answers (a `QuestionItem` row; `RunView.questions` holds the open ones), the commands it
offers (`RunView.commands`), the notes passed on to it and its own notices (notice rows), the
conversation it replayed when opened again (a `HistoryItem` row) and its session's settings and
title.

`dialogue_handlers(fold)` gives `RunFold` its handlers for these events; the fold's rules (pure,
one owner for each row: changed only through `RunView.own_row`) hold here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine_adapter.view import COMMANDS, ITEMS, QUESTIONS, RUN, Change
from engine_adapter.view_dialogue import CommandView, HistoryItem, QuestionItem

if TYPE_CHECKING:
    from engine_adapter.fold import RunFold

__all__ = ["dialogue_handlers"]


def dialogue_handlers(fold: RunFold) -> dict[str, Callable[[Any], Change]]:
    """The fold's handlers for `question_asked`, `question_answered`, `commands_available`,
    `prompt_note`, `agent_notice`, `agent_config`, `session_info` and `history_*`."""

    def asked(e: Any) -> Change:
        v = fold.view
        change = fold._add(QuestionItem(v.task_index, v.turn or None, e.seq, e.question_id,
                                        e.message, list(e.fields), e.call_id))
        v.question_rows[e.question_id] = change.item
        return Change(change.parts | QUESTIONS, change.item)

    def answered(e: Any) -> Change:
        v = fold.view
        index = v.question_rows.pop(e.question_id, None)
        if index is None:  # already closed, or its question is not in this view: find its row
            index = next((i for i in range(len(v.items) - 1, -1, -1)
                          if type(v.items[i]) is QuestionItem
                          and v.items[i].question_id == e.question_id  # type: ignore
                          and v.items[i].state == "pending"), None)  # type: ignore
            if index is None:
                return Change(QUESTIONS)
        row: Any = v.own_row(index)
        row.seqs.append(e.seq)
        row.state, row.values, row.via, row.reason = e.action, e.values, e.via, e.reason
        return Change(ITEMS | QUESTIONS, index)

    def commands(e: Any) -> Change:
        fold.view.commands = tuple(CommandView(c.name, c.description, c.hint)
                                   for c in e.commands)
        return Change(COMMANDS)

    def note(e: Any) -> Change:
        return fold._notice("note", e)

    def agent_notice(e: Any) -> Change:
        return fold._notice("agent_notice", e)

    def agent_config(e: Any) -> Change:
        v = fold.view
        v.options = tuple(e.options)
        model = next((o for o in v.options if o.category == "model" or o.id == "model"), None)
        if model is not None and isinstance(model.value, str):
            v.model = model.value
        return Change(RUN)

    def session_info(e: Any) -> Change:
        fold.view.title = e.title  # the session's info as it stands (None: no title now)
        return Change(RUN)

    def history(e: Any) -> tuple[HistoryItem, Change]:
        """The open history item (the last item, when it is one), or a new one."""
        v = fold.view
        items = v.items
        if items and type(items[-1]) is HistoryItem:
            item: Any = v.own_row(len(items) - 1)
            item.seqs.append(e.seq)
            return item, Change(ITEMS, item.index)
        item = HistoryItem(v.task_index, e.seq)
        return item, fold._add(item)

    def history_message(e: Any) -> Change:
        item, change = history(e)
        item.add_text(e.role, e.text)
        return change

    def history_tool(e: Any) -> Change:
        item, change = history(e)
        status = f" ({e.status})" if e.status else ""
        item.set_tool(e.call_id, f"{e.title or e.tool}{status}")
        return change

    return {"question_asked": asked, "question_answered": answered,
            "commands_available": commands, "prompt_note": note, "agent_notice": agent_notice,
            "agent_config": agent_config, "session_info": session_info,
            "history_message": history_message, "history_tool": history_tool}
