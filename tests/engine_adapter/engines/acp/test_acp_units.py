"""The ACP adapter's pieces without an agent process: text cleaning, permissions, the catalogue,
workspace confinement, the update mapping and the stdout framing."""

from __future__ import annotations

import asyncio
import importlib.resources
import os

import pytest
from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_current_mode
from acp.schema import Cost, PermissionOption, UsageUpdate

from engine_adapter.engines.acp import AgentSpecError, agent_env, load_catalogue, resolve_agent
from engine_adapter.engines.acp.agent.process import PipeTransport
from engine_adapter.engines.acp.client import UpdateMapper
from engine_adapter.engines.acp.client.files import Workspace, WorkspaceError
from engine_adapter.engines.acp.client.permissions import (
    approval_input,
    choose_option,
    content_hash,
    destructive_reason,
    same_command,
    tier_for,
)
from engine_adapter.engines.acp.text import clean, clean_json, clean_stderr_line
from engine_adapter.shell import grant_prefix

# text --------------------------------------------------------------------------------------------

def test_clean_escapes_controls_and_bidi_but_keeps_text():
    assert clean("plain text\nwith\ttabs") == "plain text\nwith\ttabs"
    assert clean("\x1b[2Jgone") == "\\x1b[2Jgone"
    assert clean("over\rwrite") == "over\\x0dwrite"
    assert clean("line\r\nend") == "line\nend"
    assert clean("evil\u202eexe.txt") == "evil\\u202eexe.txt"
    assert clean("x" * 500, 100) == "x" * 70 + " … 430 more characters dropped"
    assert clean("git status\u200b") == "git status\\u200b"
    assert clean("EUR" * 100, 10) == "EUREUREUR…"  # a tiny field: no room for a count


def test_clean_stderr_drops_colour_and_clean_json_caps():
    assert clean_stderr_line("\x1b[31mERROR\x1b[0m boom\n") == "ERROR boom"
    data = clean_json({"k\x1b": ["\x07"] * 300, "n": 1, "deep": {"a": {"b": 1}}}, items=5)
    assert data["k\\x1b"][:5] == ["\\x07"] * 5 and data["k\\x1b"][5] == "… 295 more items"
    assert data["n"] == 1 and data["deep"] == {"a": {"b": 1}}


# permissions -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "raw", "tier"), [
    ("read", {"path": "a"}, 1), ("search", None, 1), ("think", None, 1), ("fetch", None, 2),
    ("edit", {"path": "a"}, 3), ("delete", {"path": "a"}, 3), ("move", None, 3),
    ("execute", {"command": "ls -la"}, 3), (None, None, 3), ("other", None, 3),
    ("execute", {"command": "rm -rf build"}, 4), ("execute", {"command": ["sudo", "ls"]}, 4),
    ("execute", {"command": "git push --force origin main"}, 4),
    ("execute", {"command": "git reset --hard HEAD~1"}, 4),
    ("execute", {"command": "make && rm -rf x"}, 4),
    ("execute", {"command": "bash -c 'rm -rf x'"}, 4),
    ("execute", {"command": "git status"}, 3), ("execute", {"command": "git push"}, 3),
    ("read", {"command": "cat x > /etc/passwd"}, 4),  # the kind does not lower a command's tier
])
def test_tier_from_kind_and_destructive_commands(kind, raw, tier, tmp_path):
    assert tier_for(kind, raw, str(tmp_path)) == tier


def test_destructive_reason_comes_from_the_shared_classifier(tmp_path):
    assert destructive_reason({"command": "git push --force"}, str(tmp_path)) == "forced push"
    assert destructive_reason({"command": "grep -r format src"}, str(tmp_path)) is None
    assert destructive_reason({"path": "x"}, str(tmp_path)) is None


def test_approval_input_makes_commands_grantable_and_keeps_what_matters(tmp_path):
    ws = str(tmp_path)
    shell = approval_input({"command": "git status", "cwd": ws, "description": "status"},
                           workspace=ws)
    assert shell == {"command": "git status", "description": "status"}
    assert grant_prefix("execute", shell) == "git status"
    argv = approval_input({"cmd": ["npm", "test"]}, workspace=ws)
    assert argv == {"argv": ["npm", "test"]} and grant_prefix("execute", argv) == "npm test"
    elsewhere = approval_input({"command": "ls", "cwd": "/etc"}, workspace=ws)
    assert elsewhere["cwd"] == "/etc" and grant_prefix("execute", elsewhere) == ""
    edit = approval_input({"path": "a.py", "new": "x"}, locations=["/w/a.py"])
    assert edit == {"path": "a.py", "new": "x"} and grant_prefix("edit", edit) == ""
    assert approval_input(None, locations=["/w/b"]) == {"locations": ["/w/b"]}
    assert approval_input("raw text") == {"input": "raw text"}


def test_same_command_across_spellings():
    assert same_command("ls -la", ["ls", "-la"])
    assert same_command(["echo", "a b"], "echo 'a b'")
    assert not same_command("ls", ["ls", "-la"])
    assert not same_command("echo 'unclosed", ["echo"])


def _options(*kinds):
    return [PermissionOption(option_id=f"id-{i}", name=k, kind=k) for i, k in enumerate(kinds)]


@pytest.mark.parametrize(("kinds", "allowed", "remembered", "forward", "expected"), [
    (("allow_once", "allow_always", "reject_once"), True, False, False, "allow_once"),
    (("allow_once", "allow_always", "reject_once"), True, True, False, "allow_once"),
    (("allow_once", "allow_always", "reject_once"), True, True, True, "allow_always"),
    (("allow_always", "reject_once"), True, False, False, None),
    (("allow_always", "reject_once"), True, True, False, "allow_always"),
    (("allow_once", "reject_once", "reject_always"), False, False, False, "reject_once"),
    (("allow_once", "reject_always"), False, False, False, "reject_always"),
    (("allow_once",), False, False, False, None),
])
def test_choose_option_by_kind(kinds, allowed, remembered, forward, expected):
    chosen = choose_option(_options(*kinds), allowed=allowed, remembered=remembered,
                           forward_always=forward)
    assert (chosen.kind if chosen else None) == expected


# catalogue ---------------------------------------------------------------------------------------

def test_shipped_catalogue_is_package_data_and_names_the_known_agents():
    assert importlib.resources.files("engine_adapter.engines.acp").joinpath("agents.toml").is_file()
    agents = load_catalogue()
    assert {"codex", "claude", "gemini"} <= set(agents)
    codex = agents["codex"]
    assert codex.argv == ["codex-acp"] and "OPENAI_API_KEY" in codex.env
    assert codex.install == "npm install -g @agentclientprotocol/codex-acp"
    assert codex.auth_vars == {"api-key": ("CODEX_API_KEY", "OPENAI_API_KEY")}
    assert agents["claude"].install == "npm install -g @agentclientprotocol/claude-agent-acp"
    gemini = agents["gemini"]
    assert gemini.argv == ["gemini", "--acp"]
    assert gemini.launch_argv("gemini-2.5-pro") == ["gemini", "--acp", "--model=gemini-2.5-pro"]
    assert codex.launch_argv("gpt-5") == ["codex-acp"]  # codex chooses its model over ACP
    # The workspace the human chose is trusted: Gemini then reads the project's settings.
    assert agent_env(gemini, environ={})["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert "GEMINI_CLI_TRUST_WORKSPACE" not in agent_env(codex, environ={})


def test_resolve_agent_names_commands_and_errors():
    assert resolve_agent("codex").command == "codex-acp"
    custom = resolve_agent(f"{os.sys.executable} agent.py --flag")
    assert custom.argv == [os.sys.executable, "agent.py", "--flag"] and not custom.known
    assert custom.env == ()  # a command-line agent gets no provider key unless passed
    with pytest.raises(AgentSpecError, match="unknown agent 'nope'"):
        resolve_agent("nope")
    with pytest.raises(AgentSpecError, match="needs an agent name"):
        resolve_agent("  ")
    with pytest.raises(AgentSpecError, match="not a valid command line"):
        resolve_agent("agent 'unclosed")


def test_bad_catalogue_is_a_clear_error(tmp_path):
    bad = tmp_path / "agents.toml"
    bad.write_text("[agents.x]\nargs = []\n")
    with pytest.raises(AgentSpecError, match="'x' has no command"):
        load_catalogue(bad)
    bad.write_text("not toml [")
    with pytest.raises(AgentSpecError, match="cannot read the agent catalogue"):
        load_catalogue(bad)


def test_agent_env_passes_base_and_auth_variables_only():
    spec = load_catalogue()["codex"]
    environ = {"HOME": "/h", "PATH": "/bin", "LC_ALL": "C", "OPENAI_API_KEY": "sk",
               "ANTHROPIC_API_KEY": "other", "AWS_SECRET_ACCESS_KEY": "no"}
    env = agent_env(spec, {"CODEX_HOME": "/c"}, environ)
    assert env == {"HOME": "/h", "PATH": "/bin", "LC_ALL": "C", "OPENAI_API_KEY": "sk",
                   "CODEX_HOME": "/c"}


# workspace ---------------------------------------------------------------------------------------

def test_workspace_confines_paths_through_symlinks(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "out").symlink_to(tmp_path)
    ws = Workspace(root)
    assert ws.read(str(root / "a.txt"), line=2, limit=1) == "two\n"
    assert ws.read("a.txt") == "one\ntwo\nthree\n"
    for path in ("../x", str(tmp_path / "x"), "out/x", "~/x", "a\x00b"):
        with pytest.raises(WorkspaceError):
            ws.resolve(path)
    with pytest.raises(WorkspaceError, match="does not exist"):
        ws.read("missing.txt")
    target = ws.resolve("new/dir/b.txt")
    assert "+hello" in ws.prepare_write(target, "hello\n")
    ws.write(target, "hello\n")
    assert (root / "new" / "dir" / "b.txt").read_text() == "hello\n"


# mapping -----------------------------------------------------------------------------------------

class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 0.5
        return self.t


def test_mapper_maps_tool_calls_plan_mode_usage_and_ignores_the_rest():
    events = []
    mapper = UpdateMapper(events.append, clock=_Clock())
    mapper.start_turn(3)
    mapper.on_update(update_user_message_text("echo"))
    mapper.on_update(update_agent_message_text("hi"))
    mapper.on_update(update_plan([plan_entry("a", status="completed"), plan_entry("b")]))
    mapper.on_update(update_current_mode("code"))
    mapper.on_update(update_current_mode("code"))  # no change, no event
    mapper.on_update(start_tool_call("c1", "Run ls", kind="execute", status="pending",
                                     raw_input={"command": "rm -rf x"}))
    mapper.on_update(update_tool_call("c1", status="in_progress", title="Run it"))
    mapper.on_update(update_tool_call("c1", status="completed",
                                      content=[tool_content(text_block("done"))]))
    mapper.on_update(update_tool_call("c1", status="failed"))  # late: the row is final
    mapper.on_update(UsageUpdate(session_update="usage_update", used=5, size=10,
                                 cost=Cost(amount=0.5, currency="EUR")))
    kinds = [e.type for e in events]
    assert kinds == ["model_update", "agent_plan", "phase_changed", "tool_start",
                     "tool_end", "model_usage"]
    assert events[0].turn == 3 and mapper.reply == ["hi"]
    assert [(x.content, x.status) for x in events[1].entries] == [("a", "completed"),
                                                                   ("b", "pending")]
    start, end = events[3], events[4]
    assert start.tool == "execute" and start.tier == 4 and start.title == "Run ls"
    assert end.ok and end.output == "done" and end.duration_ms == 500.0
    assert end.title == "Run it"
    assert events[5].cost_usd is None and events[5].cost == 0.5 and events[5].currency == "EUR"
    assert mapper.ignored == 2


def test_mapper_ends_open_calls_and_starts_unannounced_ones():
    events = []
    mapper = UpdateMapper(events.append, clock=_Clock())
    mapper.on_update(update_tool_call("late", status="in_progress", kind="read"))
    mapper.close_open_calls("the turn was cancelled")
    assert [e.type for e in events] == ["tool_start", "tool_end"]
    assert events[1].error == "the turn was cancelled while the call was in_progress"


# framing -----------------------------------------------------------------------------------------

def _transport(data: bytes) -> PipeTransport:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return PipeTransport(reader, None)  # type: ignore[arg-type]


def test_transport_reads_messages_and_stops_at_garbage():
    async def read_all(data: bytes) -> tuple[list, str | None]:
        transport = _transport(data)
        out = []
        while (message := await transport.receive()) is not None:
            out.append(message)
        return out, transport.garbage

    lines = b'{"jsonrpc":"2.0","method":"a"}\n\n{"jsonrpc":"2.0","id":1,"result":null}'
    assert asyncio.run(read_all(lines))[0] == [{"jsonrpc": "2.0", "method": "a"},
                                               {"jsonrpc": "2.0", "id": 1, "result": None}]
    messages, garbage = asyncio.run(read_all(b'{"id":1}\nhello \x1b[31m world\n{"id":2}\n'))
    assert messages == [{"id": 1}] and garbage == "hello \\x1b[31m world"
    assert asyncio.run(read_all(b"[1, 2]\n"))[1] == "[1, 2]"


def test_transport_hands_notifications_to_its_handler_in_order():
    async def main() -> tuple[list, list]:
        transport = _transport(b'{"method":"session/update","params":1}\n'
                               b'{"method":"other","params":2}\n{"id":3,"result":4}\n')
        seen: list = []
        transport.on_notification = lambda method, params: (
            seen.append(params) or method == "session/update")
        passed = [await transport.receive(), await transport.receive()]
        return seen, passed

    seen, passed = asyncio.run(main())
    assert seen == [1, 2]
    assert passed == [{"method": "other", "params": 2}, {"id": 3, "result": 4}]


def test_transport_joins_lines_split_across_reads(monkeypatch):
    import engine_adapter.engines.acp.agent.process as process

    monkeypatch.setattr(process, "READ_CHUNK", 3)  # split lines, and a character, across reads

    async def main() -> list:
        transport = _transport('{"text":"héllo ✓"}\n{"id":2}'.encode())
        return [await transport.receive(), await transport.receive(), await transport.receive()]

    assert asyncio.run(main()) == [{"text": "héllo ✓"}, {"id": 2}, None]


def test_client_maps_notifications_fast_and_by_schema(tmp_path):
    from engine_adapter.engines.acp.client.client import AcpClient, RunContext

    class Sink:
        def __init__(self) -> None:
            self.events: list = []

        def emit(self, event) -> None:
            self.events.append(event)

    class Token:
        cancelled, reason = False, None

    client = AcpClient(Workspace(tmp_path), env={}, agent_name="t")
    sink = Sink()
    take = client.take_notification
    assert take("session/update", {"update": {"sessionUpdate": "agent_message_chunk",
                                              "content": {"type": "text", "text": "dropped"}}})
    client.run = RunContext(sink, None, Token())  # type: ignore[arg-type]
    client.start_turn(1)

    def chunk(kind: str, content: object) -> dict:
        return {"sessionId": "s", "update": {"sessionUpdate": kind, "content": content}}

    assert take("session/update", chunk("agent_message_chunk", {"type": "text", "text": "a"}))
    assert take("session/update", chunk("agent_thought_chunk", {"type": "text", "text": "b"}))
    assert take("session/update", chunk("agent_message_chunk",
                                        {"type": "image", "data": "", "mimeType": "image/png"}))
    assert take("session/update", chunk("agent_message_chunk", {"type": "text", "text": 5}))
    assert take("session/update", {"nonsense": True})
    assert not take("session/other", {})
    assert [(e.channel, e.text) for e in sink.events] == [
        ("message", "a"), ("thought", "b"), ("message", "[image image/png]")]
    assert client.mapper.reply == ["a", "[image image/png]"]


def test_mapper_keeps_an_agents_diffs_apart_from_the_output():
    from acp import tool_diff_content

    from engine_adapter.engines.acp.client.mapping import RenderedDiff

    events = []
    mapper = UpdateMapper(events.append, clock=_Clock(), display_path=lambda p: p)
    mapper.start_turn(1)
    mapper.on_update(start_tool_call("e1", "Edit a.txt", kind="edit", status="in_progress"))
    update = update_tool_call("e1", status="completed", content=[
        tool_content(text_block("edited")), tool_diff_content("a.txt", "new\n", "old\n")])
    # As the client hands it over: a diff it rendered off the loop stands in the content.
    rendered = RenderedDiff("--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-x\n+y\n")
    mapper.on_update(update.model_copy(update={"content": [*update.content, rendered]}))
    end = events[-1]
    assert end.output == "edited"
    assert end.diff == ("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"
                        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-x\n+y\n")


@pytest.mark.parametrize("cancel_at", ["before", "at_start"])
def test_a_permitted_write_does_not_act_after_a_cancel(tmp_path, cancel_at):
    """An agent's `edit` permission covers a write without asking, but not one after the task
    was cancelled: before the request, or by the start event itself (a journal that could not
    record it cancels the run)."""
    from acp import RequestError

    from engine_adapter.context import RunContext
    from engine_adapter.engines.acp.client import AcpClient

    class Token:
        cancelled, reason = False, None

    token = Token()

    class Sink:
        def __init__(self) -> None:
            self.events: list = []

        def emit(self, event) -> None:
            self.events.append(event)
            if cancel_at == "at_start" and event.type == "tool_start":
                token.cancelled = True

    target = tmp_path / "app.py"
    target.write_text("old\n")
    client = AcpClient(Workspace(tmp_path), env={}, agent_name="t")
    sink = Sink()
    client.run = RunContext(sink, None, token)  # type: ignore[arg-type]
    client.start_turn(1)
    client.permits.add("edit", {"path": str(target)}, [], client.workspace.resolve,
                       shown=[(str(target), content_hash("new\n"))])
    token.cancelled = cancel_at == "before"
    with pytest.raises(RequestError):
        asyncio.run(client.write_text_file("s", str(target), "new\n"))
    assert target.read_text() == "old\n"
    ends = [e for e in sink.events if e.type == "tool_end"]
    assert all(not e.ok for e in ends)
