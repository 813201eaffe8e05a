"""The test agent's session features (issue 12), mixed into `TestAgent`: sessions kept on disk
(`--state DIR`) so another agent process can list, load (replaying the history, the user's
messages included) or resume them; settings (`configOptions`) and modes; a title; the MCP
servers and the environment it received; an untyped API-key login in codex-acp's style.

Flags (agent.py's command line): `--no-list`, `--no-load`, `--no-resume` leave a capability
out; `--mode apikey` declares an untyped `api-key` method satisfied by TEST_AGENT_KEY.

Prompt scenarios added: `title TEXT` (a session_info_update), `agent-config` (the agent
switches its own model: config_option_update), `env NAME...` (replies with the values it got),
`mcp` (replies with the MCP servers it got), `settings` (replies with its current settings).
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any

from acp import RequestError, update_agent_message_text, update_user_message_text
from acp.helpers import start_tool_call, update_current_mode, update_tool_call
from acp.schema import (
    AuthMethodAgent,
    ConfigOptionUpdate,
    ListSessionsResponse,
    LoadSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionInfoUpdate,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
)

MODELS = {"fast": "Fast model", "smart": "Smart model"}
EFFORTS = ("low", "medium", "high")
# `--mode odd-options`: config options of kinds no client knows, and hostile ones.
ODD_OPTIONS: list[dict[str, Any]] = [
    {"type": "slider", "id": "speed", "name": "Speed", "currentValue": 3, "min": 0},
    {"type": "number", "id": "temperature", "name": "Temperature", "currentValue": 0.2},
    {"type": "boolean", "id": "beep\x1b[31m", "name": "Beep\x07 \u202eevil\x1b]0;x\x07",
     "currentValue": True},
    {"type": "boolean", "id": "maybe", "name": "Maybe", "currentValue": "perhaps"},
    {"type": "boolean", "id": "huge", "name": "N" * 10_000, "currentValue": False},
    {"type": "boolean", "id": "nameless", "currentValue": False},
    {"id": "untyped", "name": "Untyped", "currentValue": True},
]


class SessionFeatures:
    """Mixed into the test agent: needs `self.log`, `self.send`, `self.say`, `self.conn`."""

    state_dir: Path | None
    caps: set[str]

    def init_sessions(self, state_dir: str | None, caps: set[str]) -> None:
        self.state_dir = Path(state_dir) if state_dir else None
        self.caps = caps
        self.sessions: dict[str, dict[str, Any]] = {}

    # storage -----------------------------------------------------------------------------------
    def _path(self, sid: str) -> Path | None:
        return self.state_dir / f"{sid}.json" if self.state_dir else None

    def _save(self, sid: str) -> None:
        path = self._path(sid)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(self.sessions[sid]))

    def _session(self, sid: str) -> dict[str, Any]:
        if sid not in self.sessions:
            path = self._path(sid)
            if path is None or not path.exists():
                raise RequestError(-32602, f"Session not found: {sid}")
            self.sessions[sid] = json.loads(path.read_text())
        return self.sessions[sid]

    def _new(self, cwd: str) -> str:
        sid = f"sess-{uuid.uuid4().hex[:8]}"
        self.sessions[sid] = {"cwd": cwd, "title": None, "history": [], "model": "fast",
                              "effort": "low", "verbose": False, "mode": "ask"}
        self._save(sid)
        return sid

    # what the session offers ---------------------------------------------------------------------
    def session_caps(self) -> dict[str, Any]:
        return {"loadSession": "load" in self.caps,
                "sessionCapabilities": {k: {} for k in ("list", "resume", "close")
                                        if k in self.caps},
                "mcpCapabilities": {"http": True, "sse": False}}

    def auth_methods_extra(self) -> list[Any]:
        if self.mode != "apikey":  # type: ignore[attr-defined]
            return []
        return [AuthMethodAgent(id="api-key", name="API Key",
                                description="Use an API key to authenticate",
                                field_meta={"api-key": {"provider": "test"}})]

    booleans = False  # the client takes boolean options (they are opt-in in ACP v1)

    def config_options(self, sid: str) -> list[Any]:
        s = self._session(sid)
        options: list[Any] = [
            SessionConfigOptionSelect(
                id="model", name="Model", category="model", type="select",
                current_value=s["model"],
                options=[SessionConfigSelectOption(value=k, name=v) for k, v in MODELS.items()]),
            SessionConfigOptionSelect(
                id="effort", name="Reasoning effort", category="thought_level", type="select",
                current_value=s["effort"],
                options=[SessionConfigSelectOption(value=e, name=e.title()) for e in EFFORTS]),
        ]
        if self.booleans:
            options.append(SessionConfigOptionBoolean(id="verbose", name="Verbose",
                                                      type="boolean",
                                                      current_value=s["verbose"]))
        if self.mode == "odd-options":  # type: ignore[attr-defined]
            options += ODD_OPTIONS  # raw JSON: the SDK's models would refuse to build them
        return options

    def modes(self, sid: str) -> SessionModeState:
        return SessionModeState(current_mode_id=self._session(sid)["mode"], available_modes=[
            SessionMode(id="ask", name="Ask"), SessionMode(id="code", name="Code")])

    def received(self, what: str, sid: str, cwd: str, mcp_servers: Any) -> None:
        servers = [s.model_dump(by_alias=True, exclude_none=True) for s in mcp_servers or []]
        self.mcp = servers
        self.log(event=what, session=sid, cwd=cwd, mcp=servers)  # type: ignore[attr-defined]

    # requests ----------------------------------------------------------------------------------
    async def list_sessions(self, cursor: str | None = None, cwd: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        if "list" not in self.caps:
            raise RequestError.method_not_found("session/list")
        found = []
        for path in sorted(self.state_dir.glob("*.json")) if self.state_dir else []:
            data = json.loads(path.read_text())
            if cwd is None or data["cwd"] == cwd:
                found.append(SessionInfo(session_id=path.stem, cwd=data["cwd"],
                                         title=data["title"],
                                         updated_at="2026-01-02T03:04:05Z"))
        # Two pages, to exercise the cursor.
        page = found[1:] if cursor == "page-2" else found[:1]
        self.log(event="list", cwd=cwd, cursor=cursor)  # type: ignore[attr-defined]
        return ListSessionsResponse(sessions=page,
                                    next_cursor="page-2" if cursor is None and found[1:] else None)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           **kwargs: Any) -> LoadSessionResponse:
        if "load" not in self.caps:
            raise RequestError.method_not_found("session/load")
        session = self._session(session_id)
        self.received("load", session_id, cwd, mcp_servers)
        for role, text in session["history"]:
            if role == "tool":
                await self.send(session_id, start_tool_call(  # type: ignore[attr-defined]
                    f"h-{text}", f"Run {text}", kind="execute", status="pending"))
                await self.send(session_id, update_tool_call(  # type: ignore[attr-defined]
                    f"h-{text}", status="completed"))
            elif role == "user":
                for piece in (text[:3], text[3:]):  # in pieces, as agents stream it
                    await self.send(session_id,  # type: ignore[attr-defined]
                                    update_user_message_text(piece))
            else:
                await self.send(session_id,  # type: ignore[attr-defined]
                                update_agent_message_text(text))
        if session["title"]:
            await self.send(session_id, SessionInfoUpdate(  # type: ignore[attr-defined]
                session_update="session_info_update", title=session["title"]))
        return LoadSessionResponse(modes=self.modes(session_id),
                                   config_options=self.config_options(session_id))

    async def resume_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                             **kwargs: Any) -> ResumeSessionResponse:
        if "resume" not in self.caps:
            raise RequestError.method_not_found("session/resume")
        self._session(session_id)
        self.received("resume", session_id, cwd, mcp_servers)
        return ResumeSessionResponse(modes=self.modes(session_id),
                                     config_options=self.config_options(session_id))

    async def set_config_option(self, config_id: str, session_id: str, value: Any,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        allowed = {"model": set(MODELS), "effort": set(EFFORTS), "verbose": {True, False}}
        strict = (config_id == "verbose") == isinstance(value, bool)  # no "true" for a flag
        if config_id not in allowed or value not in allowed[config_id] or not strict:
            raise RequestError.invalid_params({"config_id": config_id, "value": value})
        session[config_id] = value
        self._save(session_id)
        self.log(event="set_config_option", id=config_id, value=value)  # type: ignore
        return SetSessionConfigOptionResponse(config_options=self.config_options(session_id))

    async def close_session(self, session_id: str, **kwargs: Any) -> None:
        if "close" not in self.caps:
            raise RequestError.method_not_found("session/close")
        self.log(event="close", session=session_id,  # type: ignore[attr-defined]
                 known=session_id in self.sessions)
        self.sessions.pop(session_id, None)
        if self.mode == "close-hangs":  # type: ignore[attr-defined]
            await asyncio.Event().wait()

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        session = self._session(session_id)
        session["mode"] = mode_id
        self._save(session_id)
        self.log(event="set_mode", mode=mode_id)  # type: ignore[attr-defined]
        await self.send(session_id, update_current_mode(mode_id))  # type: ignore[attr-defined]

    # prompt scenarios --------------------------------------------------------------------------
    def remember(self, sid: str, role: str, text: str) -> None:
        if sid in self.sessions:
            self.sessions[sid]["history"].append([role, text])
            self._save(sid)

    async def do_title(self, sid: str, args: list[str]) -> PromptResponse:
        self._session(sid)["title"] = " ".join(args)
        self._save(sid)
        await self.send(sid, SessionInfoUpdate(  # type: ignore[attr-defined]
            session_update="session_info_update", title=" ".join(args),
            updated_at="2026-01-02T03:04:05Z"))
        await self.say(sid, "titled")  # type: ignore[attr-defined]
        return PromptResponse(stop_reason="end_turn")

    async def do_agent_config(self, sid: str, args: list[str]) -> PromptResponse:
        self._session(sid)["model"] = "smart"
        await self.send(sid, ConfigOptionUpdate(  # type: ignore[attr-defined]
            session_update="config_option_update", config_options=self.config_options(sid)))
        await self.say(sid, "switched to smart")  # type: ignore[attr-defined]
        return PromptResponse(stop_reason="end_turn")

    async def do_env(self, sid: str, args: list[str]) -> PromptResponse:
        values = {name: os.environ.get(name) for name in args}
        self.log(event="env", values=values)  # type: ignore[attr-defined]
        await self.say(sid, json.dumps(values))  # type: ignore[attr-defined]
        return PromptResponse(stop_reason="end_turn")

    async def do_mcp(self, sid: str, args: list[str]) -> PromptResponse:
        await self.say(sid, json.dumps(getattr(self, "mcp", [])))  # type: ignore[attr-defined]
        return PromptResponse(stop_reason="end_turn")

    async def do_settings(self, sid: str, args: list[str]) -> PromptResponse:
        s = self._session(sid)
        await self.say(sid, f"model={s['model']} effort={s['effort']} "  # type: ignore
                            f"verbose={s['verbose']} mode={s['mode']}")
        return PromptResponse(stop_reason="end_turn")
