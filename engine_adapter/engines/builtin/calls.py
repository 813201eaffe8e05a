"""One tool call of the built-in engine as the loop handles it (`Call`), a tool that ran and
failed (`Failed`), and how long a call or a check took (`ms_since`)."""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass
from typing import Any, Literal

from engine_adapter.engines.builtin.models import ToolResult

__all__ = ["Call", "Failed", "ms_since"]


class Call:
    """One tool call: its id (also its approval's id), tool, input, tier and stated purpose."""

    __slots__ = ("id", "input", "rationale", "tier", "tool")

    def __init__(self, call_id: str, tool: str, tool_input: dict[str, Any], tier: int,
                 rationale: str | None) -> None:
        self.id, self.tool, self.input, self.tier = call_id, tool, tool_input, tier
        self.rationale = rationale

    @property
    def title(self) -> str:
        i = self.input
        if self.tool == "shell":
            return str(i.get("command") or shlex.join(map(str, i.get("argv") or [])))
        if self.tool == "search":
            return f"search {i.get('pattern')!r} in {i.get('path', '.')}"
        if "path" in i or self.tool == "list_dir":
            return f"{self.tool} {i.get('path', '.')}"
        return self.tool.replace("_", " ")

    def result(self, status: Literal["ok", "failed", "denied"], *, output: str = "",
               error: str | None = None) -> ToolResult:
        return ToolResult(self.id, self.tool, status, output, error)


@dataclass(frozen=True)
class Failed:
    """A tool that ran and failed, with its output (a command's non-zero exit)."""

    output: str
    error: str
    blocked: str | None = None  # what the sandbox stopped, if it did


def ms_since(started: float) -> float:
    """Milliseconds since `started` (a reading of the running loop's clock)."""
    return round((asyncio.get_running_loop().time() - started) * 1000, 3)
