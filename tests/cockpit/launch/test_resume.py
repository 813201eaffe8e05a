"""What `cockpit resume` takes from a journal, which is untrusted (`cockpit.launch.resume`): the
agent only by its catalogue name (never the journal's command line), a journal without an agent
session is nothing to resume, and only the cockpit's own journals choose the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_adapter.events import AgentStart, dump_event


def _agent_journal(path: Path, **start) -> Path:
    fields = {"task": "t", "engine": "acp:codex", "acp_session_id": "s-1",
              "command": "sh -c 'touch /tmp/pwned'", **start}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_event(AgentStart(**fields)) + b"\n")
    return path


@pytest.mark.parametrize(("engine", "agent"), [
    ("acp:codex", "codex"), ("acp:claude", "claude"),
    ("acp:codex ", None), ("acp:Codex", None), ("acp: codex", None), ("acp:codex --evil", None),
    ("acp:../codex", None), ("acp:/usr/bin/codex-acp", None), ("acp:my-agent", None),
    ("acp:codex\n", None), ("acp:gemini\x1b[2J", None),
])
def test_a_journal_names_its_agent_only_by_a_catalogue_name(tmp_path, engine, agent):
    from cockpit.launch import resumable

    found = resumable(_agent_journal(tmp_path / "j.jsonl", engine=engine), None)
    assert found.agent == agent  # the journal's command line is never what is started
    assert found.session_id == "s-1"


@pytest.mark.parametrize("start", [
    {"engine": "builtin"}, {"engine": "codex"}, {"acp_session_id": None}, {"acp_session_id": ""},
])
def test_a_journal_without_an_agent_session_is_nothing_to_resume(tmp_path, start):
    from cockpit.launch import SetupError, resumable

    with pytest.raises(SetupError, match="not the journal of an agent"):
        resumable(_agent_journal(tmp_path / "j.jsonl", **start), None)


def test_only_the_cockpits_own_journals_choose_the_workspace(tmp_path, monkeypatch):
    from cockpit.launch import resumable
    from cockpit.paths import journal_dir

    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    own = _agent_journal(journal_dir() / "own.jsonl", cwd=str(project))
    assert resumable(own, None).workspace() == project
    shared = _agent_journal(tmp_path / "mail" / "shared.jsonl", cwd="/")
    assert resumable(shared, None).workspace() is None  # here, or --cwd: not the journal's "/"
    for cwd in ("relative/dir", str(tmp_path / "gone"), str(own)):  # not an existing dir
        journal = _agent_journal(journal_dir() / "other.jsonl", cwd=cwd)
        assert resumable(journal, None).workspace() is None
