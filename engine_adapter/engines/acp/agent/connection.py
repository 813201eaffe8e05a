"""Starting and stopping an ACP agent: its process, its connection and `initialize`, the session
it opens, waiting on it with cancel and timeouts, and the words for what went wrong.

`AgentConnection` is a part of `AcpRunner` (its base class, like `SessionControls`), kept here
so the runner stays about running tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

import acp
from acp import RequestError
from acp.schema import Implementation
from pydantic import ValidationError

from engine_adapter.engines.acp.agent.opening import SessionOpener
from engine_adapter.engines.acp.agent.process import AgentProcess, AgentStartError
from engine_adapter.engines.acp.agent.session import AgentSession
from engine_adapter.engines.acp.agent.setup import SessionSetup
from engine_adapter.engines.acp.catalogue import agent_env
from engine_adapter.engines.acp.client import (
    AcpClient,
    Workspace,
    client_capabilities,
    offers_steering,
)
from engine_adapter.engines.acp.errors import AgentFailure
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import AgentInfo
from engine_adapter.sandbox import Sandbox

if TYPE_CHECKING:
    from engine_adapter.engines.acp.runner import AcpRunner

__all__ = ["AgentConnection"]

T = TypeVar("T")


class _Cancelled(Exception):
    """The cancel token tripped while we waited on the agent."""


def _version() -> str:
    try:
        from engine_adapter.version import __version__
    except ImportError:  # pragma: no cover - the package always has one
        return "0"
    return __version__


class AgentConnection:
    """The agent's process and connection (mixed into `AcpRunner`; see the module docstring)."""

    # lifecycle -------------------------------------------------------------------------------
    @property
    def alive(self: AcpRunner) -> bool:
        """Whether the agent process and its ACP session are up and usable."""
        process = self.process
        return (process is not None and process.returncode is None and self.conn is not None
                and self.acp_session_id is not None and process.transport.garbage is None)

    async def close(self: AcpRunner, *, grace: float | None = None, let_exit: bool = True) -> None:
        """Stop the agent: its commands, its connection, its whole process group. Its stdin is
        closed first and, with `let_exit`, it gets `stop_grace` seconds to exit on its own (an
        agent may save its state); then SIGTERM, then SIGKILL after `grace` seconds
        (`stop_grace` by default). Failure paths pass `let_exit=False`."""
        client, conn, process = self.client, self.conn, self.process
        self.client = self.conn = self.process = None
        self.acp_session_id = None
        if client is not None:
            await client.stop_terminals("the agent was stopped")
        if process is not None:
            await process.stop(self.stop_grace if grace is None else grace,
                               exit_grace=self.stop_grace if let_exit else 0.0)
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), 5.0)

    async def __aenter__(self: AcpRunner) -> AcpRunner:
        return self

    async def __aexit__(self: AcpRunner, *exc: object) -> None:
        await self.close()

    def _kill_now(self: AcpRunner) -> None:
        """Synchronous last resort (our task is being cancelled): SIGKILL the group now; `close`
        reaps it later."""
        if self.process is not None:
            self.process.kill_group()
        self.acp_session_id = None

    # waiting with cancel and timeouts --------------------------------------------------------
    async def _race(self: AcpRunner, awaitable: Awaitable[T], cancel: asyncio.Event,
                    timeout: float | None, what: str) -> T:
        task = asyncio.ensure_future(awaitable)
        waiter = asyncio.ensure_future(cancel.wait())
        try:
            done, _ = await asyncio.wait({task, waiter}, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            waiter.cancel()
        if task in done:
            return task.result()
        task.cancel()
        if cancel.is_set():
            raise _Cancelled
        raise AgentFailure(f"the agent did not answer {what} within {timeout:g} s")

    # starting --------------------------------------------------------------------------------
    async def _failure(self: AcpRunner, exc: BaseException, what: str) -> AgentFailure:
        """Words for what went wrong, in the agent's own terms where it gave any."""
        if isinstance(exc, AgentFailure):
            return exc
        if isinstance(exc, RequestError):
            message = f"the agent answered {what} with error {exc.code}: {clean(str(exc), 2000)}"
            if exc.data is not None:
                data = exc.data if isinstance(exc.data, str) else json.dumps(
                    exc.data, ensure_ascii=False, default=repr)
                message += f" {clean(data, 4000)}"
            return AgentFailure(message)
        if isinstance(exc, ValidationError):
            first = exc.errors(include_url=False)[0] if exc.error_count() else {}
            where = ".".join(str(p) for p in first.get("loc", ()))
            return AgentFailure(f"the agent's answer to {what} is not valid ACP: "
                                f"{where}: {first.get('msg', exc)}")
        process = self.process
        if process is not None and process.transport.garbage is not None:
            return AgentFailure("the agent wrote something that is not JSON-RPC on stdout (ACP "
                                f"needs stdout to itself): {process.transport.garbage!r}")
        if process is not None:
            if process.returncode is None:
                await process.wait_exit(self.exit_wait)
            if process.returncode is not None:
                return AgentFailure(f"the agent {process.describe_exit()} during {what}")
            return AgentFailure(f"the agent closed its connection during {what}")
        return AgentFailure(f"{what} failed: {clean(str(exc), 2000)}")

    def _with_stderr(self: AcpRunner, message: str) -> str:
        tail = self.process.stderr_tail() if self.process is not None else []
        if not tail:
            return message
        lines = "\n".join(f"  {line}" for line in tail[-20:])
        return f"{message}\nlast lines the agent wrote to stderr:\n{lines}"

    async def _connect(self: AcpRunner, workspace: str, cancel: asyncio.Event) -> dict[str, str]:
        """Start the agent and have it answer `initialize` (raises AgentFailure or _Cancelled);
        returns the environment it runs with."""
        env = agent_env(self.spec, self.extra_env)
        self.agent_info = self.init = self.logged_in = None
        try:
            self.process = await AgentProcess.start(self.spec.launch_argv(
                self.setup.wanted.model), cwd=workspace, env=env)
        except AgentStartError as exc:
            hint = f"; install it with: {self.spec.install}" if self.spec.install else ""
            raise AgentFailure(f"cannot start the agent: {exc}{hint}") from None
        sandbox = self.sandbox if isinstance(self.sandbox, Sandbox) else Sandbox(
            self.sandbox, workspace=workspace)
        self.sandbox = await sandbox.acheck()
        self.client = AcpClient(Workspace(workspace), env=env, agent_name=self.spec.name,
                                forward_always=self.forward_always, sandbox=sandbox)
        client = self.client
        self.agent_session = AgentSession(client.mapper, lambda: client.run)
        client.session_hook = self.agent_session.take
        self.process.transport.on_notification = client.take_notification
        # The SDK's unstable protocol: without it, `elicitation/create` (an agent's question)
        # is answered "method not found" whatever the client offers.
        self.conn = acp.connect_to_agent(client, self.process.transport,
                                         use_unstable_protocol=True)
        caps = client_capabilities()
        try:
            init = await self._race(self.conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=caps,
                client_info=Implementation(name="cockpit", title="cockpit",
                                           version=_version())),
                cancel, self.startup_timeout, "initialize")
        except (_Cancelled, AgentFailure):
            raise
        except Exception as exc:
            raise await self._failure(exc, "initialize") from None
        self.init = init
        info = init.agent_info
        self.agent_info = AgentInfo(
            name=clean(info.name, 200) if info else self.spec.name,
            title=clean(info.title or "", 200) if info else "",
            version=clean(info.version, 100) if info else "",
            protocol_version=init.protocol_version)
        if offers_steering(init):
            client.notes.use_steering(self)
        return env

    async def _start(self: AcpRunner, workspace: str, cancel: asyncio.Event) -> None:
        """Start the agent and open its ACP session (raises AgentFailure or _Cancelled)."""
        env = await self._connect(workspace, cancel)
        previous = self.conversation  # set: the agent died; reopen its conversation if it can
        setup = self.setup
        try:
            opened = await SessionOpener(self, cancel, env).open(workspace, setup, previous)
        except (_Cancelled, AgentFailure):
            raise
        except Exception as exc:
            raise await self._failure(exc, "opening the session") from None
        self.setup = SessionSetup(resume=None, mcp_servers=setup.mcp_servers,
                                  wanted=setup.wanted)  # reopened once: later, by `conversation`
        self.acp_session_id = self.conversation = opened.session_id
        assert self.client is not None and self.agent_session is not None
        self.client.agent_name = self._agent_name(title=True)
        self.agent_session.opened(opened)
        self.turn = 0
        self._usage_totals = {}
        self.modes = list(opened.modes)
        self._opened = opened
