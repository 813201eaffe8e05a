"""MCP servers and agent environments from config.toml (`cockpit.launch.agent_config`): each
server checked, a broken file one problem, a command resolved on PATH."""

from __future__ import annotations

from cockpit.launch.agent_config import load_agents_config, resolve_command
from engine_adapter.engines.acp.agent import McpServer


def test_mcp_servers_and_agent_env_from_config(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('''
[mcp_servers.files]
command = "sh"
args = ["-c", "true"]
env = { LEVEL = "debug" }

[mcp_servers.docs]
url = "https://mcp.example/mcp"
headers = { Authorization = "Bearer t" }

[mcp_servers.both]
command = "x"
url = "https://x"

[mcp_servers.bad]
url = "file:///etc/passwd"

[mcp_servers.typo]
command = "y"
argz = []

[agents.codex.env]
CODEX_HOME = "/tmp/c"

[agents.claude.env]
"BAD NAME" = "x"
''')
    loaded = load_agents_config(config)
    assert sorted(loaded.mcp_servers) == ["docs", "files", "typo"]
    assert loaded.mcp_servers["docs"].transport == "http"
    assert loaded.mcp_servers["files"].env == (("LEVEL", "debug"),)
    assert loaded.agent_env == {"codex": {"CODEX_HOME": "/tmp/c"}}
    problems = "\n".join(loaded.problems)
    for expected in ("[mcp_servers.both] needs either command", "[mcp_servers.bad] url must",
                     "[mcp_servers.typo] has no setting 'argz'", "[agents.claude.env] must be"):
        assert expected in problems
    resolved = resolve_command(loaded.mcp_servers["files"])
    assert resolved.command.endswith("/sh") and resolved.command.startswith("/")
    missing = resolve_command(McpServer(name="m", command="no-such-program-xyz"))
    assert "'no-such-program-xyz' is not on PATH" in missing


def test_a_broken_config_is_one_problem(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[mcp_servers\n")
    assert len(load_agents_config(config).problems) == 1
