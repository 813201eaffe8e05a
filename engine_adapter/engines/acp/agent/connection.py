"""`AgentConnection`: the agent's process and its ACP connection, one of each, owned by `AcpRunner`.

`connect` starts the agent, makes the `AcpClient` that answers it and the `AgentSession` that
keeps its session's state, and has it answer `initialize`; `close` stops it whole. Meanwhile
`race` waits on the agent with the run's cancel and a timeout, `failure` puts what went wrong in
the agent's own terms, and `with_stderr` adds the last lines it wrote to its stderr. Opening a
session on the connection is `opening.SessionOpener`'s (the connection is told with `opened`);
running tasks on it is the runner's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Mapping
from typing import TypeVar

import acp
from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import Implementation, InitializeResponse
from pydantic import ValidationError

from engine_adapter.engines.acp.agent.auth import asks_login, auth_hint
from engine_adapter.engines.acp.agent.contained import AgentBox, contain
from engine_adapter.engines.acp.agent.process import AgentProcess, AgentStartError
from engine_adapter.engines.acp.agent.session import AgentSession, Opened
from engine_adapter.engines.acp.catalogue import AgentSpec, agent_env
from engine_adapter.engines.acp.client import (
    AcpClient,
    Workspace,
    client_capabilities,
    offers_steering,
)
from engine_adapter.engines.acp.errors import AgentFailure
from engine_adapter.engines.acp.text import cap, clean
from engine_adapter.events import AgentInfo
from engine_adapter.sandbox import Sandbox, SandboxSettings, Wrapped
from engine_adapter.version import __version__

__all__ = ["AgentConnection", "WaitCancelled", "race"]

T = TypeVar("T")


class WaitCancelled(Exception):
    """The run was cancelled while we waited on the agent."""


async def race(awaitable: Awaitable[T], cancel: asyncio.Event, timeout: float | None,
               what: str) -> T:
    """`awaitable`'s result, unless `cancel` is set first (raises `WaitCancelled`) or `timeout`
    seconds pass (raises `AgentFailure`: the agent did not answer `what` in time)."""
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
        raise WaitCancelled
    raise AgentFailure(f"the agent did not answer {what} within {timeout:g} s")


class AgentConnection:
    """The agent's process and connection (see the module docstring).

    `spec` is the agent to start, with `extra_env` on top of `agent_env(spec)`; it has
    `startup_timeout` seconds to answer each call that opens it; `stop_grace` seconds to exit
    when stopped. `forward_always` and `sandbox` are handed to the client (see `AcpClient`;
    `sandbox` settings become a checked `Sandbox` over the workspace once connected). `box`:
    whether the agent process itself runs in that sandbox (see `contained`); `agent_place` is
    where it runs once started (a sandbox state), and the client's `agent_sandboxed` follows.
    """

    exit_wait = 2.0
    """Seconds a broken connection waits for the agent to exit, to report how it ended."""

    def __init__(self, spec: AgentSpec, *, extra_env: Mapping[str, str],
                 startup_timeout: float, stop_grace: float, forward_always: bool,
                 sandbox: Sandbox | SandboxSettings | None,
                 box: AgentBox | None = None) -> None:
        self.spec = spec
        self.box = box or AgentBox()
        self.agent_place: str | None = None  # where the agent runs: a sandbox state, once known
        self._wrapped: Wrapped | None = None  # its command line in the sandbox, closed with it
        self.extra_env = dict(extra_env)
        self.startup_timeout = startup_timeout
        self.stop_grace = stop_grace
        self.forward_always = forward_always
        self.sandbox = sandbox
        self.process: AgentProcess | None = None
        self.client: AcpClient | None = None
        self.conn: ClientSideConnection | None = None
        self.session_id: str | None = None  # the ACP session open on it (see `opened`)
        self.env: dict[str, str] = {}  # the environment the agent runs with
        # What the agent said of itself, kept after `close` (a failed start names it).
        self.init: InitializeResponse | None = None  # its `initialize` answer
        self.agent_info: AgentInfo | None = None
        self.logged_in: str | None = None  # the login method the cockpit used, if any
        self.session: AgentSession | None = None  # what the cockpit keeps of its session

    @property
    def alive(self) -> bool:
        """Whether the agent process and its ACP session are up and usable."""
        process = self.process
        return (process is not None and process.returncode is None and self.conn is not None
                and self.session_id is not None and process.transport.garbage is None)

    def opened(self, opened: Opened, *, agent_name: str) -> None:
        """The session `opened` is now the one on this connection; `agent_name` is what the
        client calls the agent in approval reasons from now on."""
        assert self.client is not None and self.session is not None  # connected first
        self.session_id = opened.session_id
        self.client.agent_name = agent_name
        self.session.opened(opened)

    # stopping --------------------------------------------------------------------------------
    async def close(self, *, grace: float | None = None, let_exit: bool = True) -> None:
        """Stop the agent: its commands, its connection, its whole process group. With
        `let_exit`, an agent that offers `session/close` is told first that its session ends;
        then its stdin is closed and, with `let_exit`, it gets `stop_grace` seconds to exit on
        its own (an agent may save its state); then SIGTERM, then SIGKILL after `grace` seconds
        (`stop_grace` by default). Failure paths pass `let_exit=False`."""
        client, conn, process = self.client, self.conn, self.process
        session_id = self.session_id
        if let_exit and self.alive and session_id is not None and conn is not None:
            await self._close_session(conn, session_id)
        self.client = self.conn = self.process = None
        self.session_id = None
        if client is not None:
            await client.terminal_calls.stop_all("the agent was stopped")
        if process is not None:
            await process.stop(self.stop_grace if grace is None else grace,
                               exit_grace=self.stop_grace if let_exit else 0.0)
        wrapped, self._wrapped = self._wrapped, None
        if wrapped is not None:
            wrapped.close()  # its temp dir, once everything it started is gone
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), 5.0)

    async def _close_session(self, conn: ClientSideConnection, session_id: str) -> None:
        """`session/close` (the conversation ends: the agent frees what it holds for it), when
        the agent says it takes it; an agent that does not answer within `stop_grace` seconds is
        stopped all the same."""
        init = self.init
        caps = init.agent_capabilities if init is not None else None
        sessions = caps.session_capabilities if caps is not None else None
        if sessions is None or sessions.close is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close_session(session_id=session_id), self.stop_grace)

    def kill_now(self) -> None:
        """Synchronous last resort (the run's task is being cancelled): SIGKILL the group now;
        `close` reaps it later."""
        if self.process is not None:
            self.process.kill_group()
        self.session_id = None

    # words for what went wrong ---------------------------------------------------------------
    async def failure(self, exc: BaseException, what: str) -> AgentFailure:
        """Words for what went wrong, in the agent's own terms where it gave any."""
        if isinstance(exc, AgentFailure):
            return exc
        not_acp = self._not_acp(what)
        if not_acp is not None:
            return AgentFailure(not_acp)
        if isinstance(exc, RequestError):
            message = f"the agent answered {what} with error {exc.code}: {clean(str(exc), 2000)}"
            if exc.data is not None:
                data = exc.data if isinstance(exc.data, str) else json.dumps(
                    exc.data, ensure_ascii=False, default=repr)
                message += f" {clean(data, 4000)}"
            return AgentFailure(message)
        if isinstance(exc, ValidationError):
            errors = exc.errors(include_url=False)
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
            said = errors[0]["msg"] if errors else str(exc)
            return AgentFailure(f"the agent's answer to {what} is not valid ACP: {where}: {said}")
        process = self.process
        if process is not None and process.transport.garbage is not None:
            return AgentFailure("the agent wrote something that is not JSON-RPC on stdout (ACP "
                                f"needs stdout to itself): {process.transport.garbage!r}")
        if process is not None:
            if process.returncode is None:
                await process.wait_exit(self.exit_wait)
            if process.returncode is not None:
                silent = ""
                if what == "initialize" and not process.transport.first_output:
                    silent = (" without writing anything on stdout: is it an Agent Client "
                              "Protocol agent? (see `cockpit agents`)")
                return AgentFailure(f"the agent {process.describe_exit()} during {what}{silent}")
            return AgentFailure(f"the agent closed its connection during {what}")
        return AgentFailure(f"{what} failed: {clean(str(exc), 2000)}")

    def _not_acp(self, what: str) -> str | None:
        """Words for a program that does not speak the Agent Client Protocol, when that is what
        its output shows: it sent a request of ours back (`cat`), or its first output during
        `initialize` is not JSON-RPC (`echo`, `yes`, a shell). None otherwise."""
        process = self.process
        if process is None:
            return None
        transport = process.transport
        program = clean(os.path.basename(self.spec.command), 100)
        shown = cap(transport.first_output[0], 160) if transport.first_output else ""
        fix = ("--agent needs a program that speaks ACP (JSON-RPC on stdin and stdout): a name "
               "from `cockpit agents`, or an ACP agent's command line")
        if transport.echoed:
            return (f"{program!r} does not speak the Agent Client Protocol: it sent the "
                    f"cockpit's own request back instead of answering it (its first output: "
                    f"{shown!r}); {fix}")
        if what == "initialize" and transport.garbage is not None:
            return (f"{program!r} does not speak the Agent Client Protocol: its first output "
                    f"is not JSON-RPC: '{cap(transport.garbage, 160)}'; {fix}")
        return None

    def _cannot_start(self, exc: AgentStartError) -> str:
        hint = f"; install it with: {self.spec.install}" if self.spec.install else ""
        return f"cannot start the agent: {exc}{hint}"

    async def prompt_failure(self, exc: BaseException) -> AgentFailure:
        """Words for a failed `session/prompt`; when the agent wants a login first (a session
        it opened without one), the same login help as when a session cannot open."""
        failure = await self.failure(exc, "session/prompt")
        if not asks_login(exc):
            return failure
        hint = auth_hint(self.init, self.spec) if self.init is not None else ""
        return AgentFailure(str(failure) + (hint or (
            "\nthe agent declares no way to log in: log in with its own CLI first (in a "
            "terminal), then run again")))

    def stderr_tail(self) -> list[str]:
        """The last lines the agent wrote to its stderr (none once it is closed)."""
        return self.process.stderr_tail() if self.process is not None else []

    def with_stderr(self, message: str) -> str:
        """`message` followed by the last lines the agent wrote to its stderr, if any."""
        tail = self.stderr_tail()
        if not tail:
            return message
        lines = "\n".join(f"  {line}" for line in tail[-20:])
        return f"{message}\nlast lines the agent wrote to stderr:\n{lines}"

    # starting --------------------------------------------------------------------------------
    async def connect(self, workspace: str, cancel: asyncio.Event, *,
                      model: str | None) -> None:
        """Start the agent in `workspace` (with `model` on its command line where the catalogue
        says how) and have it answer `initialize`; raises `AgentFailure` or `WaitCancelled`."""
        self.env = agent_env(self.spec, self.extra_env)
        self.agent_info = self.init = self.logged_in = None
        sandbox = self.sandbox if isinstance(self.sandbox, Sandbox) else Sandbox(
            self.sandbox, workspace=workspace)
        self.sandbox = await sandbox.acheck()
        argv = self.spec.launch_argv(model)
        try:
            # Wrapped off the event loop: it resolves the program and lists the masks.
            wrapped = await asyncio.to_thread(contain, sandbox, self.box, argv, cwd=workspace,
                                              env=self.env)
        except OSError as exc:
            raise AgentFailure(self._cannot_start(AgentStartError(
                f"{argv[0]!r}: {exc.strerror or exc}"))) from None
        self._wrapped, self.agent_place = wrapped, wrapped.state
        try:
            self.process = await AgentProcess.start(wrapped.argv, cwd=workspace,
                                                    env=wrapped.env, pass_fds=wrapped.pass_fds)
        except AgentStartError as exc:
            self._wrapped = None
            wrapped.close()
            raise AgentFailure(self._cannot_start(exc)) from None
        for fd in wrapped.pass_fds:  # bwrap has its own copy: ours would only leak
            with contextlib.suppress(OSError):
                os.close(fd)
        wrapped.pass_fds = ()
        files = Workspace(workspace)
        files.guard = sandbox.write_refusal
        client = self.client = AcpClient(files, env=self.env,
                                         agent_name=self.spec.name,
                                         forward_always=self.forward_always, sandbox=sandbox)
        # The one switch: `--auto-approve` may answer the agent's own execute and edit only
        # when what it runs of its own is contained.
        client.agent_sandboxed = wrapped.sandboxed
        session = self.session = AgentSession(client.mapper, lambda: client.run)
        client.session_hook = session.take
        self.process.transport.on_notification = client.take_notification
        # The SDK's unstable protocol: without it, `elicitation/create` (an agent's question)
        # is answered "method not found" whatever the client offers.
        conn = self.conn = acp.connect_to_agent(client, self.process.transport,
                                                use_unstable_protocol=True)
        try:
            init = await race(conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=client_capabilities(),
                client_info=Implementation(name="cockpit", title="cockpit",
                                           version=__version__)),
                cancel, self.startup_timeout, "initialize")
        except (WaitCancelled, AgentFailure):
            raise
        except Exception as exc:
            raise await self.failure(exc, "initialize") from None
        self.init = init
        info = init.agent_info
        self.agent_info = AgentInfo(
            name=clean(info.name, 200) if info else self.spec.name,
            title=clean(info.title or "", 200) if info else "",
            version=clean(info.version, 100) if info else "",
            protocol_version=init.protocol_version)
        if offers_steering(init):
            client.notes.use_steering(self)
