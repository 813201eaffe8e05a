"""An edit outside the workspace reads with its absolute path in every view (issue 25 §3): a real
run of the SDK test agent (`script`: the agent reports edits it made itself) shown headless,
exported (markdown and html) and replayed (transcript and end panel); an edit inside reads
relative, as today. Never `../` nor an absolute path with its `/` cut off (`a/tmp/…`)."""

from __future__ import annotations

import json
import os
import shlex

import pytest
from fakes.acp_agent.helpers import agent_argv
from support.replay_app import text_at_end
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.widgets import Transcript


def _edit(call_id: str, path: str) -> list[dict]:
    return [{"update": {"sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "edit",
                        "title": "Edit", "status": "pending", "locations": [{"path": path}],
                        "content": [{"type": "diff", "path": path, "oldText": "a\n",
                                     "newText": "b\n"}]}},
            {"update": {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                        "status": "completed"}}]


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    steps = (_edit("t1", str(tmp_path / "elsewhere" / "abs.txt"))
             + _edit("t2", "../elsewhere/rel.txt")
             + _edit("t3", "sub/../../elsewhere/folded.txt")
             + _edit("t4", "sub/in.txt"))
    journal = tmp_path / "run.jsonl"
    result = CliRunner().invoke(app, [
        "run", "script " + json.dumps(steps), "--agent", shlex.join(agent_argv()), "--cwd",
        str(workspace), "--headless", "--journal", str(journal)])
    assert result.exit_code == 0, result.output
    base = os.path.realpath(tmp_path / "elsewhere")
    outside = [f"{base}/abs.txt", f"{base}/rel.txt", f"{base}/folded.txt"]
    return result.output, journal, outside


def _no_relative_outside(text: str, outside: list[str]) -> None:
    # The task itself (the script, shown as the task) names the paths as the agent sent them.
    text = "\n".join(line for line in text.splitlines() if "sessionUpdate" not in line)
    assert "../elsewhere" not in text and "../../elsewhere" not in text
    for path in outside:
        assert f"a{path}" not in text and f"b{path}" not in text  # no `a/` + a cut path
        assert f" {path.lstrip('/')}" not in text


def test_headless_names_each_outside_edit_absolute(run):
    output, _journal, outside = run
    for path in outside:
        assert f"changed {path}" in output
    assert "changed sub/in.txt" in output
    _no_relative_outside(output, outside)


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_the_export_names_each_outside_edit_absolute(run, fmt):
    _output, journal, outside = run
    result = CliRunner().invoke(app, ["export", str(journal), "--format", fmt])
    assert result.exit_code == 0, result.output
    text = result.output
    for path in outside:
        assert path in text
    assert "a/sub/in.txt" in text
    _no_relative_outside(text, outside)


def test_the_replayed_transcript_names_each_outside_edit_absolute(run):
    _output, journal, outside = run
    shown = text_at_end(journal, Transcript, size=(250, 80),
                        until=lambda text: outside[-1] in text)
    shown = shown[shown.index("✓ edit"):]  # after the task (the script, wrapped over lines)
    for path in outside:
        assert path in shown
    _no_relative_outside(shown, outside)
