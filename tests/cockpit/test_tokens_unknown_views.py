"""Token counts never reported read "unknown" in every view (issue 25 §3), a reported 0 reads 0:
the status line (replay viewer), the export (markdown, html), the headless lines, `cockpit
journals`; and a real ACP run whose agent reports no usage."""

from __future__ import annotations

import shlex

import pytest
from fakes.acp_agent.helpers import agent_argv
from support.journals import write
from support.replay_app import text_at_end
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.widgets.panels import StatusLine
from engine_adapter.events import AgentEnd, AgentStart, ModelUsage, TurnEnd, TurnStart

COST_ONLY = ModelUsage(cost_usd=0.01, cost=0.01, currency="USD", scope="session")
CASES = {
    "none": ([], "tokens unknown", "unknown"),
    "cost-only": ([COST_ONLY], "tokens unknown · $0.0100", "unknown"),
    "zero": ([ModelUsage(input_tokens=0, output_tokens=0)], "0 in / 0 out", "0/0"),
    "some": ([COST_ONLY, ModelUsage(input_tokens=1500, output_tokens=20)],
             "1,500 in / 20 out · $0.0100", "1,500/20"),
}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def _journal(path, usage: list) -> None:
    events = [AgentStart(task="t", engine="acp:x"), TurnStart(turn=1), *usage,
              TurnEnd(turn=1, stop_reason="end_turn"), AgentEnd(status="completed", result="ok")]
    write(path, [e.model_copy(update={"seq": i, "ts": 1000.0 + i, "session_id": "s"})
                 for i, e in enumerate(events)])


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_status_line_says_unknown_only_when_unreported(case, tmp_path):
    usage, status, _listing = CASES[case]
    path = tmp_path / "j.jsonl"
    _journal(path, usage)
    shown = text_at_end(path, StatusLine, size=(160, 30), until=lambda text: "turn 1" in text)
    assert status in shown
    if case in ("none", "cost-only"):
        assert "0 in" not in shown and "0 out" not in shown


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_the_export_says_unknown_only_when_unreported(case, fmt, tmp_path):
    usage, _status, _listing = CASES[case]
    path = tmp_path / "j.jsonl"
    _journal(path, usage)
    text = CliRunner().invoke(app, ["export", str(path), "--format", fmt]).output
    if case in ("none", "cost-only"):
        assert "tokens unknown (none reported)" in text and "0 input" not in text
    else:
        assert "input" in text and "output tokens" in text and "unknown" not in text


@pytest.mark.parametrize("case", sorted(CASES))
def test_headless_lines_and_the_journal_list(case, tmp_path):
    from cockpit.paths import journal_dir

    usage, _status, listing = CASES[case]
    folder = journal_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "j.jsonl"
    _journal(path, usage)
    lines = CliRunner().invoke(app, ["replay", str(path)]).output  # no terminal: lines
    if case == "cost-only":
        assert "usage     +$0.0100" in lines
    if case == "zero":
        assert "usage     0 in / 0 out tokens" in lines
    listed = CliRunner().invoke(app, ["journals"]).output
    assert f" {listing} " in listed


def test_a_real_agent_that_reports_no_usage_reads_unknown(tmp_path):
    from cockpit.paths import journal_dir

    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = CliRunner().invoke(app, ["run", "hello", "--agent", shlex.join(agent_argv()),
                                      "--cwd", str(workspace), "--headless"])
    assert result.exit_code == 0, result.output
    assert "0 in / 0 out" not in result.output
    listed = CliRunner().invoke(app, ["journals"]).output
    assert " unknown " in listed and "0/0" not in listed
    (journal,) = journal_dir().glob("*.jsonl")
    report = CliRunner().invoke(app, ["export", str(journal)]).output
    assert "tokens unknown (none reported)" in report
