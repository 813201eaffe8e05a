"""`cockpit run --model`, `cockpit models` and providers: from the command line (headless) and in
the live cockpit (TUI), against the fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import sys
import tempfile

import pytest
from fakes.openai_fake.helpers import closed_port
from fakes.openai_fake.server import Error, FakeOpenAI, sample_fix_replies
from support.live_app import answerable, settle
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.config import Config, ModelConfig, ProviderConfig
from cockpit.launch import SetupError
from cockpit.launch.models import is_local, model_factory, resolve_model, resolve_server
from cockpit.live import CockpitApp
from engine_adapter import read_journal
from engine_adapter.engines.builtin import make_workspace


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def journal_of(output: str) -> str:
    (line,) = [ln for ln in output.splitlines() if ln.startswith("journal: ")]
    return line.removeprefix("journal: ")


# -- resolving --model ------------------------------------------------------------------------

def test_provider_prefixes_and_model_names_with_colons() -> None:
    env = {"OPENAI_API_KEY": "sk-1"}
    ollama = resolve_model("ollama:qwen3:8b", config=Config(), environ=env)
    assert (ollama.model, ollama.shown, ollama.base_url) == (
        "qwen3:8b", "ollama:qwen3:8b", "http://localhost:11434/v1")
    assert ollama.api_key is None  # the cloud key is not sent to a local port
    plain = resolve_model("qwen3:8b", config=Config(), environ=env)
    assert (plain.model, plain.base_url, plain.api_key) == (
        "qwen3:8b", "https://api.openai.com/v1", "sk-1")
    assert plain.key_variable == "OPENAI_API_KEY"


def test_keys_come_from_the_named_variable() -> None:
    config = Config(providers={"corp": ProviderConfig("https://llm.corp.example/v1",
                                                      "CORP_KEY", 65536)})
    corp = resolve_model("corp:coder", config=config, environ={"CORP_KEY": "k"})
    assert (corp.api_key, corp.key_variable, corp.context_window) == ("k", "CORP_KEY", 65536)
    router = resolve_model("openrouter:qwen/qwen3-coder", config=Config(),
                           environ={"OPENROUTER_API_KEY": "r"})
    assert router.base_url == "https://openrouter.ai/api/v1" and router.api_key == "r"
    local = resolve_model("m", base_url="http://127.0.0.1:8080/v1", api_key_env="LOCAL_KEY",
                          config=Config(), environ={"LOCAL_KEY": "lk"})
    assert local.api_key == "lk"  # named explicitly: sent even to a local server


@pytest.mark.parametrize(("spec", "options", "env", "words"), [
    ("gpt-4.1", {}, {}, "no API key for https://api.openai.com/v1: set $OPENAI_API_KEY"),
    ("m", {"api_key_env": "NOPE"}, {}, "$NOPE is not set"),
    ("m", {"base_url": "ftp://x"}, {"OPENAI_API_KEY": "k"}, "expected an http(s) URL"),
    ("ollama:", {}, {}, "name a model"),
    ("openrouter:x", {}, {}, "set $OPENROUTER_API_KEY"),
])
def test_setup_errors_say_what_is_missing(spec, options, env, words) -> None:
    with pytest.raises(SetupError) as caught:
        resolve_model(spec, config=Config(), environ=env, **options)
    assert words in str(caught.value)


def test_prices_and_windows_from_the_config() -> None:
    config = Config(models={"gpt-4.1-mini": ModelConfig(0.4, 1.6, 1_000_000),
                            "ollama:qwen3": ModelConfig(context_window=40960)})
    priced = resolve_model("gpt-4.1-mini", config=config, environ={"OPENAI_API_KEY": "k"})
    assert priced.price is not None and priced.price.cost(1_000_000, 0) == 0.4
    assert priced.context_window == 1_000_000
    local = resolve_model("ollama:qwen3", config=config, environ={})
    assert local.price is None and local.context_window == 40960


@pytest.mark.parametrize(("url", "local"), [
    ("http://localhost:11434/v1", True), ("http://127.0.0.1:8080", True),
    ("http://[::1]:8000/v1", True), ("http://192.168.1.20:1234/v1", True),
    ("http://10.0.0.5/v1", True), ("http://gpu.local:8000/v1", True),
    ("https://api.openai.com/v1", False), ("http://8.8.8.8/v1", False),
    ("https://localhost.evil.com/v1", False),
])
def test_which_servers_are_local(url, local) -> None:
    assert is_local(url) is local


def test_unknown_provider_for_models() -> None:
    with pytest.raises(SetupError, match="no provider 'nope'"):
        resolve_server("nope", config=Config(), environ={})


# -- the command line ----------------------------------------------------------------------------

def test_run_with_a_model_fixes_the_sample_project_headless(tmp_path) -> None:
    workspace = make_workspace(tmp_path)
    with FakeOpenAI(sample_fix_replies(sys.executable)) as fake:
        result = cli("run", "Fix the failing test", "--model", "fake-model", "--base-url",
                     fake.url, "--cwd", str(workspace), "--headless", "--auto-approve")
    assert result.exit_code == 0, result.output
    assert ("\nend       completed\n          reply:\n          Fixed the off-by-one"
            in result.output)
    assert "check ✔   unit tests" in result.output and "check ✔   doctests" in result.output
    events = list(read_journal(journal_of(result.output)))
    assert events[0].model == "fake-model" and events[-1].status == "completed"


def test_a_configured_provider_its_price_and_the_users_system_prompt(tmp_path) -> None:
    workspace = make_workspace(tmp_path)
    config = tmp_path / "home" / "config"
    config.mkdir(parents=True)
    (config / "system_prompt.md").write_text("House rules: be brief.")
    with FakeOpenAI(sample_fix_replies(sys.executable)) as fake:
        (config / "config.toml").write_text(
            f'[providers.fake]\nbase_url = "{fake.url}"\n\n'
            '[models."fake-model"]\ninput_price = 1.0\noutput_price = 2.0\n')
        result = cli("run", "Fix it", "--model", "fake:fake-model", "--cwd", str(workspace),
                     "--headless", "--auto-approve")
        sent = fake.requests[0]["messages"][0]["content"]
    assert result.exit_code == 0, result.output
    assert sent == "House rules: be brief."
    assert "usage     900 in / 60 out tokens, $0.0010 (fake:fake-model)" in result.output


def test_a_server_that_is_not_running_fails_with_one_clear_line(tmp_path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = cli("run", "x", "--model", "m", "--base-url", url, "--cwd", str(tmp_path),
                 "--headless")
    assert result.exit_code == 1
    assert f"end       failed: cannot connect to {url}: connection refused. Is the server " \
           f"running at {url}?" in result.output
    assert "Traceback" not in result.output


def test_run_errors_for_model_options_are_one_line(tmp_path) -> None:
    for args, words in ((("--model", "m", "--engine", "x:y"), "--engine and --model"),
                        (("--base-url", "http://x/v1", "--engine", "x:y"), "go with --model"),
                        (("--model", "gpt-4.1"), "no API key")):
        result = cli("run", "t", *args, "--headless")
        assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
        assert result.output.startswith("cockpit: error: ") and words in result.output


def test_models_lists_what_the_server_offers() -> None:
    listed = [{"id": "qwen3-coder", "max_model_len": 32768}, "llama3.1:8b"]
    with FakeOpenAI(models=listed) as fake:
        result = cli("models", "--base-url", fake.url)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["llama3.1:8b", "qwen3-coder  (context 32,768 tokens)"]


def test_models_errors_are_one_line() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = cli("models", "--base-url", url)
    assert result.exit_code == 2 and "Is the server running" in result.output
    with FakeOpenAI([Error(401, "bad key")]) as fake:
        listing = cli("models", "--base-url", fake.url.removesuffix("/v1") + "/nope")
    assert listing.exit_code == 2 and "no model listing (404)" in listing.output
    assert cli("models", "nope").exit_code == 2


# -- the live cockpit ------------------------------------------------------------------------

def test_the_live_cockpit_runs_a_real_model_with_approvals_by_key(tmp_path) -> None:
    import asyncio

    workspace = make_workspace(tmp_path)

    async def main(url: str) -> CockpitApp:
        factory = model_factory("fake-model", base_url=url, cwd=workspace)
        cockpit = CockpitApp(factory("Fix the failing test"), next_session=factory,
                             remember_theme=False, theme="cockpit-dark", arm_seconds=0.0)
        async with cockpit.run_test(size=(120, 36)) as pilot:
            answered = 0
            async for event in cockpit.session.events():  # each ask, as it comes
                if event.type == "approval_requested":
                    await settle(pilot, lambda e=event: answerable(cockpit, e.approval_id))
                    await pilot.press("y")
                    answered += 1
            await settle(pilot, lambda: cockpit.view.status == "completed")
            assert answered == 3  # the test run, the switch to editing, the plan
            status = cockpit.query_one("#status").render().plain
            assert "builtin · fake-model" in status and "completed" in status
        return cockpit

    with FakeOpenAI(sample_fix_replies(sys.executable)) as fake:
        cockpit = asyncio.run(main(fake.url))
    assert cockpit.session.state.status == "completed"
    assert cockpit.view.checks["unit-tests"].status == "passed"


def test_config_problems_are_warned_about_and_skipped(tmp_path) -> None:
    config = tmp_path / "home" / "config"
    config.mkdir(parents=True)
    with FakeOpenAI() as fake:
        (config / "config.toml").write_text(
            f'[providers.fake]\nbase_url = "{fake.url}"\ncontext_window = "big"\n')
        result = cli("models", "fake")
    assert result.exit_code == 0, result.output
    assert "warning: config.toml: [providers.fake] context_window: wrong type str (skipped)" \
        in result.output
    assert "fake-model" in result.stdout


def test_the_runner_closes_the_models_connections(tmp_path) -> None:
    import asyncio

    async def main(url: str) -> None:
        factory = model_factory("fake-model", base_url=url, cwd=tmp_path)
        session = factory("t")
        await session.run()
        model = session.runner.model
        assert model._client is not None  # kept across turns
        await factory.aclose()
        assert model._client is None

    with FakeOpenAI([Error(400, "no")]) as fake:
        asyncio.run(main(fake.url))
