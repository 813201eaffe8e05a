"""What the human can do with an agent's session besides sending a task: list the agent's
sessions, and read and change the session's settings (model, mode, …) between or during tasks.

`SessionControls` is a part of `AcpRunner` (its base class), kept here so the runner stays about
running tasks. A change is sent to the agent at once and announced as an event (into the live
run, else at the start of the next one); it is also kept in the runner's `setup`, so an agent
that restarts gets it again.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from engine_adapter.engines.acp.agent import (
    ListedSession,
    SessionOpener,
    SessionSetup,
    SettingError,
    Step,
    Wanted,
    apply_step,
    plan_settings,
)
from engine_adapter.engines.acp.catalogue import agent_env
from engine_adapter.engines.acp.errors import AgentFailure
from engine_adapter.events import AgentMode

if TYPE_CHECKING:
    from engine_adapter.engines.acp.runner import AcpRunner

__all__ = ["SessionControls"]


class SessionControls:
    """The session's controls (mixed into `AcpRunner`; see the module docstring)."""

    async def list_sessions(self: AcpRunner, cwd: str | None = None) -> list[ListedSession]:
        """The agent's own list of its sessions (`session/list`, in `cwd` when given), starting
        the agent if it is not running. Raises `SessionsNotOffered` when it has no list, and
        `AgentFailure` saying why when the agent cannot be asked."""
        workspace = os.path.realpath(self.cwd or os.getcwd())
        cancel = asyncio.Event()
        async with self._lock:
            try:
                if self.process is None or self.init is None:
                    await self.close(let_exit=False)
                    env = await self._connect(workspace, cancel)
                else:
                    env = agent_env(self.spec, self.extra_env)
                return await SessionOpener(self, cancel, env).list_sessions(cwd)
            except AgentFailure as exc:
                raise AgentFailure(self._with_stderr(str(exc))) from None

    @property
    def settings(self: AcpRunner) -> tuple[list[Any], list[AgentMode], str | None]:
        """The open session's settings (`AgentOption`s), its modes and the current mode."""
        session, client = self.agent_session, self.client
        if session is None or client is None or not self.alive:
            return [], [], None
        return list(session.options), list(session.modes), client.mapper.mode

    async def set_option(self: AcpRunner, option_id: str, value: str | bool) -> None:
        """Set one of the session's settings now (kept for a restarted agent too). Raises
        `SettingError` listing the valid values, or `AgentFailure` if the agent refused."""
        text = value if isinstance(value, str) else ("true" if value else "false")
        options, modes, _mode = self.settings
        steps = plan_settings(Wanted(options=((option_id, text),)), options, modes)
        await self._apply(steps[0])
        self.setup = SessionSetup(self.setup.resume, self.setup.mcp_servers,
                                  self.setup.wanted.with_option(steps[0].id, text))

    async def set_mode(self: AcpRunner, mode_id: str) -> None:
        """Switch the session's mode now (its mode setting where it has one, else
        `session/set_mode`); errors as for `set_option`."""
        options, modes, _mode = self.settings
        wanted = self.setup.wanted
        steps = plan_settings(Wanted(mode=mode_id), options, modes)
        await self._apply(steps[0])
        step = steps[0]  # kept as the value it set, for a restarted agent
        mode = step.id if step.kind == "mode" else str(step.value)
        self.setup = SessionSetup(self.setup.resume, self.setup.mcp_servers,
                                  Wanted(wanted.model, mode, wanted.options))

    async def _apply(self: AcpRunner, step: Step) -> None:
        session, conn, sid = self.agent_session, self.conn, self.acp_session_id
        if session is None or conn is None or sid is None:
            raise SettingError("the agent is not running: settings apply once a task started it")
        try:
            options = await asyncio.wait_for(apply_step(conn, sid, step), self.startup_timeout)
        except Exception as exc:
            raise await self._failure(exc, f"the setting ({step.asked})") from None
        if options is not None:
            session.set_options(options)
        if step.kind == "mode" or step.mode is not None:
            session.set_mode(step.mode or step.id)
