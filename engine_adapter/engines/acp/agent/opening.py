"""Opening the agent's session once it has answered `initialize`: a new one (`session/new`), or an
earlier conversation (`session/resume` where the agent offers it, else `session/load`, whose
replayed history is kept as history); then the settings the human asked for. Also the agent's
own list of its sessions (`session/list`).

Every call goes through `SessionOpener.call`: when the agent answers "authentication required",
the cockpit logs in with a method it can satisfy (see `auth`) and asks once more; when it can
satisfy none, the failure says what the agent offers and what to do.

An earlier conversation named by the human (`cockpit resume`) that cannot be opened is an
error. One the cockpit itself tries to reopen, because the agent died between tasks, falls back
to a new session with a warning: "the agent restarted; its earlier conversation is gone".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from acp import RequestError

from engine_adapter.engines.acp.agent.auth import auth_hint, choose_auth_method
from engine_adapter.engines.acp.agent.mcp import acp_servers
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
from engine_adapter.events import AgentMode, AgentNotice, AgentOption

if TYPE_CHECKING:
    from engine_adapter.engines.acp.runner import AcpRunner

__all__ = ["AUTH_REQUIRED", "ListedSession", "Opened", "SessionOpener", "SessionsNotOffered"]

T = TypeVar("T")

AUTH_REQUIRED = -32000
MAX_PAGES = 20  # pages of `session/list` read (an agent whose cursor never ends is cut off)
GONE = "the agent restarted; its earlier conversation is gone"


class SessionsNotOffered(Exception):
    """The agent does not offer `session/list`."""


@dataclass(frozen=True)
class ListedSession:
    """One of the agent's sessions as `session/list` describes it."""

    session_id: str
    cwd: str
    title: str | None = None
    updated_at: str | None = None


@dataclass
class Opened:
    """The session that opened: its id, how (None: new; else the method that reopened it), its
    modes and settings, and what the human should be told."""

    session_id: str
    resumed: str | None = None
    modes: list[AgentMode] = field(default_factory=list)
    mode: str | None = None
    options: list[AgentOption] = field(default_factory=list)
    history: list[Any] = field(default_factory=list)
    notices: list[AgentNotice] = field(default_factory=list)


class SessionOpener:
    """Opens (or lists) the sessions of `runner`'s connected agent; `cancel` ends a wait."""

    def __init__(self, runner: AcpRunner, cancel: asyncio.Event, env: Mapping[str, str]) -> None:
        self.runner = runner
        self.cancel = cancel
        self.env = env
        self.notices: list[AgentNotice] = []

    # every call ------------------------------------------------------------------------------
    async def call(self, make: Callable[[], Awaitable[T]], stage: str) -> T:
        """`make()` answered within the startup timeout, logging in first if the agent asks."""
        runner = self.runner
        try:
            return await runner._race(make(), self.cancel, runner.startup_timeout, stage)
        except RequestError as exc:
            if exc.code != AUTH_REQUIRED or runner.logged_in is not None:
                raise await self._failed(exc, stage) from None
            choice = choose_auth_method(runner.init, self.env, runner.spec)
            if choice is None:
                raise await self._failed(exc, stage) from None
            login = f"authenticate ({choice.method_id})"
            try:
                await runner._race(runner.conn.authenticate(method_id=choice.method_id),
                                   self.cancel, runner.startup_timeout, login)
            except RequestError as failed:
                raise await self._failed(failed, login, hint=True) from None
            runner.logged_in = choice.method_id
            self.notices.append(AgentNotice(text=(
                f"logged in to the agent with its {choice.name!r} method ({choice.variable} is "
                "set)")))
        try:
            return await runner._race(make(), self.cancel, runner.startup_timeout, stage)
        except RequestError as exc:
            raise await self._failed(exc, stage) from None

    async def _failed(self, exc: RequestError, stage: str, *, hint: bool = False) -> Exception:
        failure = await self.runner._failure(exc, stage)
        if hint or exc.code == AUTH_REQUIRED:
            return AgentFailure(str(failure) + auth_hint(self.runner.init, self.runner.spec))
        return failure

    # opening ---------------------------------------------------------------------------------
    async def open(self, workspace: str, setup: SessionSetup, previous: str | None) -> Opened:
        """Open the session: `setup.resume` (the human's choice) or `previous` (the conversation
        of an agent that died) if either is given and the agent can reopen it, else a new one;
        then make `setup.wanted` true. Raises `AgentFailure` saying what went wrong."""
        runner = self.runner
        servers, skipped = acp_servers(setup.mcp_servers, runner.init)
        self.notices += [AgentNotice(level="warning", text=text) for text in skipped]
        target = setup.resume or previous
        opened: Opened | None = None
        why = ""
        if target is not None:
            opened, why = await self._reopen(workspace, target, servers)
            if opened is None and setup.resume is not None:
                raise AgentFailure(f"cannot resume the agent's session {setup.resume}: {why}")
            if opened is None:
                self.notices.append(AgentNotice(level="warning", text=f"{GONE} ({why})"))
            elif previous is not None and setup.resume is None:
                self.notices.append(AgentNotice(text=(
                    f"the agent restarted; the conversation was reopened ({opened.resumed})")))
        if opened is None:
            new = await self.call(lambda: runner.conn.new_session(
                cwd=workspace, mcp_servers=servers), "session/new")
            opened = self._opened(new.session_id, None, new)
        opened.notices = self.notices
        await self._settle(opened, setup.wanted)
        return opened

    def _opened(self, session_id: str, how: str | None, answer: Any) -> Opened:
        modes, mode = modes_from_acp(getattr(answer, "modes", None))
        return Opened(session_id=clean(session_id, 200), resumed=how, modes=modes, mode=mode,
                      options=options_from_acp(getattr(answer, "config_options", None)))

    async def _reopen(self, workspace: str, target: str,
                      servers: list[Any]) -> tuple[Opened | None, str]:
        """`target` reopened by resume, else load (with its history), or None and why not."""
        runner = self.runner
        caps = getattr(runner.init, "agent_capabilities", None)
        session_caps = getattr(caps, "session_capabilities", None)
        why = ""
        if getattr(session_caps, "resume", None) is not None:
            try:
                answer = await self.call(lambda: runner.conn.resume_session(
                    session_id=target, cwd=workspace, mcp_servers=servers), "session/resume")
                return self._opened(target, "session/resume", answer), ""
            except AgentFailure as exc:
                why = str(exc)
        if getattr(caps, "load_session", False):
            history = runner.agent_session
            history.start_replay()
            try:
                answer = await self.call(lambda: runner.conn.load_session(
                    session_id=target, cwd=workspace, mcp_servers=servers), "session/load")
            except AgentFailure as exc:
                history.end_replay()
                return None, f"{why}; then {exc}" if why else str(exc)  # both answers count
            opened = self._opened(target, "session/load", answer)
            opened.history = history.end_replay()
            return opened, ""
        return None, why or "the agent offers neither session/resume nor session/load"

    async def _settle(self, opened: Opened, wanted: Wanted) -> None:
        """Make the human's settings true, or fail listing what the agent offers."""
        if self.runner.spec.model_args and wanted.model is not None:
            wanted = Wanted(None, wanted.mode, wanted.options)  # chosen at launch
        try:
            steps = plan_settings(wanted, opened.options, opened.modes)
        except SettingError as exc:
            raise AgentFailure(str(exc)) from None
        conn = self.runner.conn
        for step in steps:
            method = "session/set_mode" if step.kind == "mode" else "session/set_config_option"
            options = await self.call(lambda step=step: apply_step(conn, opened.session_id, step),
                                      f"{method} ({step.asked})")
            if options is not None:
                opened.options = options
            if step.kind == "mode" or step.mode is not None:
                opened.mode = step.mode or step.id

    # listing ---------------------------------------------------------------------------------
    async def list_sessions(self, cwd: str | None) -> list[ListedSession]:
        """The agent's sessions (in `cwd` when given), all pages; `SessionsNotOffered` if it
        has no `session/list`."""
        runner = self.runner
        caps = getattr(getattr(runner.init, "agent_capabilities", None), "session_capabilities",
                       None)
        if getattr(caps, "list", None) is None:
            raise SessionsNotOffered
        found: list[ListedSession] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self.call(lambda cursor=cursor: runner.conn.list_sessions(
                cwd=cwd, cursor=cursor), "session/list")
            for info in page.sessions:
                found.append(ListedSession(
                    session_id=clean(info.session_id, 200), cwd=clean(info.cwd, 1000),
                    title=clean(info.title, 300) if info.title else None,
                    updated_at=clean(info.updated_at, 100) if info.updated_at else None))
            cursor = page.next_cursor
            if not cursor:
                break
        return found
