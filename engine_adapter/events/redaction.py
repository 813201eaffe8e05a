"""An event with the secrets in its texts redacted (`engine_adapter.redact`), for the Session to
journal and publish: every string field, at any depth (a tool's input, a check's command, the
extra fields an engine added), dictionary keys included."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine_adapter.events.base import BaseEvent
from engine_adapter.events.caps import bounded_line
from engine_adapter.redact import may_hold_secret, redact

__all__ = ["redacted_event", "redacted_line"]

_DEPTH = 64  # deeper parts were cut by the caps already; never recurse without a bound


def redacted_line(event: BaseEvent, line: bytes) -> tuple[BaseEvent, bytes]:
    """`event` and its journal line (`bounded_line`'s), or, when a secret shape is in the line,
    a copy with each one redacted and that copy's line. Costs one scan of the line otherwise."""
    if not may_hold_secret(line):
        return event, line
    clean = redacted_event(event)
    if clean is event:
        return event, line
    return bounded_line(clean)


def redacted_event(event: BaseEvent) -> BaseEvent:
    """A copy of `event` with every secret in its texts redacted; `event` itself when none."""
    clean: BaseEvent = _model(event, 0)
    return clean


def _model(model: Any, depth: int) -> Any:
    changed: dict[str, Any] = {}
    fields = dict(model.__dict__)
    fields.update(model.__pydantic_extra__ or {})
    for name, value in fields.items():
        clean = _value(value, depth + 1)
        if clean is not value:
            changed[name] = clean
    return model.model_copy(update=changed) if changed else model


def _value(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return redact(value)
    if depth > _DEPTH:
        return value
    if isinstance(value, dict):
        items = [(_value(k, depth + 1), _value(v, depth + 1)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        cleaned = [_value(v, depth + 1) for v in value]
        if all(c is v for c, v in zip(cleaned, value, strict=True)):
            return value
        return type(value)(cleaned) if isinstance(value, tuple) else cleaned
    if isinstance(value, BaseModel):
        return _model(value, depth)
    return value
