"""Whether `[a] always` may grant a call, and why not: the one place that decides it.

`grantability(tool, tool_input, tier)` is called once, by the Session, when it asks; the verdict
travels in the `approval_requested` event (`grantable`, `ungrantable_reason`), so the approval
bar, the headless view, replay and export show it without deciding again. `ApprovalGrant` is
what an `[a] always` stores, and `matches` is how a later call is compared with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple, TypeGuard

from engine_adapter.shell.prefix import COMMAND_KEYS, UNGRANTABLE_TOOLS, explain_prefix

__all__ = ["MAX_GRANTABLE_TIER", "OFFLOAD_CHARS", "ApprovalGrant", "Grantability",
           "grantability", "grantability_off_loop", "input_chars"]

MAX_GRANTABLE_TIER = 3
"""Tier 4 (the riskiest) is never granted, whatever tier the grant itself records."""


class Grantability(NamedTuple):
    """The verdict on one call: whether `[a] always` may grant it, the prefix it would grant
    (`grant_prefix`, possibly non-blank even when the tier forbids a grant), and, when it may
    not, the specific reason ("runs python3, an interpreter")."""

    grantable: bool
    prefix: str
    reason: str | None


def grantability(tool: object, tool_input: object, tier: object) -> Grantability:
    """Decide whether a call of `tool` with `tool_input` at `tier` can be granted, and why not.

    Not grantable: an `UNGRANTABLE_TOOLS` tool ("alter_verification is never granted"), a tier
    above `MAX_GRANTABLE_TIER` ("tier 4: destructive commands are asked every time"), or a blank
    `grant_prefix` (the reason says what about this call: "chains two commands with &&",
    "sets GIT_EXTERNAL_DIFF in the environment", …). Takes the input rather than the prefix so
    that the reason for a blank prefix is this call's own. Never raises: the values come from
    engines and agents, so any value is answered (not grantable), hence `object`.
    """
    verdict = explain_prefix(tool, tool_input)
    if isinstance(tool, str) and tool in UNGRANTABLE_TOOLS:
        return Grantability(False, verdict.prefix, f"{tool} is never granted")
    if not _is_int(tier) or tier > MAX_GRANTABLE_TIER:
        shell = isinstance(tool_input, Mapping) and any(k in tool_input for k in COMMAND_KEYS)
        what = "commands" if shell else "calls"
        return Grantability(False, verdict.prefix,
                            f"tier {tier}: destructive {what} are asked every time")
    if not verdict.prefix:
        return Grantability(False, "", verdict.why)
    return Grantability(True, verdict.prefix, None)


OFFLOAD_CHARS = 4096
"""Inputs carrying more text than this are read in a worker thread, never on the event loop."""


async def grantability_off_loop(tool: object, tool_input: object,
                                tier: object) -> Grantability:
    """`grantability`, in a worker thread when the input carries a long command: reading a
    hostile 16 KB line costs milliseconds that must not be the event loop's."""
    if input_chars(tool_input) > OFFLOAD_CHARS:
        return await asyncio.to_thread(grantability, tool, tool_input, tier)
    return grantability(tool, tool_input, tier)


def input_chars(tool_input: object) -> int:
    """How much text a call's input carries at its top level (what reading it costs)."""
    if not isinstance(tool_input, Mapping):
        return 0
    total = 0
    for value in tool_input.values():
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, list):
            total += sum(len(v) for v in value if isinstance(v, str))
    return total


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalGrant:
    """A standing approval: calls of `tool` whose program prefix is exactly `prefix`, at a tier
    no higher than `tier` (and never tier 4), are allowed without asking.

    `prefix` is what `grant_prefix` returned for the call the human approved; a blank prefix
    (an ungrantable call) matches nothing. `alter_verification` is never granted.
    """

    tool: str
    prefix: str
    tier: int

    def matches(self, tool: object, program: object, tier: object) -> bool:
        """Whether this grant allows a call of `tool` with prefix `program` at `tier` (any other
        kind of value than a string, a string and an int matches nothing)."""
        if not (isinstance(tool, str) and isinstance(program, str)):
            return False
        if not (_is_int(tier) and _is_int(self.tier)):
            return False
        prefix: object = self.prefix  # a grant a script built may hold anything
        if not isinstance(prefix, str) or not prefix.strip():
            return False
        if tool in UNGRANTABLE_TOOLS or self.tool in UNGRANTABLE_TOOLS:
            return False
        return (
            tool == self.tool
            and program == self.prefix
            and tier <= self.tier
            and tier <= MAX_GRANTABLE_TIER
        )
