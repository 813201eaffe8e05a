"""An ACP test agent written with the official SDK, for cockpit's tests and benchmark.

Run: `python tests/fakes/acp_agent/agent.py [--mode auth] [--log FILE]` (it speaks ACP on stdio).

The prompt's first word picks what it does (the rest are arguments):

  hello                 a thought and a short reply naming the prompt count and pid
  everything            every session/update kind, a permission, fs and terminal requests
  permission KINDS CMD  one permission request for `execute CMD` offering the option kinds
                        KINDS (comma-separated); replies with the kind the client chose
  wait-permission       asks permission and waits; answers the turn `cancelled` on cancel
  fs                    reads input.txt, writes out/new.txt, tries to escape the workspace
  terminal ARGV...      runs ARGV through terminal/* (no prior permission) and reports it
  slow N SECONDS        N chunks, SECONDS apart; stops with `cancelled` when cancelled
  stream N [EVERY]      N one-word chunks as fast as it can (the benchmark); with EVERY,
                        a permission request after every EVERY chunks
  crash                 a chunk, some stderr, then exits with code 3 mid-turn
  hang                  starts a child process, ignores cancel and SIGTERM
  deaf                  ignores cancel and SIGTERM, saying so on stderr (Gemini CLI's way)
  garbage               writes a line that is not JSON-RPC to stdout
  eof                   closes its stdout mid-turn but stays alive
  error                 answers the prompt with a JSON-RPC error
  fail CODE MESSAGE     answers the prompt with error CODE saying MESSAGE
  refusal               ends the turn with stop reason `refusal`
  read PATH             fs/read_text_file PATH; replies "read ok N" or "read error: …"
  write PATH [N [shuffled]]
                        fs/write_text_file PATH ("written" or N numbered lines, optionally in
                        a shuffled order); replies "write ok" or "write error: …"
  diff-update N         reports an edit whose diff content is N lines against the same lines
                        shuffled (a big diff the client renders)
  spawn SHELL-LINE      runs SHELL-LINE with sh (it may leave processes behind), waits for it
  dup-permission        two permission requests at once with the same tool call id
  permit KIND PATH [diff|other]
                        a KIND permission naming PATH (with the edit's diff as its content if
                        "diff" is given; "other": a diff to other content than it then
                        writes), then a write to PATH
  terminal-json JSON    terminal/create with the JSON object's command/args/env/cwd/
                        outputByteLimit; replies with the exit or the error
  permit-terminal JSON  an `execute` permission for the JSON's command and args, then
                        terminal-json JSON
  ask [KIND...]         one elicitation (form) with a field of each KIND: text, number,
                        integer, boolean, choice, enum, multi (default: all); replies with
                        the action and the values it got
  ask-url [JSON-STRING] an elicitation in URL mode (a link to open): https://example.com/login,
                        or the URL the JSON string holds (escapes let a test send any text)
  ask-bad               a form whose required field is of a kind no client knows
  deny-wait CMD         a permission for `execute CMD`; once it is denied, waits up to 5 s
                        for a note inside the turn (steering), then replies what it got
  script JSON           a hostile agent's turn: a list of steps, each one of
                        {"update": SESSION-UPDATE} (a raw `session/update`, e.g. a
                        `tool_call_update` that changes `rawInput`), {"raw": UPDATE}
                        (the same, sent unchecked: NaN, negative numbers), {"ask": TOOL-CALL,
                        "options": [KIND…]} (a permission), {"write": {"path", "content"}},
                        {"terminal": {"command", "args"}}; replies with each step's result
                        ("allow_once", "write ok", "exit 0", …) joined by "; "
  self OP ARG           acts on its own, as an agent that runs its tools itself, and
                        replies "ok …" or "error: ERRNO-NAME": `write PATH`, `read PATH`,
                        `connect SOCKET-PATH` (a unix socket), `tcp HOST:PORT`, `env NAME`
                        (the variable's value), `orphan PIDFILE` (a grandchild: double fork,
                        `setsid`, its parent gone; it writes its pid, as seen from outside
                        too, to PIDFILE and sleeps), `home` (its HOME), `whoami` (its pid)
  /NAME [ARGS]          one of the commands it offers (see below): replies "ran /NAME …"

After `session/new` it offers commands (`available_commands_update`): review (with an input
hint), compact, and "memory show" (a name with a space, as gemini has).

`--mode auth` (or ACP_TEST_AGENT_MODE=auth): session/new answers "Authentication required"
until `authenticate` is called with the `test-key` method, which needs TEST_AGENT_KEY set.
`--mode auth-prompt`: session/new works without a login, but every prompt answers
"Authentication required" (claude-agent-acp's way) until `authenticate`; it offers a terminal
login and the `test-key` method.
`--mode odd-options`: session/new also offers config options of kinds no client knows and
hostile ones (see `sessions.ODD_OPTIONS`). The boolean option `verbose` is offered only to a
client that opts in to boolean options (`clientCapabilities.session.configOptions.boolean`).
`--mode close-hangs`: it never answers `session/close`.
`--mode apikey`: the same with an untyped `api-key` method (codex-acp's style) instead.
`--log FILE` (or ACP_TEST_AGENT_LOG): one JSON line per thing the agent observed.
`--hold-initialize FIFO`: a slow agent; it answers `initialize` only once a writer has written
to the named pipe FIFO and closed it (a test holds the answer without sleeping).

Sessions, settings, titles, MCP servers and the environment: see `sessions.py` (`--state DIR`
keeps sessions for a later agent process to list, load or resume; `--no-list`, `--no-load`,
`--no-resume`, `--no-close` leave a capability out; `session/close` is logged as `close`).
`--mode steering`: `initialize` says it takes notes inside a turn (codex-acp's `steering`
extension: `_meta.steering.supported`), served by its `_session/steering` method.
`--log FILE` (or ACP_TEST_AGENT_LOG): one JSON line per thing the agent observed (prompts with
each text block, elicitation answers, steering notes, the client's capabilities).
`--embedded-context`: `initialize` says it takes embedded resources in a prompt
(`promptCapabilities.embeddedContext`). A prompt's task is its last text block; its other
blocks (mentioned files: resource links, embedded resources) are logged as `resources`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import acp
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_current_mode
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    Cost,
    ElicitationBooleanPropertySchema,
    ElicitationFormSessionMode,
    ElicitationIntegerPropertySchema,
    ElicitationMultiSelectPropertySchema,
    ElicitationNumberPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    ElicitationUrlSessionMode,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    TerminalAuthMethod,
    ToolCallLocation,
    ToolCallUpdate,
    UnstructuredCommandInput,
    Usage,
    UsageUpdate,
)

try:  # run as a script (the agent's process) or imported as the test package's module
    from sessions import SessionFeatures
except ImportError:  # pragma: no cover
    from fakes.acp_agent.sessions import SessionFeatures

COMMANDS = [
    AvailableCommand(name="review", description="Review the uncommitted changes",
                     input=AvailableCommandInput(
                         UnstructuredCommandInput(hint="what to focus on"))),
    AvailableCommand(name="compact", description="Summarize the conversation so far"),
    AvailableCommand(name="memory show", description="Show what it remembers"),
]

FORM_FIELDS: dict[str, Any] = {
    "text": ElicitationStringPropertySchema(type="string", title="Your name", min_length=1),
    "number": ElicitationNumberPropertySchema(type="number", title="Budget", minimum=0),
    "integer": ElicitationIntegerPropertySchema(type="integer", title="Retries", maximum=5,
                                                default=2),
    "boolean": ElicitationBooleanPropertySchema(type="boolean", title="Run the tests",
                                                default=True),
    "choice": ElicitationStringPropertySchema.model_validate({
        "type": "string", "title": "Database",
        "oneOf": [{"const": "dev", "title": "Development"},
                  {"const": "staging", "title": "Staging"}]}),
    "enum": ElicitationStringPropertySchema(type="string", title="Colour",
                                            enum=["red", "green"]),
    "multi": ElicitationMultiSelectPropertySchema.model_validate({
        "type": "array", "title": "Targets",
        "items": {"anyOf": [{"const": "linux", "title": "Linux"},
                            {"const": "mac", "title": "macOS"}]}}),
}



class TestAgent(SessionFeatures):
    """The agent; one instance serves one connection."""

    def __init__(self, mode: str, log_path: str | None, state_dir: str | None = None,
                 caps: frozenset[str] = frozenset({"list", "load", "resume", "close"}),
                 hold_initialize: str | None = None) -> None:
        self.mode = mode
        self.hold_initialize = hold_initialize
        self.log_path = log_path
        self.init_sessions(state_dir, set(caps))
        self.reply: list[str] = []
        self.conn: Any = None
        self.authenticated = False
        self.cwd = os.getcwd()
        self.prompts = 0
        self.cancelled = asyncio.Event()
        self.in_turn = False
        self.notes: asyncio.Queue[str] = asyncio.Queue()
        self.background: set[asyncio.Task[None]] = set()
        self.embedded = False  # `--embedded-context`: it takes embedded resources in prompts

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    def log(self, **data: Any) -> None:
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(data) + "\n")

    # lifecycle ---------------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        caps = client_capabilities
        self.log(event="initialize", fs_read=bool(caps and caps.fs.read_text_file),
                 fs_write=bool(caps and caps.fs.write_text_file),
                 terminal=bool(caps and caps.terminal),
                 terminal_auth=bool(caps and caps.auth and caps.auth.terminal),
                 elicitation_form=bool(caps and caps.elicitation and caps.elicitation.form),
                 elicitation_url=bool(caps and caps.elicitation and caps.elicitation.url),
                 boolean_options=self.takes_booleans(caps))
        self.booleans = self.takes_booleans(caps)
        if self.hold_initialize:  # a slow agent: answers once the test writes to the pipe
            await asyncio.to_thread(Path(self.hold_initialize).read_bytes)
        methods: list[Any] = self.auth_methods_extra()
        if self.mode == "auth-prompt":  # claude-agent-acp's: a terminal login first
            methods = [TerminalAuthMethod(id="agent-login", name="Log in", type="terminal",
                                          description="Run the agent's login",
                                          args=["--login"])]
        if self.mode in ("auth", "auth-prompt"):
            methods += [EnvVarAuthMethod(id="test-key", name="Use TEST_AGENT_KEY", type="env_var",
                                        description="Requires TEST_AGENT_KEY",
                                        vars=[{"name": "TEST_AGENT_KEY"}])]
        offered = self.session_caps()
        if self.embedded:
            offered["promptCapabilities"] = {"embeddedContext": True}
        capabilities = AgentCapabilities.model_validate(offered)
        meta = {"steering": {"supported": True}} if self.mode == "steering" else None
        return InitializeResponse(protocol_version=PROTOCOL_VERSION,
                                  agent_capabilities=capabilities, auth_methods=methods,
                                  agent_info=Implementation(name="cockpit-test-agent",
                                                            title="Cockpit test agent",
                                                            version="1.0"),
                                  field_meta=meta)

    @staticmethod
    def takes_booleans(caps: Any) -> bool:
        """Whether the client opted in to boolean config options (ACP v1)."""
        session = getattr(caps, "session", None) if caps else None
        options = session.config_options if session is not None else None
        return options is not None and options.boolean is not None

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        self.log(event="authenticate", method=method_id)
        expected = "api-key" if self.mode == "apikey" else "test-key"
        if method_id != expected or not os.environ.get("TEST_AGENT_KEY"):
            raise RequestError(-32000, "Authentication failed: TEST_AGENT_KEY is not set")
        self.authenticated = True
        return AuthenticateResponse()

    async def new_session(self, cwd: str, mcp_servers: Any = None,
                          **kwargs: Any) -> NewSessionResponse:
        if self.mode in ("auth", "apikey") and not self.authenticated:
            raise RequestError(-32000, "Authentication required",
                               {"reason": "no TEST_AGENT_KEY: log in first"})
        self.cwd = cwd
        sid = self._new(cwd)
        self.received("new_session", sid, cwd, mcp_servers)
        # Like the real agents: the commands follow the answer, in a notification of their own.
        task = asyncio.ensure_future(self.offer_commands(sid))
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        if self.mode == "odd-options":  # raw JSON as a hostile agent sends it, unchecked
            import warnings
            warnings.filterwarnings("ignore", module="pydantic")
            return NewSessionResponse.model_construct(session_id=sid, modes=self.modes(sid),
                                                      config_options=self.config_options(sid))
        return NewSessionResponse(session_id=sid, modes=self.modes(sid),
                                  config_options=self.config_options(sid))

    async def offer_commands(self, sid: str) -> None:
        await asyncio.sleep(0)  # after the session/new answer has gone out
        await self.send(sid, AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=COMMANDS))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.log(event="cancel")
        sys.stderr.write(f"test agent: cancel received (prompt {self.prompts})\n")
        sys.stderr.flush()
        self.cancelled.set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method != "session/steering" or self.mode != "steering":
            raise RequestError.method_not_found(f"_{method}")
        text = " ".join(block.get("text", "") for block in params.get("prompt", []))
        idle = (params.get("_meta") or {}).get("steering", {}).get("idleBehavior")
        self.log(event="steering", text=text, in_turn=self.in_turn, idle=idle)
        if not self.in_turn:
            return {"outcome": "promptRequired", "reason": "noRunningTurn"}
        self.notes.put_nowait(text)
        return {"outcome": "injected"}

    # helpers -----------------------------------------------------------------------------------
    async def send(self, sid: str, update: Any) -> None:
        await self.conn.session_update(session_id=sid, update=update)

    async def say(self, sid: str, text: str) -> None:
        self.reply.append(text)
        await self.send(sid, update_agent_message_text(text))

    def options(self, kinds: list[str]) -> list[PermissionOption]:
        # Ids deliberately unlike the kinds: the client must choose by kind.
        names = {"allow_once": "Yes", "allow_always": "Always", "reject_once": "No",
                 "reject_always": "Never"}
        return [PermissionOption(option_id=f"opt-{i}-{kind[::-1]}", name=names[kind], kind=kind)
                for i, kind in enumerate(kinds)]

    async def ask(self, sid: str, call_id: str, kinds: list[str], *, kind: str = "execute",
                  title: str = "", raw_input: Any = None, content: Any = None) -> str:
        """Request permission; returns the chosen option's kind, or "cancelled"."""
        options = self.options(kinds)
        response = await self.conn.request_permission(
            session_id=sid, options=options,
            tool_call=ToolCallUpdate(tool_call_id=call_id, title=title or call_id, kind=kind,
                                     status="pending", raw_input=raw_input, content=content))
        outcome = response.outcome
        if outcome.outcome == "cancelled":
            chosen = "cancelled"
        else:
            chosen = next(o.kind for o in options if o.option_id == outcome.option_id)
        self.log(event="permission", call_id=call_id, chosen=chosen)
        self.remember(sid, "tool", call_id)
        return chosen

    def path(self, name: str) -> str:
        return os.path.join(self.cwd, name)

    # prompt ------------------------------------------------------------------------------------
    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        self.prompts += 1
        self.cancelled.clear()
        blocks = [getattr(block, "text", "") for block in prompt
                  if getattr(block, "type", "text") == "text"]
        # the task: the last text block (notes come before it, mentioned files after it)
        text = blocks[-1].strip() if blocks else ""
        words = text.split()
        scenario, args = (words[0], words[1:]) if words else ("hello", [])
        resources = [self.resource(block) for block in prompt
                     if getattr(block, "type", "text") != "text"]
        self.log(event="prompt", text=text, count=self.prompts, blocks=blocks, session=session_id,
                 **({"resources": resources} if resources else {}))
        self.remember(session_id, "user", text)
        self.reply = []
        if self.mode == "auth-prompt" and not self.authenticated:
            raise RequestError(-32000, "Authentication required")  # as claude-agent-acp does
        self.in_turn = True
        try:
            if scenario.startswith("/"):
                response = await self.run_command(session_id, text)
            else:
                response = await self.dispatch(session_id, scenario, args)
        finally:
            self.in_turn = False
        self.remember(session_id, "agent", "".join(self.reply))
        return response

    @staticmethod
    def resource(block: Any) -> dict[str, Any]:
        """A prompt's non-text block as logged: a link's fields, or an embedded resource's."""
        if block.type == "resource":
            inner = block.resource
            return {"type": "resource", "uri": inner.uri, "mime_type": inner.mime_type,
                    "text": getattr(inner, "text", None)}
        return {"type": block.type, **{key: getattr(block, key, None)
                                       for key in ("uri", "name", "title", "size", "mime_type")}}

    async def run_command(self, sid: str, text: str) -> PromptResponse:
        known = sorted((c.name for c in COMMANDS), key=len, reverse=True)
        name = next((n for n in known if text[1:] == n or text[1:].startswith(n + " ")), None)
        if name is None:
            await self.say(sid, f"no such command: {text.split()[0]}")
            return PromptResponse(stop_reason="end_turn")
        rest = text[1 + len(name):].strip()
        self.log(event="command", name=name, args=rest)
        await self.say(sid, f"ran /{name}" + (f" with {rest!r}" if rest else ""))
        return PromptResponse(stop_reason="end_turn")

    async def dispatch(self, session_id: str, scenario: str, args: list[str]) -> PromptResponse:
        handler = getattr(self, "do_" + scenario.replace("-", "_"), None)
        if handler is None:
            await self.say(session_id, f"unknown scenario {scenario!r}")
            response = PromptResponse(stop_reason="end_turn")
        else:
            response = await handler(session_id, args)
        return response

    async def do_hello(self, sid: str, args: list[str]) -> PromptResponse:
        await self.send(sid, update_agent_thought_text("thinking about it"))
        await self.say(sid, "Hello")
        await self.say(sid, f", world: prompt {self.prompts} pid {os.getpid()}")
        return PromptResponse(stop_reason="end_turn")

    async def do_everything(self, sid: str, args: list[str]) -> PromptResponse:
        await self.send(sid, update_user_message_text("(echo of the prompt)"))
        await self.send(sid, AvailableCommandsUpdate(
            session_update="available_commands_update",
            available_commands=[AvailableCommand(name="review", description="Review")]))
        await self.send(sid, update_agent_thought_text("Let me plan."))
        await self.send(sid, update_plan([
            plan_entry("read the file", priority="high", status="in_progress"),
            plan_entry("edit it", priority="medium", status="pending")]))
        await self.send(sid, update_current_mode("code"))
        # a read, served by the client
        readme = self.path("input.txt")
        await self.send(sid, start_tool_call("t-read", "Read input.txt", kind="read",
                                             status="pending", raw_input={"path": readme},
                                             locations=[ToolCallLocation(path=readme)]))
        await self.send(sid, update_tool_call("t-read", status="in_progress"))
        try:
            content = await self.conn.read_text_file(session_id=sid, path=readme)
        except RequestError as exc:  # run by hand in a folder without input.txt: carry on
            await self.send(sid, update_tool_call("t-read", status="failed", content=[
                tool_content(text_block(f"could not read input.txt: {exc}"))]))
        else:
            await self.send(sid, update_tool_call("t-read", status="completed", content=[
                tool_content(text_block(f"read {len(content.content)} characters"))]))
        # an edit reported with a diff
        await self.send(sid, start_tool_call("t-edit", "Edit input.txt", kind="edit",
                                             status="in_progress",
                                             raw_input={"path": readme}))
        await self.send(sid, update_tool_call("t-edit", status="completed", content=[
            tool_diff_content(readme, "new line\n", "old line\n")]))
        # a command: permission first, then the terminal it covers
        command = ["echo", "from", "terminal"]
        await self.send(sid, start_tool_call("t-exec", "Run echo", kind="execute",
                                             status="pending",
                                             raw_input={"command": " ".join(command)}))
        chosen = await self.ask(sid, "t-exec", ["allow_once", "allow_always", "reject_once"],
                                title="Run echo", raw_input={"command": " ".join(command)})
        if chosen.startswith("allow"):
            term = await self.conn.create_terminal(session_id=sid, command=command[0],
                                                   args=command[1:])
            await self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=term.terminal_id)
            await self.send(sid, update_tool_call("t-exec", status="completed", content=[
                tool_terminal_ref(term.terminal_id)]))
            await self.conn.release_terminal(session_id=sid, terminal_id=term.terminal_id)
        else:
            await self.send(sid, update_tool_call("t-exec", status="failed", content=[
                tool_content(text_block(f"not allowed: {chosen}"))]))
        # a failing tool
        await self.send(sid, start_tool_call("t-fail", "Search", kind="search",
                                             status="in_progress"))
        await self.send(sid, update_tool_call("t-fail", status="failed", content=[
            tool_content(text_block("no such thing"))]))
        # usage and the reply
        for amount in (0.01, 0.03):
            await self.send(sid, UsageUpdate(session_update="usage_update", used=1000,
                                             size=200000, cost=Cost(amount=amount,
                                                                    currency="USD")))
        await self.say(sid, "All done: \x1b[31mred\x1b[0m text")
        await self.say(sid, " and the end.")
        return PromptResponse(stop_reason="end_turn",
                              usage=Usage(total_tokens=120, input_tokens=100, output_tokens=20))

    async def do_permission(self, sid: str, args: list[str]) -> PromptResponse:
        kinds = args[0].split(",") if args else ["allow_once", "reject_once"]
        command = " ".join(args[1:]) or "git status"
        call_id = f"perm-{self.prompts}"
        await self.send(sid, start_tool_call(call_id, f"Run {command}", kind="execute",
                                             status="pending", raw_input={"command": command}))
        chosen = await self.ask(sid, call_id, kinds, title=f"Run {command}",
                                raw_input={"command": command})
        await self.send(sid, update_tool_call(call_id, status="completed" if chosen.startswith(
            "allow") else "failed", content=[tool_content(text_block(chosen))]))
        await self.say(sid, f"selected {chosen}")
        return PromptResponse(stop_reason="end_turn")

    async def do_wait_permission(self, sid: str, args: list[str]) -> PromptResponse:
        chosen = await self.ask(sid, "wait-1", ["allow_once", "reject_once"],
                                raw_input={"command": "make deploy"})
        if chosen == "cancelled" or self.cancelled.is_set():
            return PromptResponse(stop_reason="cancelled")
        await self.say(sid, f"selected {chosen}")
        return PromptResponse(stop_reason="end_turn")

    async def do_fs(self, sid: str, args: list[str]) -> PromptResponse:
        lines = []
        got = await self.conn.read_text_file(session_id=sid, path=self.path("input.txt"))
        lines.append(f"read ok: {got.content.strip()}")
        part = await self.conn.read_text_file(session_id=sid, path=self.path("input.txt"),
                                              line=2, limit=1)
        lines.append(f"line 2: {part.content.strip()}")
        for name, call in (("write", lambda: self.conn.write_text_file(
                               session_id=sid, path=self.path("out/new.txt"),
                               content="written by agent\n")),
                           ("escape write", lambda: self.conn.write_text_file(
                               session_id=sid, path=self.path("../escape.txt"),
                               content="should not exist\n")),
                           ("escape read", lambda: self.conn.read_text_file(
                               session_id=sid, path="/etc/hostname"))):
            try:
                await call()
                lines.append(f"{name} ok")
            except RequestError as exc:
                lines.append(f"{name} error: {exc}")
        self.log(event="fs", lines=lines)
        await self.say(sid, "\n".join(lines))
        return PromptResponse(stop_reason="end_turn")

    async def do_terminal(self, sid: str, args: list[str]) -> PromptResponse:
        argv = args or ["echo", "hi"]
        return await self._run_terminal(sid, {"command": argv[0], "args": argv[1:],
                                              "outputByteLimit": 4096})

    async def _run_terminal(self, sid: str, request: dict[str, Any]) -> PromptResponse:
        """terminal/create with the request's fields; waits, reads, releases, replies."""
        try:
            term = await self.conn.create_terminal(
                session_id=sid, command=request["command"], args=request.get("args"),
                env=request.get("env"), cwd=request.get("cwd"),
                output_byte_limit=request.get("outputByteLimit"))
        except RequestError as exc:
            self.log(event="terminal", error=str(exc))
            await self.say(sid, f"terminal error: {exc}")
            return PromptResponse(stop_reason="end_turn")
        status = await self.conn.wait_for_terminal_exit(session_id=sid,
                                                        terminal_id=term.terminal_id)
        out = await self.conn.terminal_output(session_id=sid, terminal_id=term.terminal_id)
        await self.conn.release_terminal(session_id=sid, terminal_id=term.terminal_id)
        self.log(event="terminal", exit_code=status.exit_code, output=out.output,
                 truncated=out.truncated)
        await self.say(sid, f"exit {status.exit_code}: {out.output}")
        return PromptResponse(stop_reason="end_turn")

    async def do_slow(self, sid: str, args: list[str]) -> PromptResponse:
        count = int(args[0]) if args else 100
        delay = float(args[1]) if len(args) > 1 else 0.05
        for i in range(count):
            if self.cancelled.is_set():
                return PromptResponse(stop_reason="cancelled")
            await self.say(sid, f"chunk {i} ")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.cancelled.wait(), delay)
        return PromptResponse(stop_reason="end_turn")

    async def do_stream(self, sid: str, args: list[str]) -> PromptResponse:
        count = int(args[0]) if args else 1000
        every = int(args[1]) if len(args) > 1 else 0
        for i in range(count):
            await self.say(sid, f"w{i} ")
            if every and i % every == every - 1:
                await self.ask(sid, f"s-{i}", ["allow_once", "reject_once"],
                               raw_input={"command": f"echo {i}"})
        return PromptResponse(stop_reason="end_turn")

    async def do_crash(self, sid: str, args: list[str]) -> PromptResponse:
        await self.say(sid, "about to crash")
        sys.stderr.write("test agent: something broke\ntest agent: giving up\n")
        sys.stderr.flush()
        os._exit(3)

    async def do_hang(self, sid: str, args: list[str]) -> PromptResponse:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
            "signal.SIG_IGN); time.sleep(600)")
        self.log(event="hang", child=child.pid)
        await self.say(sid, "hanging")
        await asyncio.Event().wait()  # never: cancel is ignored
        return PromptResponse(stop_reason="end_turn")

    async def do_deaf(self, sid: str, args: list[str]) -> PromptResponse:
        """Gemini CLI's way: it ignores the cancel (and SIGTERM), saying so on stderr only."""
        def term(signum: int, frame: Any) -> None:
            os.write(2, b"test agent: SIGTERM, still busy\n")
        signal.signal(signal.SIGTERM, term)
        sys.stderr.write("test agent: thinking hard\n")
        sys.stderr.flush()
        await self.say(sid, "thinking")
        await self.cancelled.wait()
        sys.stderr.write("test agent: cancel ignored, still busy\n")
        sys.stderr.flush()
        await asyncio.Event().wait()  # never
        return PromptResponse(stop_reason="end_turn")

    async def do_garbage(self, sid: str, args: list[str]) -> PromptResponse:
        await self.say(sid, "before the garbage")
        os.write(1, b"this is not json-rpc\n")
        await asyncio.Event().wait()
        return PromptResponse(stop_reason="end_turn")

    async def do_eof(self, sid: str, args: list[str]) -> PromptResponse:
        await self.say(sid, "closing my stdout")
        sys.stderr.write("test agent: closing stdout but staying alive\n")
        sys.stderr.flush()
        os.close(1)
        await asyncio.Event().wait()
        return PromptResponse(stop_reason="end_turn")

    async def do_fail(self, sid: str, args: list[str]) -> PromptResponse:
        raise RequestError(int(args[0]), " ".join(args[1:]) or "failed")

    async def do_error(self, sid: str, args: list[str]) -> PromptResponse:
        raise RequestError(-32603, "Internal error", {"details": "the model backend is down"})

    async def do_read(self, sid: str, args: list[str]) -> PromptResponse:
        try:
            got = await self.conn.read_text_file(session_id=sid, path=self.path(args[0]))
            reply = f"read ok {len(got.content)}"
        except RequestError as exc:
            reply = f"read error: {exc}"
        await self.say(sid, reply)
        return PromptResponse(stop_reason="end_turn")

    async def do_write(self, sid: str, args: list[str]) -> PromptResponse:
        content = "written\n"
        if len(args) > 1:
            lines = [f"line {i}\n" for i in range(int(args[1]))]
            if len(args) > 2:
                import random

                random.Random(7).shuffle(lines)
            content = "".join(lines)
        try:
            await self.conn.write_text_file(session_id=sid, path=self.path(args[0]),
                                            content=content)
            reply = "write ok"
        except RequestError as exc:
            reply = f"write error: {exc}"
        await self.say(sid, reply)
        return PromptResponse(stop_reason="end_turn")

    async def do_diff_update(self, sid: str, args: list[str]) -> PromptResponse:
        import random

        lines = [f"line {i}\n" for i in range(int(args[0]))]
        shuffled = list(lines)
        random.Random(7).shuffle(shuffled)
        path = self.path("big.txt")
        await self.send(sid, start_tool_call("t-big", "Edit big.txt", kind="edit",
                                             status="in_progress", raw_input={"path": path}))
        await self.send(sid, update_tool_call("t-big", status="completed", content=[
            tool_diff_content(path, "".join(shuffled), "".join(lines))]))
        await self.say(sid, "diffed")
        return PromptResponse(stop_reason="end_turn")

    async def do_spawn(self, sid: str, args: list[str]) -> PromptResponse:
        proc = await asyncio.create_subprocess_exec("sh", "-c", " ".join(args), cwd=self.cwd)
        await proc.wait()
        await self.say(sid, f"spawned, exit {proc.returncode}")
        return PromptResponse(stop_reason="end_turn")

    async def do_self(self, sid: str, args: list[str]) -> PromptResponse:
        op, arg = args[0], " ".join(args[1:])
        try:
            reply = _act(op, arg, self.cwd)
        except OSError as exc:
            import errno
            reply = f"error: {errno.errorcode.get(exc.errno or 0, str(exc))}"
        await self.say(sid, reply)
        return PromptResponse(stop_reason="end_turn")

    async def do_dup_permission(self, sid: str, args: list[str]) -> PromptResponse:
        kinds = ["allow_once", "reject_once"]
        first, second = await asyncio.gather(
            self.ask(sid, "dup-1", kinds, raw_input={"command": "echo first"}),
            self.ask(sid, "dup-1", kinds, raw_input={"command": "echo second"}))
        await self.say(sid, f"first {first}, second {second}")
        return PromptResponse(stop_reason="end_turn")

    async def do_permit(self, sid: str, args: list[str]) -> PromptResponse:
        kind, path = args[0], self.path(args[1])
        content = None
        if len(args) > 2:  # show the edit the permission is for, as a diff
            shown = "via permit\n" if args[2] == "diff" else "harmless\n"  # "other": a bait
            with open(path, encoding="utf-8") as handle:
                content = [tool_diff_content(path, shown, handle.read())]
        chosen = await self.ask(sid, f"permit-{kind}", ["allow_once", "reject_once"],
                                kind=kind, raw_input={"path": path}, content=content)
        try:
            await self.conn.write_text_file(session_id=sid, path=path, content="via permit\n")
            reply = f"{chosen}; write ok"
        except RequestError as exc:
            reply = f"{chosen}; write error: {exc}"
        await self.say(sid, reply)
        return PromptResponse(stop_reason="end_turn")

    async def do_permit_terminal(self, sid: str, args: list[str]) -> PromptResponse:
        import shlex

        request = json.loads(" ".join(args))
        command = shlex.join([request["command"], *request.get("args", [])])
        chosen = await self.ask(sid, "permit-run", ["allow_once", "reject_once"],
                                raw_input={"command": command})
        if chosen != "allow_once":
            await self.say(sid, f"permission {chosen}")
            return PromptResponse(stop_reason="end_turn")
        return await self._run_terminal(sid, request)

    async def do_terminal_json(self, sid: str, args: list[str]) -> PromptResponse:
        return await self._run_terminal(sid, json.loads(" ".join(args)))

    async def do_script(self, sid: str, args: list[str]) -> PromptResponse:
        """A hostile agent's turn, step by step (see the module docstring)."""
        from acp.schema import SessionNotification

        results = []
        for step in json.loads(" ".join(args)):
            if "raw" in step:  # sent as written, unchecked: numbers JSON cannot carry too
                await self.conn._conn.send_notification(
                    "session/update", {"sessionId": sid, "update": step["raw"]})
            elif "update" in step:
                update = SessionNotification.model_validate(
                    {"sessionId": sid, "update": step["update"]}).update
                await self.send(sid, update)
            elif "ask" in step:
                options = self.options(step.get("options", ["allow_once", "reject_once"]))
                response = await self.conn.request_permission(
                    session_id=sid, options=options,
                    tool_call=ToolCallUpdate.model_validate(step["ask"]))
                outcome = response.outcome
                results.append("cancelled" if outcome.outcome == "cancelled" else next(
                    o.kind for o in options if o.option_id == outcome.option_id))
            elif "write" in step:
                try:
                    await self.conn.write_text_file(session_id=sid, path=self.path(
                        step["write"]["path"]), content=step["write"]["content"])
                    results.append("write ok")
                except RequestError as exc:
                    results.append(f"write error: {exc}")
            elif "terminal" in step:
                request = step["terminal"]
                try:
                    term = await self.conn.create_terminal(
                        session_id=sid, command=request["command"], args=request.get("args"))
                except RequestError as exc:
                    results.append(f"terminal error: {exc}")
                    continue
                status = await self.conn.wait_for_terminal_exit(session_id=sid,
                                                                terminal_id=term.terminal_id)
                await self.conn.release_terminal(session_id=sid, terminal_id=term.terminal_id)
                results.append(f"exit {status.exit_code}")
        await self.say(sid, "; ".join(results))
        return PromptResponse(stop_reason="end_turn")

    async def do_refusal(self, sid: str, args: list[str]) -> PromptResponse:
        await self.say(sid, "I won't.")
        return PromptResponse(stop_reason="refusal")

    async def do_ask(self, sid: str, args: list[str]) -> PromptResponse:
        kinds = args or list(FORM_FIELDS)
        schema = ElicitationSchema(properties={kind: FORM_FIELDS[kind] for kind in kinds},
                                   required=[kind for kind in kinds if kind in ("text",
                                                                                "choice")])
        return await self._elicit(sid, ElicitationFormSessionMode(
            session_id=sid, tool_call_id="ask-1", requested_schema=schema),
            "A few questions before I start")

    async def do_ask_url(self, sid: str, args: list[str]) -> PromptResponse:
        url = json.loads(" ".join(args)) if args else "https://example.com/login"
        return await self._elicit(sid, ElicitationUrlSessionMode(
            session_id=sid, elicitation_id="e-1", url=url), "Log in, please")

    async def do_ask_bad(self, sid: str, args: list[str]) -> PromptResponse:
        schema = ElicitationSchema.model_validate({"type": "object", "required": ["odd"],
                                                   "properties": {"odd": {"type": "_color"}}})
        return await self._elicit(sid, ElicitationFormSessionMode(
            session_id=sid, requested_schema=schema), "Pick a colour")

    async def _elicit(self, sid: str, mode: Any, message: str) -> PromptResponse:
        try:
            response = await self.conn.create_elicitation(message=message, mode=mode)
        except RequestError as exc:
            self.log(event="elicitation", error=str(exc))
            await self.say(sid, f"elicitation error: {exc}")
            return PromptResponse(stop_reason="end_turn")
        content = getattr(response, "content", None)
        self.log(event="elicitation", action=response.action, content=content)
        await self.say(sid, f"{response.action} {json.dumps(content, sort_keys=True)}")
        return PromptResponse(stop_reason="end_turn")

    async def do_deny_wait(self, sid: str, args: list[str]) -> PromptResponse:
        command = " ".join(args) or "git push"
        chosen = await self.ask(sid, "deny-1", ["allow_once", "reject_once"],
                                title=f"Run {command}", raw_input={"command": command})
        note = ""
        if chosen == "reject_once" and self.mode == "steering":
            with contextlib.suppress(TimeoutError):
                note = await asyncio.wait_for(self.notes.get(), 5.0)
        await self.say(sid, f"{chosen}; note: {note or '(none)'}")
        return PromptResponse(stop_reason="end_turn")


def _act(op: str, arg: str, cwd: str) -> str:
    """One thing the agent does itself (see `self` in the module docstring)."""
    import socket
    path = arg if os.path.isabs(arg) else os.path.join(cwd, arg)
    if op == "write":
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("written by the agent itself\n")
        return "ok written"
    if op == "read":
        with open(path, encoding="utf-8", errors="replace") as handle:
            return f"ok read {len(handle.read())}"
    if op == "connect":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(path)
            return "ok connected"
    if op == "tcp":
        host, _, port = arg.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=5):
            return "ok connected"
    if op == "env":
        return f"ok {os.environ.get(arg, '(unset)')}"
    if op == "home":
        return f"ok {os.environ.get('HOME', '')}"
    if op == "whoami":
        return f"ok {os.getpid()}"
    if op == "orphan":
        return _orphan(path)
    raise OSError(22, f"unknown op {op}")


def _orphan(pidfile: str) -> str:
    """A grandchild that outlives its parent in a session of its own, then sleeps; its
    NSpid line (its pids in every namespace, outermost first) goes to `pidfile`. The reply
    waits until the pidfile is written (a pipe), so a test can read it at once."""
    ready_r, ready_w = os.pipe()
    first = os.fork()
    if first == 0:
        os.close(ready_r)
        os.setsid()
        if os.fork() != 0:
            os._exit(0)  # the parent goes: the grandchild is orphaned
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        with open("/proc/self/status", encoding="ascii") as status:
            ns = next((line.split()[1:] for line in status if line.startswith("NSpid:")), [])
        with open(pidfile, "w", encoding="ascii") as handle:
            handle.write(" ".join(ns) or str(os.getpid()))
        os.write(ready_w, b"1")
        os.close(ready_w)
        while True:
            time.sleep(60)
    os.close(ready_w)
    os.waitpid(first, 0)
    os.read(ready_r, 1)  # the grandchild wrote its pidfile (or died: end of file)
    os.close(ready_r)
    return "ok orphaned"


def main() -> None:
    parser = argparse.ArgumentParser(description="cockpit's ACP test agent")
    parser.add_argument("--mode", default=os.environ.get("ACP_TEST_AGENT_MODE", "normal"))
    parser.add_argument("--log", default=os.environ.get("ACP_TEST_AGENT_LOG"))
    parser.add_argument("--state", default=os.environ.get("ACP_TEST_AGENT_STATE"))
    parser.add_argument("--hold-initialize", metavar="FIFO",
                        help="answer `initialize` only once FIFO is written to and closed")
    for cap in ("list", "load", "resume", "close"):
        parser.add_argument(f"--no-{cap}", action="store_true")
    parser.add_argument("--embedded-context", action="store_true")
    args = parser.parse_args()
    caps = frozenset(c for c in ("list", "load", "resume", "close")
                     if not getattr(args, f"no_{c}"))
    agent = TestAgent(args.mode, args.log, args.state, caps, args.hold_initialize)
    agent.embedded = args.embedded_context
    # Unstable: `session/resume` is routed only with it (SDK 0.12).
    asyncio.run(acp.run_agent(agent, use_unstable_protocol=True))
    agent.log(event="stdin closed")  # the client closed us cleanly (not a kill)


if __name__ == "__main__":
    main()
