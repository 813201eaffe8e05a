"""How a tool call's input is laid out for a human: every key, labelled, in one order.

An approval covers the whole input, so every view shows all of it: the command (`$ git diff`),
a second command key beside it (`cmd: …`), `env`, `cwd`, `argv`, paths, the diff — nothing is
left out because it is not "the command". The approval bar, the transcript row, the pager,
the headless line and the export all lay the input out from `input_fields`, so they cannot
disagree about what a call asked for. Values are returned raw (untrusted): each view displays
unsafe characters its own way (see `engine_adapter.text`).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engine_adapter.lookalikes import (
    MAX_WORDS,
    SCAN_LIMIT,
    LookalikeMark,
    lookalike_marks,
    lookalike_scan,
    marks_line,
)
from engine_adapter.view.diff_summary import diff_stats

__all__ = ["Field", "input_fields", "input_line", "input_lookalikes", "input_text", "one_row"]

VALUE_LIMIT = 1_000_000  # characters of one value laid out (views cut far below this)


@dataclass(frozen=True, slots=True)
class Field:
    """One key of a tool input, ready to show: `label` is `$` for the command line; a
    `pairs` value (an environment) has one `NAME=value` a line."""

    key: str
    label: str
    value: str
    kind: Literal["command", "diff", "pairs", "text"]


def one_row(text: str) -> str:
    """`text` on one row: each line break shown as `⏎` (a key, or a value in `input_line`)."""
    return text.replace("\r\n", "\n").replace("\n", "⏎") if "\n" in text else text


def _label(key: str) -> str:
    """How a key is labelled: on one row (a key cannot break a line and pass for another key),
    and in quotes when it could pass for something else: the command line (`$ …`), a value's
    indented continuation (a leading space), or nothing at all (an empty key). Only quotes are
    added: each view still shows its unsafe characters its own way."""
    label = one_row(key)
    if not label or label[0].isspace() or label.startswith("$"):
        return f'"{label}"'
    return label


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _pairs(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(_scalar(v) for v in value.values())


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    except (TypeError, ValueError, RecursionError):
        return "(a value that cannot be shown: nested too deep or not JSON)"


def _words(words: list[str]) -> str:
    """Words as a shell would need them typed (`'a b'` for a word with a space)."""
    return shlex.join(word[:VALUE_LIMIT] for word in words)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value[:VALUE_LIMIT]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return _words(value)
    if _pairs(value):
        # An environment, say: one NAME=value a line, values quoted as a shell would and a
        # line break inside one shown as `⏎` (so each line is exactly one pair).
        return "\n".join(
            f"{one_row(str(k))}="
            + one_row(shlex.quote(v[:VALUE_LIMIT]) if isinstance(v, str) else _json(v))
            for k, v in value.items())
    return _json(value)[:VALUE_LIMIT]


def input_fields(tool_input: Mapping[str, Any] | None) -> list[Field]:
    """Every key of `tool_input` as a `Field`, in the order a human should read them: the
    command line first (`command`, else `argv`), then the keys whose value fits one line (in
    input order), then the diff, then the longer values."""
    if not tool_input:
        return []
    if not isinstance(tool_input, Mapping):
        return [Field("input", "input", _value(tool_input), "text")]
    primary = None
    if isinstance(tool_input.get("command"), str):
        primary = "command"
    elif isinstance(tool_input.get("argv"), list) and all(
            isinstance(w, str) for w in tool_input["argv"]):
        primary = "argv"
    first: list[Field] = []
    short: list[Field] = []
    diffs: list[Field] = []
    long: list[Field] = []
    for raw_key, raw_value in tool_input.items():
        key = str(raw_key)
        label = _label(key)
        value = _value(raw_value)
        if key == primary:
            first.append(Field(key, "$", value, "command"))
        elif key == "diff" and isinstance(raw_value, str):
            diffs.append(Field(key, label, value, "diff"))
        elif _pairs(raw_value):
            (long if "\n" in value else short).append(Field(key, label, value, "pairs"))
        elif "\n" in value:
            long.append(Field(key, label, value, "text"))
        else:
            short.append(Field(key, label, value, "text"))
    return first + short + diffs + long


def input_line(tool_input: Mapping[str, Any] | None, *, limit: int | None = None) -> str:
    """The whole input on one line: `$ git diff · env: A=1 · cwd: /x · diff: +3 −1`.

    Line breaks inside a value are shown as `⏎`, so a second command on a new line cannot pass
    for an argument of the first. `limit` cuts each value (the caller cuts the line)."""
    parts = []
    for field in input_fields(tool_input):
        value = field.value
        if field.kind == "diff":
            value = diff_stats(value)
        elif field.kind == "pairs":  # NAME=value NAME2=value2, as a shell line would set them
            value = value.replace("\n", " ")
        if limit is not None and len(value) > limit:
            value = value[:limit] + "…"
        value = one_row(value)
        # (by kind, never by label: a key named "$" must not pass for the command line)
        parts.append(f"$ {value}" if field.kind == "command" else f"{field.label}: {value}")
    return " · ".join(parts)


def input_text(tool_input: Mapping[str, Any] | None) -> str:
    """The whole input over several lines, for a pager or a report: the command line as
    `$ …` (its own lines as they are), every other key as `key: value`, a value of several
    lines starting on the next line, indented by two spaces."""
    out: list[str] = []
    for field in input_fields(tool_input):
        if field.kind == "command":
            out.append(f"$ {field.value}")
        elif "\n" in field.value:
            out.append(f"{field.label}:")
            out.extend("  " + line for line in field.value.split("\n"))
        else:
            out.append(f"{field.label}: {field.value}")
    return "\n".join(out)


def input_lookalikes(tool_input: Mapping[str, Any] | None, prefix: str = "", *,
                     tool: str = "") -> str:
    """The look-alike characters of a call's input in one line ("" for none, nearly always):
    in the command (a program word in any non-ASCII letter, a word mixing scripts, full-width
    letters, invisibles) and in every other key and value (mixed words, full-width letters,
    invisibles — a key `cоmmand` with a Cyrillic `о` too), in the grant prefix `prefix`, and
    in the tool's name (`shеll` is not `shell`: a grant is for a tool and a prefix). A value
    the scan could not read whole (`lookalike_scan`) says so.
    See `engine_adapter.lookalikes`."""
    marks: list[LookalikeMark] = lookalike_marks(tool) if tool else []
    unchecked = False
    for field in input_fields(tool_input):
        command = field.kind == "command"
        found, complete = lookalike_scan(field.value, command=command)
        marks += found
        unchecked = unchecked or not complete
        if not command:
            marks += lookalike_marks(field.key, command=False)
    if prefix:
        marks += lookalike_marks(prefix)
    unique = list({mark.describe(): mark for mark in marks}.values())
    line = marks_line(unique)
    if unchecked:
        note = (f"not checked past the first {SCAN_LIMIT:,} characters or {MAX_WORDS:,} "
                f"words of a value")
        line = f"{line}; {note}" if line else f"look-alike or hidden characters {note}"
    return line
