"""An agent's questions to the human: checking an answer against the question's fields, and how
an answer reads.

The form a human fills in and the values an engine passes back are checked here, once, by the
Session (the control plane), never only by the widget that collected them: a value of the wrong
kind, an option the question did not offer or a missing required field is refused with a
`AnswerError` saying which field and why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from engine_adapter.events.agent import AnswerValue, QuestionField
from engine_adapter.text import cap

__all__ = [
    "TEXT_LIMIT",
    "Answer",
    "AnswerAction",
    "AnswerError",
    "answer_text",
    "check_answer",
    "field_kind_text",
    "field_label",
    "fields_text",
]

AnswerAction = Literal["accept", "decline", "cancel"]

TEXT_LIMIT = 20_000
"""Characters one text answer may have (a human types it; an agent reads it)."""


class Answer(NamedTuple):
    """What the engine hands back to the agent: the action and, for `accept`, the values."""

    action: AnswerAction
    values: dict[str, AnswerValue] | None = None


class AnswerError(ValueError):
    """An answer that does not fit its question; the message names the field and why."""


def field_label(field: QuestionField) -> str:
    """How a field is named to a human: its title, else its name."""
    return field.title or field.name


def field_kind_text(field: QuestionField) -> str:
    """What a field takes, in words: `text`, `a whole number`, `yes/no`, `one of: a, b`."""
    labels = [option.label or option.value for option in field.options or []]
    kind = {"text": f"text ({field.format})" if field.format else "text",
            "number": "a number", "integer": "a whole number", "boolean": "yes/no",
            "choice": "one of: " + ", ".join(labels),
            "multi": "any of: " + ", ".join(labels)}[field.kind]
    return kind + (", required" if field.required else "")


def fields_text(fields: Iterable[QuestionField]) -> str:
    """A question's form in one line: `Name (text, required) · Tests (yes/no)`."""
    return " · ".join(f"{field_label(field)} ({field_kind_text(field)})" for field in fields)


def _number(field: QuestionField, value: object) -> float | int:
    if isinstance(value, bool):
        raise AnswerError(f"{field_label(field)}: a number is needed, not yes/no")
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text) if field.kind == "integer" else float(text)
        except ValueError:
            what = "a whole number" if field.kind == "integer" else "a number"
            shown = cap(text, chars=64)
            raise AnswerError(f"{field_label(field)}: {what} is needed, not {shown!r}") from None
    if field.kind == "integer":
        if isinstance(value, float):
            if not value.is_integer():
                raise AnswerError(f"{field_label(field)}: a whole number is needed")
            value = int(value)
        if not isinstance(value, int):
            raise AnswerError(f"{field_label(field)}: a whole number is needed")
    elif not isinstance(value, int | float) or not math.isfinite(value):
        raise AnswerError(f"{field_label(field)}: a number is needed")
    if field.minimum is not None and value < field.minimum:
        raise AnswerError(f"{field_label(field)}: at least {field.minimum:g}")
    if field.maximum is not None and value > field.maximum:
        raise AnswerError(f"{field_label(field)}: at most {field.maximum:g}")
    return value


def _text(field: QuestionField, value: Any) -> str:
    if not isinstance(value, str):
        raise AnswerError(f"{field_label(field)}: text is needed")
    if len(value) > TEXT_LIMIT:
        raise AnswerError(f"{field_label(field)}: at most {TEXT_LIMIT:,} characters")
    if field.minimum is not None and len(value) < field.minimum:
        raise AnswerError(f"{field_label(field)}: at least {field.minimum:g} characters")
    if field.maximum is not None and len(value) > field.maximum:
        raise AnswerError(f"{field_label(field)}: at most {field.maximum:g} characters")
    return value


def _boolean(field: QuestionField, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "no", "true", "false"):
        return value.strip().lower() in ("yes", "true")
    raise AnswerError(f"{field_label(field)}: yes or no is needed")


def _offered(field: QuestionField) -> list[str]:
    return [option.value for option in field.options or []]


def _choice(field: QuestionField, value: Any) -> str:
    if not isinstance(value, str) or value not in _offered(field):
        raise AnswerError(f"{field_label(field)}: choose one of the options offered")
    return value


def _multi(field: QuestionField, value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise AnswerError(f"{field_label(field)}: a list of the options offered is needed")
    offered = _offered(field)
    chosen: list[str] = []
    for item in value:
        if not isinstance(item, str) or item not in offered:
            raise AnswerError(f"{field_label(field)}: choose only among the options offered")
        if item not in chosen:
            chosen.append(item)
    if field.minimum is not None and len(chosen) < field.minimum:
        raise AnswerError(f"{field_label(field)}: choose at least {field.minimum:g}")
    if field.maximum is not None and len(chosen) > field.maximum:
        raise AnswerError(f"{field_label(field)}: choose at most {field.maximum:g}")
    return chosen


_CHECKS = {"text": _text, "number": _number, "integer": _number, "boolean": _boolean,
           "choice": _choice, "multi": _multi}


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (
        isinstance(value, list) and not value)


def check_answer(fields: Iterable[QuestionField],
                 values: Mapping[str, Any]) -> dict[str, AnswerValue]:
    """`values` checked against `fields`: each value of the kind its field asks for (a number
    given as text is read as one), every required field answered, nothing the question did not
    ask. An empty optional field is left out. Raises `AnswerError` for the first problem."""
    known = {field.name: field for field in fields}
    extra = [name for name in values if name not in known]
    if extra:
        raise AnswerError(f"{cap(extra[0], chars=64)}: the question has no such field")
    checked: dict[str, AnswerValue] = {}
    for name, field in known.items():
        value = values.get(name)
        if value is None or (field.kind != "boolean" and _empty(value)):
            if field.required:
                raise AnswerError(f"{field_label(field)}: an answer is required")
            continue
        checked[name] = _CHECKS[field.kind](field, value)
    return checked


def _value_text(field: QuestionField | None, value: AnswerValue) -> str:
    labels = {o.value: (o.label or o.value) for o in (field.options or [])} if field else {}
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(labels.get(item, item) for item in value) or "(none)"
    if isinstance(value, str):
        return labels.get(value, value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def answer_text(fields: Sequence[QuestionField], action: str,
                values: Mapping[str, AnswerValue] | None, *, via: str = "human",
                reason: str | None = None, human: str = "you") -> str:
    """How an answer reads, in one line: `answered by you: Name: Ada · Tests: yes`,
    `declined automatically (no human is present)`, `cancelled (the run was cancelled)`."""
    who = f"by {human}" if via == "human" else "automatically"
    if action == "accept":
        by_name = {field.name: field for field in fields}
        parts = [f"{field_label(by_name[name]) if name in by_name else name}: "
                 f"{_value_text(by_name.get(name), value)}"
                 for name, value in (values or {}).items()]
        return f"answered {who}" + (": " + " · ".join(parts) if parts else " (no values)")
    verb = "declined" if action == "decline" else "cancelled"
    return f"{verb} {who}" + (f" ({reason})" if reason else "")
