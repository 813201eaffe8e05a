"""Opening the agent's session once it has answered `initialize`: a new one (`session/new`), or an
earlier conversation (`session/resume` where the agent offers it, else `session/load`, whose
replayed history is kept as history); then the settings the human asked for. Also the agent's
own list of its sessions (`session/list`).

Every call goes through `SessionOpener.call`: when the agent answers "authentication required",
the cockpit logs in with a method it can satisfy (see `auth`) and asks once more; when it can
satisfy none, the failure says what the agent offers and what to do.

An earlier conversation named by the human (`cockpit resume`) that cannot be opened is an
error. One only to be read (`SessionSetup.load_only`: `cockpit replay --agent --session`) is
opened by `session/load` alone, since a resume replays nothing. One the cockpit itself tries
to reopen, because the agent died between tasks, falls back to a new session with a warning:
"the agent restarted; its earlier conversation is gone".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import (
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    ResumeSessionResponse,
)

from engine_adapter.engines.acp.agent.auth import AUTH_REQUIRED, auth_hint, choose_auth_method
from engine_adapter.engines.acp.agent.connection import AgentConnection, race
from engine_adapter.engines.acp.agent.mcp import AgentMcpServer, acp_servers
from engine_adapter.engines.acp.agent.session import AgentSession, Opened
from engine_adapter.engines.acp.agent.settings import (
    SettingError,
    apply_step,
    modes_from_acp,
    options_from_acp,
    plan_settings,
)
from engine_adapter.engines.acp.agent.setup import SessionSetup, Wanted
from engine_adapter.engines.acp.errors import AgentFailure
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import AgentNotice

__all__ = ["ListedSession", "SessionOpener", "SessionsNotOffered"]

T = TypeVar("T")

MAX_PAGES = 20  # pages of `session/list` read (an agent whose cursor never ends is cut off)
GONE = "the agent restarted; its earlier conversation is gone"

# What opening a session answers (`session/load` may answer nothing at all).
SessionAnswer = NewSessionResponse | ResumeSessionResponse | LoadSessionResponse | None


class SessionsNotOffered(Exception):
    """The agent does not offer `session/list`."""


@dataclass(frozen=True)
class ListedSession:
    """One of the agent's sessions as `session/list` describes it."""

    session_id: str
    cwd: str
    title: str | None = None
    updated_at: str | None = None


class SessionOpener:
    """Opens (or lists) the sessions of the agent on `connection`, which has answered
    `initialize`; `cancel` ends a wait."""

    def __init__(self, connection: AgentConnection, cancel: asyncio.Event) -> None:
        conn, init, session = connection.conn, connection.init, connection.session
        if conn is None or init is None or session is None:
            raise AgentFailure("the agent is not connected")
        self.connection = connection
        self.conn: ClientSideConnection = conn
        self.init: InitializeResponse = init
        self.session: AgentSession = session  # keeps the history a `session/load` replays
        self.cancel = cancel
        self.notices: list[AgentNotice] = []

    # every call ------------------------------------------------------------------------------
    async def call(self, make: Callable[[], Awaitable[T]], stage: str) -> T:
        """`make()` answered within the startup timeout, logging in first if the agent asks."""
        connection = self.connection
        timeout = connection.startup_timeout
        try:
            return await race(make(), self.cancel, timeout, stage)
        except RequestError as exc:
            if exc.code != AUTH_REQUIRED or connection.logged_in is not None:
                raise await self._failed(exc, stage) from None
            choice = choose_auth_method(self.init, connection.env, connection.spec)
            if choice is None:
                raise await self._failed(exc, stage) from None
            login = f"authenticate ({choice.method_id})"
            try:
                await race(self.conn.authenticate(method_id=choice.method_id), self.cancel,
                           timeout, login)
            except RequestError as failed:
                raise await self._failed(failed, login, hint=True) from None
            connection.logged_in = choice.method_id
            self.notices.append(AgentNotice(text=(
                f"logged in to the agent with its {choice.name!r} method ({choice.variable} is "
                "set)")))
        try:
            return await race(make(), self.cancel, timeout, stage)
        except RequestError as exc:
            raise await self._failed(exc, stage) from None

    async def _failed(self, exc: RequestError, stage: str, *, hint: bool = False) -> Exception:
        failure = await self.connection.failure(exc, stage)
        if hint or exc.code == AUTH_REQUIRED:
            return AgentFailure(str(failure) + auth_hint(self.init, self.connection.spec))
        return failure

    # opening ---------------------------------------------------------------------------------
    async def open(self, workspace: str, setup: SessionSetup, previous: str | None) -> Opened:
        """Open the session: `setup.resume` (the human's choice) or `previous` (the conversation
        of an agent that died) if either is given and the agent can reopen it, else a new one;
        then make `setup.wanted` true. Raises `AgentFailure` saying what went wrong."""
        servers, skipped = acp_servers(setup.mcp_servers, self.init)
        self.notices += [AgentNotice(level="warning", text=text) for text in skipped]
        target = setup.resume or previous
        opened: Opened | None = None
        why = ""
        if target is not None:
            load_only = setup.load_only and setup.resume is not None
            opened, why = await self._reopen(workspace, target, servers, load_only=load_only)
            if opened is None and load_only:
                raise AgentFailure(f"cannot load the agent's session {setup.resume}: {why}")
            if opened is None and setup.resume is not None:
                raise AgentFailure(f"cannot resume the agent's session {setup.resume}: {why}")
            if opened is None:
                self.notices.append(AgentNotice(level="warning", text=f"{GONE} ({why})"))
            elif previous is not None and setup.resume is None:
                self.notices.append(AgentNotice(text=(
                    f"the agent restarted; the conversation was reopened ({opened.resumed})")))
        if opened is None:
            conn = self.conn
            new = await self.call(lambda: conn.new_session(cwd=workspace, mcp_servers=servers),
                                  "session/new")
            opened = self._opened(new.session_id, None, new)
        opened.notices = self.notices
        await self._settle(opened, setup.wanted)
        return opened

    def _opened(self, session_id: str, how: str | None, answer: SessionAnswer) -> Opened:
        modes, mode = modes_from_acp(answer.modes if answer is not None else None)
        return Opened(session_id=clean(session_id, 200), resumed=how, modes=modes, mode=mode,
                      options=options_from_acp(answer.config_options if answer is not None
                                               else None))

    async def _reopen(self, workspace: str, target: str, servers: list[AgentMcpServer], *,
                      load_only: bool = False) -> tuple[Opened | None, str]:
        """`target` reopened by resume (unless `load_only`), else load (with its history), or
        None and why not."""
        conn = self.conn
        caps = self.init.agent_capabilities
        session_caps = caps.session_capabilities if caps is not None else None
        why = ""
        if load_only and not (caps is not None and caps.load_session):
            return None, "the agent does not offer session/load (loadSession), so its past " \
                "sessions cannot be read"
        if not load_only and session_caps is not None and session_caps.resume is not None:
            try:
                answer = await self.call(lambda: conn.resume_session(
                    session_id=target, cwd=workspace, mcp_servers=servers), "session/resume")
                return self._opened(target, "session/resume", answer), ""
            except AgentFailure as exc:
                why = str(exc)
        if caps is not None and caps.load_session:
            history = self.session
            history.start_replay()
            try:
                loaded = await self.call(lambda: conn.load_session(
                    session_id=target, cwd=workspace, mcp_servers=servers), "session/load")
            except AgentFailure as exc:
                history.end_replay()
                return None, f"{why}; then {exc}" if why else str(exc)  # both answers count
            opened = self._opened(target, "session/load", loaded)
            opened.history = history.end_replay()
            return opened, ""
        return None, why or "the agent offers neither session/resume nor session/load"

    async def _settle(self, opened: Opened, wanted: Wanted) -> None:
        """Make the human's settings true, or fail listing what the agent offers."""
        if self.connection.spec.model_args and wanted.model is not None:
            wanted = Wanted(None, wanted.mode, wanted.options)  # chosen at launch
        try:
            steps = plan_settings(wanted, opened.options, opened.modes)
        except SettingError as exc:
            raise AgentFailure(str(exc)) from None
        conn = self.conn
        for step in steps:
            method = "session/set_mode" if step.kind == "mode" else "session/set_config_option"
            options = await self.call(partial(apply_step, conn, opened.session_id, step),
                                      f"{method} ({step.asked})")
            if options is not None:
                opened.options = options
            if step.kind == "mode" or step.mode is not None:
                opened.mode = step.mode or step.id

    # listing ---------------------------------------------------------------------------------
    async def list_sessions(self, cwd: str | None) -> list[ListedSession]:
        """The agent's sessions (in `cwd` when given), all pages; `SessionsNotOffered` if it
        has no `session/list`."""
        caps = self.init.agent_capabilities
        session_caps = caps.session_capabilities if caps is not None else None
        if session_caps is None or session_caps.list is None:
            raise SessionsNotOffered
        found: list[ListedSession] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self.call(partial(self.conn.list_sessions, cwd=cwd, cursor=cursor),
                                   "session/list")
            for info in page.sessions:
                found.append(ListedSession(
                    session_id=clean(info.session_id, 200), cwd=clean(info.cwd, 1000),
                    title=clean(info.title, 300) if info.title else None,
                    updated_at=clean(info.updated_at, 100) if info.updated_at else None))
            cursor = page.next_cursor
            if not cursor:
                break
        return found
