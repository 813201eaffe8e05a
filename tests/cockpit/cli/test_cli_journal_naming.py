"""A journal is one run (issue 26 §4): `--journal` naming a file that holds a run is refused
before anything starts (whatever form the path takes), a later task of the conversation moves
on to the next free `<stem>-<n>` name, and a run written with `--journal` elsewhere is indexed
so that `cockpit journals`, the replay picker and `cockpit sessions` list it."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

import pytest
from textual.widgets import DataTable
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.journals import index_path, indexed_journals, list_journals, remember_journal
from cockpit.launch import RunOptions, SessionFactory, SetupError
from cockpit.replay import ReplayApp
from engine_adapter import AgentEnd, AgentStart, JsonlEventJournal, ModelUpdate


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # demo workspaces go here
    return tmp_path / "home"


def cli(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def write_run(path: Path, *, task: str = "fix it", ended: bool = True) -> bytes:
    events = [AgentStart(task=task, engine="e", cwd="/w"), ModelUpdate(text="hi")]
    if ended:
        events.append(AgentEnd(status="completed", result="done"))
    with JsonlEventJournal(path, fsync="never") as journal:
        for event in events:
            journal.write(event)
    return path.read_bytes()


def refused(result, path_shown: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.output.startswith("cockpit: error: --journal "), result.output
    assert "already holds a run" in result.output and path_shown in result.output
    assert "Traceback" not in result.output


# What an existing journal can look like, and how the path to it can be written.
HOLDERS = {
    "finished": lambda p: write_run(p),
    "unfinished (a crash)": lambda p: write_run(p, ended=False),
    "torn first line": lambda p: (p.write_bytes(b'{"type": "agent_start", "task": "cut sh'),
                                  p.read_bytes())[1],
    "one blank line then events": lambda p: (p.write_bytes(b"\n" + write_run(p)),
                                             p.read_bytes())[1],
}


@pytest.mark.parametrize("kind", sorted(HOLDERS))
@pytest.mark.parametrize("form", ["absolute", "relative", "dotted", "through a folder link",
                                  "hard link"])
@pytest.mark.parametrize("command", ["demo", "run"])
def test_a_journal_holding_a_run_is_never_appended_to(tmp_path, monkeypatch, kind, form,
                                                       command) -> None:
    path = tmp_path / "runs" / "run.jsonl"
    path.parent.mkdir()
    before = HOLDERS[kind](path)
    monkeypatch.chdir(tmp_path)
    named: Path
    if form == "absolute":
        named = path
    elif form == "relative":
        named = Path("runs/run.jsonl")
    elif form == "dotted":
        named = Path("./runs/../runs/./run.jsonl")
    elif form == "through a folder link":
        (tmp_path / "alias").symlink_to(tmp_path / "runs")
        named = Path("alias/run.jsonl")
    else:
        named = tmp_path / "other.jsonl"
        os.link(path, named)
    args = (["demo", "--speed", "0"] if command == "demo"
            else ["run", "t", "--agent", "true", "--cwd", str(tmp_path)])
    result = cli(*args, "--journal", named)
    if kind == "torn first line" or "blank" in kind:  # refused, whichever way it reads
        assert result.exit_code == 2 and result.output.startswith("cockpit: error: --journal")
    else:
        refused(result, str(named))
        assert "fix it" in result.output  # what it holds
    assert path.read_bytes() == before
    assert not list(tmp_path.glob("cockpit-demo-*")), "a demo workspace was made"


def test_the_refusal_names_a_free_path(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    write_run(path)
    write_run(tmp_path / "run-2.jsonl")
    (tmp_path / "run-3.jsonl").symlink_to(tmp_path / "nowhere")  # a dangling link: taken
    result = cli("demo", "--journal", path)
    refused(result, str(path))
    assert f"e.g. --journal {str(tmp_path / 'run-4.jsonl')!r}" in result.output
    free = cli("demo", "--speed", "0", "--journal", tmp_path / "run-4.jsonl")
    assert free.exit_code == 1, free.output  # ran (no human: denied, failed)


def test_the_factory_refuses_too(tmp_path) -> None:
    """Whoever builds Sessions without the command line's check: still one run a journal."""
    path = tmp_path / "run.jsonl"
    before = write_run(path)
    factory = SessionFactory(lambda task, index: object(), cwd=tmp_path,
                             options=RunOptions(journal=path, saved_grants=False))
    with pytest.raises(SetupError, match="already holds a run"):
        factory("task")
    assert path.read_bytes() == before


def test_a_later_task_moves_on_to_a_free_name(tmp_path) -> None:
    first = tmp_path / "run.jsonl"
    taken = {n: write_run(tmp_path / f"run-{n}.jsonl", task=f"old {n}") for n in (2, 3)}
    factory = SessionFactory(lambda task, index: object(), cwd=tmp_path,
                             options=RunOptions(journal=first, saved_grants=False))
    factory("one")
    factory("two")
    factory("three")
    assert factory.journals == [first, tmp_path / "run-4.jsonl", tmp_path / "run-5.jsonl"]
    for n, data in taken.items():
        assert (tmp_path / f"run-{n}.jsonl").read_bytes() == data


def test_a_stream_may_be_named(tmp_path) -> None:
    result = cli("demo", "--speed", "0", "--headless", "--journal", "/dev/null")
    assert result.exit_code == 1, result.output
    assert indexed_journals() == []  # nothing to list later


# -- runs written elsewhere are listed ------------------------------------------------------------

def test_a_run_written_elsewhere_is_listed(tmp_path, home) -> None:
    elsewhere = tmp_path / "mine" / "demo run.jsonl"
    result = cli("demo", "--speed", "0", "--journal", elsewhere)
    assert result.exit_code == 1, result.output
    assert indexed_journals() == [elsewhere]
    listed = cli("journals")
    assert listed.exit_code == 0, listed.output
    assert str(elsewhere) in listed.output and "Fix the failing test" in listed.output
    assert [s.path for s in list_journals()] == [elsewhere]
    assert list_journals(tmp_path / "mine")[0].path == elsewhere
    # A folder named on purpose lists that folder only.
    assert list_journals(home / "data" / "journals") == []


def test_the_replay_picker_lists_a_run_written_elsewhere(tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    write_run(elsewhere, task="from elsewhere")
    remember_journal(elsewhere)

    async def main() -> None:
        app = ReplayApp(None)
        async with app.run_test() as pilot:
            await pilot.pause()
            table = app.screen.query_one(DataTable)
            assert table.row_count == 1
            assert "from elsewhere" in str(table.get_row_at(0)[-1])

    asyncio.run(main())


def test_the_index_skips_what_is_gone_and_what_is_damaged(tmp_path) -> None:
    kept, gone = tmp_path / "kept.jsonl", tmp_path / "gone.jsonl"
    for path in (kept, gone):
        write_run(path)
        remember_journal(path)
    remember_journal(kept)  # named again: listed once, as the newest
    gone.unlink()
    with open(index_path(), "ab") as f:
        f.write(b'{"not": "a path"}\n[1]\n\xff\xfe\n"cut')
    assert indexed_journals() == [kept]
    remember_journal(tmp_path / "missing.jsonl")  # nothing there: not indexed
    assert indexed_journals() == [kept]


def test_the_index_stays_small(tmp_path, monkeypatch) -> None:
    import cockpit.journals as journals

    monkeypatch.setattr(journals, "_INDEX_KEEP", 5)
    paths = []
    for n in range(23):
        path = tmp_path / f"r{n}.jsonl"
        path.write_bytes(b"")
        remember_journal(path)
        paths.append(path)
    lines = index_path().read_text().splitlines()
    assert len(lines) <= 2 * 5 + 1
    assert indexed_journals()[:5] == paths[::-1][:5]
    assert all(isinstance(json.loads(line), str) for line in lines)
