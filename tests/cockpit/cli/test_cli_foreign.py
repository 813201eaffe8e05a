"""Another tool's session file given to `cockpit replay`, `export`, `verify`, `resume` or found
among the journals (`cockpit journals`): one line saying what it is and how to view it, never
"crashed?", "corrupt" or "not a cockpit journal" alone; nothing is started for it."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.paths import TESTS
from typer.testing import CliRunner

from cockpit.cli.main import app

FOREIGN = TESTS / "golden" / "foreign"
FIXTURES = sorted(p.name for p in FOREIGN.iterdir())
VIEW = {
    "claude-code-session.jsonl": "`cockpit replay --agent claude --session "
                                 "3f2b8c1a-7d4e-4f6a-9b2c-1e5d7a9c0b3f --cwd /home/dev/project`",
    "codex-rollout.jsonl": "`cockpit replay --agent codex --session "
                           "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b --cwd /home/dev/project`",
    "codex-rollout-old.jsonl": "`cockpit replay --agent codex --session "
                               "5e6f7a8b-1c2d-4e3f-9a0b-c1d2e3f4a5b6`",
    "gemini-chat-session.json": "`cockpit replay --agent gemini --session "
                                "7c9e6679-7425-40de-944b-e07fc1f90ae7`",
    "gemini-chat-session.jsonl": "`cockpit replay --agent gemini --session "
                                 "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e`",
    "checkpoint-refactor.json": "`/chat resume refactor` in Gemini CLI",
    "inspect-log.json": "`inspect view`",
}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _one_line(result, name: str) -> str:
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    line = lines[0]
    assert name in line and "not a cockpit journal; view it with " in line
    for wrong in ("crashed", "corrupt", "Traceback", "torn"):
        assert wrong not in line
    return line


def test_every_fixture_is_listed_with_its_hint():
    assert set(FIXTURES) == set(VIEW)


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize(("command", "code"), [(["replay"], 1), (["export"], 1),
                                               (["export", "--format", "html"], 1),
                                               (["verify"], 2)])
def test_the_readers_say_what_the_file_is(name, command, code):
    result = CliRunner().invoke(app, [*command, str(FOREIGN / name)])
    assert result.exit_code == code
    assert VIEW[name] in _one_line(result, name)


@pytest.mark.parametrize("name", FIXTURES)
def test_resume_says_what_the_file_is_and_starts_nothing(name):
    result = CliRunner().invoke(app, ["resume", str(FOREIGN / name), "--headless"])
    assert result.exit_code == 2
    assert VIEW[name] in _one_line(result, name)


def test_journals_lists_a_foreign_file_as_foreign(tmp_path):
    from cockpit.paths import journal_dir

    folder = journal_dir()
    folder.mkdir(parents=True)
    for name in ("claude-code-session.jsonl", "codex-rollout.jsonl"):
        shutil.copy(FOREIGN / name, folder / name)
    result = CliRunner().invoke(app, ["journals"])
    assert result.exit_code == 0, result.output
    header, *lines = result.output.strip().splitlines()
    assert header.split()[:2] == ["started", "status"]
    assert len(lines) == 2
    assert all(" foreign " in line for line in lines)
    assert any("a Claude Code session" in line for line in lines)
    assert any("a Codex session (rollout)" in line for line in lines)
    assert "crashed" not in result.output
    assert "no journal" in CliRunner().invoke(app, ["journals", "--status", "crashed"]).output


_PREFIXES = [b"", *(p.read_bytes()[:200] for p in sorted(FOREIGN.iterdir()))]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_PREFIXES), st.binary(max_size=2000))
def test_a_summary_of_any_bytes_never_raises(tmp_path, prefix, noise):
    """The picker's and `cockpit journals`' summary of a file: a foreign head, then garbage."""
    from cockpit.journals import FOREIGN as FOREIGN_STATUS
    from cockpit.journals import summarize

    path = tmp_path / "x.jsonl"
    path.write_bytes(prefix + noise)
    summary = summarize(path)
    assert summary.status != FOREIGN_STATUS or summary.foreign is not None
