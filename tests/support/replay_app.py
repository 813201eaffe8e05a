"""Driving the replay viewer (Pilot): waiting for what it shows, and comparing it with the fold."""

from __future__ import annotations

from engine_adapter.view import RunFold
from support.journals import summary


def opened(app) -> bool:
    screen = app.replay_screen
    return screen is not None and screen.complete and app.position_shown >= 0


def shown_equals_fold(app, events, cursor: int) -> bool:
    screen = app.replay_screen
    return summary(screen.view) == summary(RunFold().apply_all(events[:cursor + 1]))

