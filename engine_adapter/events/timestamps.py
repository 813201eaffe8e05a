"""Event timestamps: the range an event's `ts` may take, and one display that never raises.

`ts` is unix seconds. The schema accepts `0 <= ts < MAX_TS` (0 is the placeholder an engine's
event carries until the Session stamps it; `MAX_TS` is 10000-01-01 UTC, past which `time` and
`datetime` cannot show a date). NaN, infinities, negative and later times are rejected where an
event is parsed, so a journal line that carries one is a bad line, never a crash in a view.
Views still format times through `format_ts`, which shows anything else as "bad time".
"""

from __future__ import annotations

import math
import time
from typing import Annotated, TypeGuard

from pydantic import Field

__all__ = ["BAD_TIME", "MAX_TS", "Timestamp", "format_ts", "is_valid_ts"]

MAX_TS = 253_402_300_800.0
"""10000-01-01T00:00:00Z in unix seconds: every valid `ts` is below it."""

BAD_TIME = "bad time"
"""What a view shows for a timestamp outside the valid range."""

Timestamp = Annotated[float, Field(ge=0.0, lt=MAX_TS, allow_inf_nan=False, strict=True)]
"""The type of an event's `ts`: finite unix seconds in `[0, MAX_TS)`."""


def is_valid_ts(value: object) -> TypeGuard[int | float]:
    """Whether `value` is a number an event's `ts` may hold (an int or float, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    # An int is compared as an int: float(10**400) would raise rather than answer.
    return 0 <= value < MAX_TS and (isinstance(value, int) or math.isfinite(value))


def format_ts(value: object, fmt: str = "%Y-%m-%d %H:%M:%S", *, millis: bool = False) -> str:
    """`value` (unix seconds) as local time in `fmt`, plus `.mmm` with `millis`; "bad time" for
    anything that is not a valid timestamp (or that this platform's clock cannot show)."""
    if not is_valid_ts(value):
        return BAD_TIME
    seconds = float(value)
    try:
        text = time.strftime(fmt, time.localtime(seconds))
    except (OverflowError, OSError, ValueError):  # e.g. Windows stops at year 3000
        return BAD_TIME
    return f"{text}.{int(seconds % 1 * 1000):03d}" if millis else text
