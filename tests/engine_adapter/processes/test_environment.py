"""The environment commands get: secrets left out by name (a table) and by value, what the user
passes kept; for real, through the built-in engine's commands (with and without the sandbox),
an ACP agent's terminals, and the command line's `--pass-env`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, approve, drive
from support.event_loop import run
from typer.testing import CliRunner

from cockpit.cli.main import app
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.builtin.process import run_process
from engine_adapter.processes import command_env, is_secret_name
from engine_adapter.sandbox import Sandbox, SandboxSettings

SECRET_NAMES = [
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "openai_api_key", "MyApiKey",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
    "AWS_WEB_IDENTITY_TOKEN_FILE", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET",
    "AZURE_STORAGE_CONNECTION_STRING", "AZURE_CLIENT_CERTIFICATE_PASSWORD", "ARM_CLIENT_SECRET",
    "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN", "HF_TOKEN", "NPM_TOKEN",
    "VAULT_TOKEN", "PGPASSWORD", "MYSQL_PWD", "DB_PASS", "DOCKER_PASSWORD", "TWINE_PASSWORD",
    "SENTRY_DSN", "SLACK_WEBHOOK_URL", "DJANGO_SECRET_KEY", "SECRET_KEY_BASE", "NPM_AUTH",
    "OAUTH_CLIENT", "SSH_AUTH_SOCK", "OP_SESSION_my", "BW_SESSION", "CARGO_REGISTRY_TOKEN",
    "STRIPE_SECRET_KEY", "SIGNING_PRIVATE", "SESSION_COOKIE", "DIGITALOCEAN_ACCESS_TOKEN",
    "SOME_CREDS", "HEROKU_API_KEY", "my.token", "AZURE_STORAGE_SAS",
]
KEPT_NAMES = [
    "PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "PWD", "OLDPWD", "TZ", "EDITOR",
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "PYTHONPATH", "VIRTUAL_ENV", "CI", "LOGNAME",
    "XDG_CONFIG_HOME", "AUTHOR", "PASSAGE_DIR_HINT", "COMPASS", "SALTY", "DSNX",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_names_that_say_secret_are_left_out(name) -> None:
    assert is_secret_name(name)
    assert command_env({name: "x", "PATH": "/bin"}) == {"PATH": "/bin"}


@pytest.mark.parametrize("name", KEPT_NAMES)
def test_ordinary_names_are_kept(name) -> None:
    assert not is_secret_name(name) and command_env({name: "x"}) == {name: "x"}


@pytest.mark.parametrize("value", ["sk-proj-" + "Ab3" * 20, "ghp_" + "a1" * 18,
                                   "postgres://app:s3cretpassw0rd@db/x", "AKIA" + "Q7" * 8])
def test_a_secret_value_is_left_out_whatever_its_name(value) -> None:
    assert command_env({"SERVICE_URL": value, "X": "1"}) == {"X": "1"}


def test_passed_and_withheld_names() -> None:
    environ = {"GITHUB_TOKEN": "t", "LLM": "local-key", "PATH": "/bin"}
    assert command_env(environ, passed=["GITHUB_TOKEN"], withheld=["LLM"]) == {
        "GITHUB_TOKEN": "t", "PATH": "/bin"}
    assert command_env(environ, passed=["LLM"], withheld=["LLM"])["LLM"] == "local-key"


SECRETS = {"OPENAI_API_KEY": "sk-test-cockpit-1", "AWS_SECRET_ACCESS_KEY": "aws-cockpit-2",
           "GITHUB_TOKEN": "gh-cockpit-3", "INNOCENT": "sk-proj-" + "Zz9" * 20}


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("mode", ["workspace-write", "off", None])
def test_a_command_never_sees_the_cockpits_secrets(tmp_path, secret_env, mode) -> None:
    sandbox = None if mode is None else Sandbox(SandboxSettings(mode=mode), workspace=tmp_path)
    done = run(run_process(["printenv"], cwd=tmp_path, timeout=30, output_cap=100_000,
                           sandbox=sandbox))
    assert done.exit_code == 0 and "PATH=" in done.output
    for value in SECRETS.values():
        assert value not in done.output


def test_a_passed_variable_reaches_the_command(tmp_path, secret_env) -> None:
    sandbox = Sandbox(SandboxSettings(pass_env=("GITHUB_TOKEN",)), workspace=tmp_path)
    done = run(run_process(["printenv"], cwd=tmp_path, timeout=30, output_cap=100_000,
                           sandbox=sandbox))
    assert "GITHUB_TOKEN=gh-cockpit-3" in done.output and "sk-test-cockpit-1" not in done.output


def test_an_acp_terminal_never_sees_the_agents_key(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    runner = AcpRunner(agent_argv(), cwd=ws, env={"OPENAI_API_KEY": "sk-agent-own-9",
                                                 "MY_TOKEN": "tok-agent-8"})
    request = {"command": "printenv", "args": []}

    async def main():
        try:
            return await drive(runner, f"terminal-json {json.dumps(request)}",
                               tmp_path / "acp.jsonl", answer=approve(True))
        finally:
            await runner.close()

    _state, events = run(main())
    outputs = " ".join(e.output for e in events if e.type == "tool_end" and e.tool == "terminal")
    assert "PATH=" in outputs
    assert "sk-agent-own-9" not in outputs and "tok-agent-8" not in outputs
    assert runner.connection.env["OPENAI_API_KEY"] == "sk-agent-own-9"  # the agent has it


def test_pass_env_on_the_command_line(tmp_path, monkeypatch) -> None:
    from cockpit.cli.options import RunFlags
    from cockpit.cli.preflight import run_options
    from cockpit.launch import SetupError

    monkeypatch.setenv("GITHUB_TOKEN", "x")
    options = run_options(RunFlags(), tui=False, pass_env=("GITHUB_TOKEN",))
    assert options.sandbox is not None and options.sandbox.pass_env == ("GITHUB_TOKEN",)
    monkeypatch.delenv("NOT_SET_HERE", raising=False)
    with pytest.raises(SetupError, match="not set in this shell"):
        run_options(RunFlags(), tui=False, pass_env=("NOT_SET_HERE",))
    result = CliRunner().invoke(app, ["run", "t", "--engine", "os:getcwd", "--pass-env",
                                      "GITHUB_TOKEN", "--cwd", str(tmp_path)])
    assert result.exit_code == 2 and "--pass-env applies" in result.output


def test_the_models_key_variable_is_withheld_whatever_its_name(tmp_path, monkeypatch) -> None:
    from cockpit.launch import RunOptions, model_factory

    monkeypatch.setenv("MY_LLM", "local-secret")
    factory = model_factory("gpt-x", base_url="http://127.0.0.1:9/v1", api_key_env="MY_LLM",
                            cwd=tmp_path, options=RunOptions(sandbox=SandboxSettings()))
    assert factory.sandbox is not None
    assert "MY_LLM" not in factory.sandbox.command_env({"MY_LLM": "local-secret"})


def test_config_pass_env(tmp_path: Path, monkeypatch) -> None:
    from cockpit.config import load_config
    from cockpit.paths import config_dir

    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text('[sandbox]\npass_env = ["GH_TOKEN"]\n')
    assert load_config().sandbox_pass_env == ("GH_TOKEN",)
    (config_dir() / "config.toml").write_text('[sandbox]\npass_env = "GH_TOKEN"\n')
    config = load_config()
    assert config.sandbox_pass_env == () and any("pass_env" in p for p in config.problems)
