"""Caps on one event's journal line, applied where the Session writes it, so that every line it
writes reads back with its own strict reader.

The limits, and why:

- `MAX_DEPTH` (64): a line nests at most 64 JSON levels. The strict reader (pydantic's JSON
  parser) refuses lines nested more than 200 deep, pydantic's serializer fails at about 255,
  Python's `json` at about 1,000 (with `RecursionError`); real tool inputs nest a handful of
  levels. A container at level 64 that holds lists or objects is replaced by
  `{"…": "nested too deep (N levels cut)"}`, N being how far beyond level 64 it went.
- `MAX_LINE_BYTES` (4 MiB): one event line at most. Viewers decode lines on the event loop
  (pydantic parses a 4 MiB line in about 7 ms, 30 ms when every character is escaped), and
  every engine already caps what it sends well below this (tool output 32-64 KB, a streamed
  chunk 256 KB, a terminal 1 MiB); what is left over is a pasted file. A bigger event has its
  longest texts cut (`…[N characters cut]`), then long lists and objects (`… N more items cut`,
  `"…": "N more keys cut"`), step by step until it fits.
- Text JSON cannot carry (lone surrogates, which a JSON `"\\ud800"` escape decodes to) becomes
  U+FFFD; bytes become text; a value of a type JSON has no form for becomes its `repr`.

Events that fit, which is nearly all of them, cost one serialisation and two byte counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import islice
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from engine_adapter.events.base import BaseEvent
from engine_adapter.events.schema import dump_event

__all__ = ["MAX_DEPTH", "MAX_LINE_BYTES", "bounded_line", "line_depth"]

_Model = TypeVar("_Model", bound=BaseModel)

MAX_DEPTH = 64
"""JSON levels one journal line may nest (the event object itself is level 1)."""
MAX_LINE_BYTES = 4 << 20
"""Bytes one journal line may hold (without its newline)."""

_WALK_ITEMS = 250_000  # values of lists and objects looked at in one pass before the rest is cut
_MEASURE_NODES = 100_000  # values looked at to say how deep a cut part went
# (text limit, item limit) for each pass over an event too big for a line: each cuts harder,
# and the last cannot fail (at most 256 items looked at, texts and keys of 256 characters). The
# first keeps as much as a line can hold of one huge text (a tool's output, a file).
_PASSES = [(MAX_LINE_BYTES - (64 << 10), 1 << 18)] + [
    (MAX_LINE_BYTES >> shift, max(16, MAX_LINE_BYTES >> (shift + 4)))
    for shift in (2, 4, 6, 8, 10, 14)]
_LEVEL = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')  # a string, or a bracket outside one
_SURROGATE = re.compile("[\ud800-\udfff]")
_OPEN = frozenset(b"[{")


def line_depth(line: bytes, *, stop: int | None = None) -> int:
    """How many levels a JSON text nests (`{}` is 1), counting no further than `stop + 1`."""
    depth = deepest = 0
    for match in _LEVEL.finditer(line):
        char = line[match.start()]
        if char in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop is not None and deepest > stop:
                    break
        elif char != 0x22:  # a closing bracket (0x22 is the quote a string starts with)
            depth -= 1
    return deepest


def bounded_line(event: BaseEvent) -> tuple[BaseEvent, bytes]:
    """`event` and its journal line (with the newline), within `MAX_DEPTH` and `MAX_LINE_BYTES`.

    An event within both is returned as it is, with its line. Otherwise a copy with the deep or
    big parts replaced by visible markers is returned, with its line: the copy is what the run's
    history and its observers get, so they see what the journal holds.
    """
    line: bytes | None
    try:
        line = event.__pydantic_serializer__.to_json(event)  # (dump_event, without a call)
    except (PydanticSerializationError, ValueError):
        line = None
    # Fewer brackets than levels allowed cannot nest too deep (most events have one or two).
    if line is not None and len(line) <= MAX_LINE_BYTES and (
            line.count(b"{") + line.count(b"[") < MAX_DEPTH
            or line_depth(line, stop=MAX_DEPTH) <= MAX_DEPTH):
        return event, line + b"\n"
    # Too big: start cutting texts at once. Too deep or not serialisable: first only fix that.
    passes: list[tuple[int | None, int | None]] = [(None, None)] if line is None or len(
        line) <= MAX_LINE_BYTES else []
    passes += _PASSES
    capped, line = event, b""
    for text_limit, item_limit in passes:
        capped, line = _cut_and_dump(event, text_limit, item_limit)
        if len(line) <= MAX_LINE_BYTES:
            break
    return capped, line + b"\n"


def _cut_and_dump(event: BaseEvent, text_limit: int | None,
                  item_limit: int | None) -> tuple[BaseEvent, bytes]:
    capped = _Cutter(text_limit, item_limit, as_repr=False).model(event, 1)
    try:
        return capped, dump_event(capped)
    except (PydanticSerializationError, ValueError):  # a value of a type JSON has no form for
        capped = _Cutter(text_limit, item_limit, as_repr=True).model(event, 1)
        return capped, dump_event(capped)


_CONTAINERS = (dict, list, tuple, set, frozenset, BaseModel)


def _children(node: Any) -> Iterable[Any]:
    if isinstance(node, dict):
        return node.values()
    return (value for _, value in node) if isinstance(node, BaseModel) else node


def _holds_containers(value: Any) -> bool:
    return any(isinstance(child, _CONTAINERS) for child in _children(value))


class _Cutter:
    """One pass over an event: every value copied, with what is too deep or too long cut.

    `text_limit` / `item_limit`: characters of one text, items of one list or object kept
    (`None`: no limit). Whatever the limits, at most `_WALK_ITEMS` items are looked at.
    """

    def __init__(self, text_limit: int | None, item_limit: int | None, *, as_repr: bool) -> None:
        self.text_limit = text_limit
        self.item_limit = item_limit
        self.as_repr = as_repr
        self.items_left = _WALK_ITEMS if item_limit is None else min(_WALK_ITEMS, 16 * item_limit)
        self.measure_left = _MEASURE_NODES

    def value(self, value: Any, depth: int) -> Any:
        """`value`, sitting at JSON level `depth` if it is a list or an object, capped."""
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, _CONTAINERS):
            # At the last level allowed, a container may hold only scalars. (Only untyped
            # values nest this deep: events themselves are shallow.)
            if depth >= MAX_DEPTH and _holds_containers(value):
                return self.too_deep(value)
            if isinstance(value, BaseModel):
                return self.model(value, depth)
            if isinstance(value, dict):
                return self.mapping(value.items(), depth, len(value))
            return self.sequence(value, depth)
        if isinstance(value, bytes | bytearray | memoryview):
            return self.text(bytes(value).decode("utf-8", "replace"))
        return self.text(repr(value)) if self.as_repr else value

    def text(self, text: str) -> str:
        if not text.isascii() and _SURROGATE.search(text):
            # A lone surrogate cannot be written as UTF-8; a pair split in two is joined again.
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        limit = self.text_limit
        if limit is not None and len(text) > limit:
            return f"{text[:limit]}…[{len(text) - limit:,} characters cut]"
        return text

    def model(self, model: _Model, depth: int) -> _Model:
        """A copy of a pydantic model (an event, a verification check) with its values capped.
        Declared fields are always kept (their texts may be cut); extra fields count as items."""
        fields = {name: self.value(getattr(model, name), depth + 1)
                  for name in type(model).model_fields}
        extra = model.__pydantic_extra__
        if extra:
            fields.update(self.mapping(
                ((key, value) for key, value in extra.items() if key not in fields),
                depth, len(extra)))
        return type(model).model_construct(model.model_fields_set, **fields)

    def mapping(self, items: Iterable[tuple[Any, Any]], depth: int,
                total: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        keep = self._keep(total)
        for key, value in items:
            if len(out) >= keep:
                break
            self.items_left -= 1
            name = self.text(key if isinstance(key, str) else str(key))
            while name in out:  # two long keys cut to the same text
                name += "′"
            out[name] = self.value(value, depth + 1)
        if total > len(out):
            marker = "…"
            while marker in out:
                marker += "…"
            out[marker] = f"{total - len(out):,} more keys cut"
        return out

    def sequence(self, items: list[Any] | tuple[Any, ...] | set[Any] | frozenset[Any],
                 depth: int) -> list[Any]:
        total = len(items)
        models = total > 0 and isinstance(next(iter(items)), BaseModel)
        # A list of models (a plan's checks) is typed: kept whole while the pass's budget lasts.
        keep = self._keep(total, limited=not models)
        out: list[Any] = []
        for item in items:
            if len(out) >= keep:
                break
            self.items_left -= 1
            out.append(self.value(item, depth + 1))
        cut = total - len(out)
        if cut and models and out and isinstance(out[-1], BaseModel):
            # Such a list can only hold models: the last one kept says what was cut.
            out[-1] = out[-1].model_copy(update={"…": f"{cut:,} more items cut"})
        elif cut:
            out.append(f"… {cut:,} more items cut")
        return out

    def _keep(self, total: int, *, limited: bool = True) -> int:
        limit = total if self.item_limit is None or not limited else min(total, self.item_limit)
        return max(0, min(limit, self.items_left))

    def too_deep(self, value: Any) -> dict[str, str]:
        """The marker that replaces `value`: how many levels it went beyond the last allowed."""
        levels, exact = self._measure(value)
        levels -= 1  # the marker keeps the level `value` was at
        counted = f"{levels:,}" if exact else f"at least {levels:,}"
        return {"…": f"nested too deep ({counted} level{'s' if levels != 1 else ''} cut)"}

    def _measure(self, value: Any) -> tuple[int, bool]:
        """How many levels `value` nests, looking at no more than the measuring budget (a cycle
        or a huge part is "at least" what was seen)."""
        deepest, stack = 0, [(value, 1)]
        while stack:
            node, level = stack.pop()
            deepest = max(deepest, level)
            for child in islice(_children(node), self.measure_left + 1):
                self.measure_left -= 1
                if self.measure_left < 0:
                    return deepest, False
                if isinstance(child, _CONTAINERS):
                    stack.append((child, level + 1))
        return deepest, True
