"""`cockpit ps`'s table keeps its columns in line: a long engine (an agent's whole command line)
or task is cut with an ellipsis, every row's JOURNAL starts where the heading's does, and the
run's fields are shown as plain words (a newline in a task cannot start a fake row, a terminal
escape shows as `\\x1b`: `engine_adapter.text.printable`, as the other listings)."""

from __future__ import annotations

from cockpit.cli.host import ENGINE_WIDTH, _table


def _run(run_id: str, engine: str, task: str = "fix it") -> dict[str, object]:
    return {"id": run_id, "status": "running", "engine": engine,
            "started": "2026-12-02T15:33:07Z", "waiting": {"approvals": 1, "questions": 0},
            "task": task, "journal": f"/j/{run_id}.jsonl"}


def test_long_engines_and_tasks_are_cut_and_the_journal_column_lines_up() -> None:
    agent = "/work/.venv/bin/python /work/tests/fakes/acp_agent/agent.py --log x"
    lines = _table([_run("a" * 12, "demo"), _run("b" * 12, agent, "line one\nline two " * 9)])
    starts = {line.index("JOURNAL") if i == 0 else line.index("/j/")
              for i, line in enumerate(lines)}
    assert len(starts) == 1
    assert len(lines) == 3  # the task's newline made no row of its own
    cut = agent[:ENGINE_WIDTH - 1] + "…"
    assert cut in lines[2] and agent not in lines[2]
    assert "line one line two" in lines[2]


def test_short_engines_keep_the_narrow_column() -> None:
    [head, row] = _table([_run("c" * 12, "demo")])
    assert head.index("STARTED") == row.index("2026-")


def test_a_terminal_escape_in_a_task_an_engine_or_a_journal_is_shown_never_acted_on() -> None:
    run = _run("d" * 12, "agent \x1b]0;owned\x07", "clear \x1b[2J the screen")
    run["journal"] = "/j/\x1b[31mred.jsonl"
    [_, row] = _table([run])
    assert "\x1b" not in row and "\x07" not in row
    assert "clear \\x1b[2J the screen" in row and "/j/\\x1b[31mred.jsonl" in row
    assert "agent \\x1b]0;owned\\x07" in row
