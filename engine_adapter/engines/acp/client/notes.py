"""`DenialNotes`: a human's reason for denying an agent's request (or their own version of a
write it asked for), passed on to the agent.

A permission answer in ACP carries only the option chosen, so the reason travels as a note. An
agent that accepts steering (codex-acp advertises `_meta.steering.supported` and serves the
`_session/steering` extension) takes it at once, inside the turn it is working on; for any other
agent, or when steering did not land, the note goes with the next task's prompt, ahead of the
task. Either way the note is journaled (`prompt_note`) when it is sent, with how. (A denied file
write or command carries the reason in its error answer as well: see `Operations.gate`.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

import acp
from acp.client.connection import ClientSideConnection
from acp.schema import InitializeResponse, TextContentBlock

from engine_adapter.context import RunContext
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import PromptNote

__all__ = ["STEERING_METHOD", "DenialNotes", "SteeringTarget", "edited_note_text", "note_text",
           "offers_steering"]

log = logging.getLogger(__name__)

STEERING_METHOD = "session/steering"  # the SDK's `ext_method` adds the leading underscore
STEER_TIMEOUT = 10.0  # seconds the agent may take to take a note inside its turn

Steer = Callable[[str], Awaitable[bool]]


class SteeringTarget(Protocol):
    """Where a steered note goes: the agent's connection and its current ACP session, as they
    stand when the note is sent (None while there is none)."""

    @property
    def conn(self) -> ClientSideConnection | None: ...

    @property
    def session_id(self) -> str | None: ...


def note_text(what: str, reason: str) -> str:
    """The note the agent reads: which request was denied, and the human's words."""
    return (f"[note from the user] I denied your request to {clean(what, 300)}. "
            f"My reason: {reason}")


def edited_note_text(path: str, changes: str) -> str:
    """The note the agent reads when the human accepted its write in a version of their own:
    the file, and how it differs from what the agent sent (a unified diff, already capped)."""
    return (f"[note from the user] I edited your write to {clean(path, 300)} before it was "
            "written: the file now differs from what you proposed (your text → what was "
            f"written):\n{changes}")


def offers_steering(init: InitializeResponse) -> bool:
    """Whether an `initialize` answer says the agent takes prompts inside a running turn (the
    `steering` extension, in `_meta` of the answer or of its capabilities)."""
    caps = init.agent_capabilities
    for meta in (init.field_meta, caps.field_meta if caps is not None else None):
        steering = meta.get("steering") if isinstance(meta, dict) else None
        if isinstance(steering, dict) and steering.get("supported") is True:
            return True
    return False


class DenialNotes:
    """Notes waiting to reach the agent. `steer(text) -> bool` (set when the agent offers
    steering) delivers one inside the running turn, True if it landed there."""

    def __init__(self) -> None:
        self.steer: Steer | None = None
        self._waiting: list[tuple[str | None, str]] = []
        self._sending: set[asyncio.Task[None]] = set()

    def use_steering(self, target: SteeringTarget) -> None:
        """The agent takes notes inside a turn: deliver them over `target`'s connection to its
        current ACP session."""

        async def steer(text: str) -> bool:
            conn, session_id = target.conn, target.session_id
            if conn is None or session_id is None:
                return False
            # `promptRequired`: an agent with no turn running must not start one on its own.
            # Whatever JSON the agent answers (the SDK's annotation says a dict).
            answer: object = await conn.ext_method(STEERING_METHOD, {
                "sessionId": session_id, "prompt": [{"type": "text", "text": text}],
                "_meta": {"steering": {"idleBehavior": "promptRequired"}}})
            return isinstance(answer, dict) and answer.get("outcome") == "injected"

        self.steer = steer

    def denied(self, run: RunContext, approval_id: str, what: str, reason: str) -> None:
        """The human denied `what` with `reason`: pass it on (at once where the agent can take
        it, else with the next prompt). Never blocks: the permission's answer goes first."""
        self.note(run, approval_id, note_text(what, reason))

    def note(self, run: RunContext, approval_id: str, text: str) -> None:
        """Pass the note `text` on to the agent, as `denied` does (an edited write, say)."""
        if self.steer is None:
            self._waiting.append((approval_id, text))
            return
        task = asyncio.ensure_future(self._steered(run, approval_id, text, self.steer))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _steered(self, run: RunContext, approval_id: str, text: str,
                       steer: Steer) -> None:
        try:
            landed = await asyncio.wait_for(steer(text), STEER_TIMEOUT)
        except Exception as exc:  # the agent refused it, or went away: the next prompt then
            log.debug("steering a note failed: %s", exc)
            landed = False
        if landed:
            run.emit(PromptNote(text=text, approval_id=approval_id, delivery="in_turn"))
        else:
            self._waiting.append((approval_id, text))

    async def settle(self) -> None:
        """Wait for notes still being steered (the turn ended: each lands or waits)."""
        if self._sending:
            with contextlib.suppress(Exception):
                await asyncio.wait(set(self._sending), timeout=STEER_TIMEOUT)

    def take(self) -> list[tuple[str | None, str]]:
        """The notes for the next prompt, `(approval_id, text)`, oldest first (now taken)."""
        waiting, self._waiting = self._waiting, []
        return waiting

    async def for_prompt(self, run: RunContext) -> list[TextContentBlock]:
        """The waiting notes as the text blocks that go ahead of the next task's prompt, each
        journaled (`prompt_note`, "with_prompt") as it is taken."""
        await self.settle()  # a note still being steered lands, or waits for this prompt
        blocks = []
        for approval_id, text in self.take():
            run.emit(PromptNote(text=text, approval_id=approval_id, delivery="with_prompt"))
            blocks.append(acp.text_block(text))
        return blocks

    def drop(self) -> None:
        """Forget the waiting notes (the agent and its conversation are gone)."""
        self._waiting.clear()
