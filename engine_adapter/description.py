"""`Description`: how one event reads (label, text, tone, icon, lead, details), and its `Tone`."""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = ["Description", "Tone"]

Tone = Literal["plain", "strong", "dim", "good", "bad", "warn", "info", "accent"]
"""How a line should stand out; each view maps it to its own colours."""

_LEVELS = {"bad": "error", "warn": "warning"}


class Description(NamedTuple):
    """How one event reads.

    `label` heads a headless line; `text` is what happened, one line; `icon` and `lead` begin
    the transcript's line for it (`line`); `details` are lines that belong under it (an
    agent's stderr tail, a model's raw reply)."""

    label: str
    text: str
    tone: Tone = "plain"
    icon: str = "·"
    lead: str = ""
    details: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The transcript's and the export's line: icon, lead, text."""
        return f"{self.icon} {self.lead}{self.text}"

    @property
    def level(self) -> str:
        """The fold's notice level: "info", "warning" or "error"."""
        return _LEVELS.get(self.tone, "info")
