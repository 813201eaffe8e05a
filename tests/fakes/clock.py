"""A clock a test moves by hand: time passes only when the test says so, so a delay is tested
without waiting for it."""

from __future__ import annotations


class FakeClock:
    """Monotonic seconds that stand still until `advance()`; call it like `time.monotonic`."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Let `seconds` pass."""
        self.now += seconds
