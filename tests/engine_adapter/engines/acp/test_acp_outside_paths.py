"""An edit outside the workspace reads with its absolute path (issue 25 §3): the pure rule for a
path an agent names (`shown_path`, `Workspace.display_any`), a diff's headers for an absolute
name, and real runs of the SDK test agent (driven as a hostile one, `script`) whose calls name
paths outside in every way: the journaled locations, diffs and approvals never hold a relative
`../` path or an absolute path with its leading `/` cut off; paths inside read as today."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, approve, drive
from hypothesis import given
from hypothesis import strategies as st

from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.acp.client.files import Workspace, shown_path
from engine_adapter.files import unified_diff
from engine_adapter.view import changed_files

ROOT = "/srv/ws"


@pytest.mark.parametrize(("path", "shown"), [
    ("/etc/hosts", "/etc/hosts"),
    ("../outside.txt", "/srv/outside.txt"),
    ("../../x/y.txt", "/x/y.txt"),
    ("sub/../../outside.txt", "/srv/outside.txt"),
    ("/srv/ws2/x.txt", "/srv/ws2/x.txt"),  # a sibling sharing the prefix is outside
    ("/srv/ws/../ws2/x", "/srv/ws2/x"),
    ("/srv/ws/../../etc/passwd", "/etc/passwd"),
    ("~/notes.txt", os.path.expanduser("~/notes.txt")),
    # Inside: as given, as today.
    ("in.txt", "in.txt"),
    ("./sub/in.txt", "./sub/in.txt"),
    ("/srv/ws/in.txt", "/srv/ws/in.txt"),
    ("sub/../in.txt", "sub/../in.txt"),
    ("/srv/ws", "/srv/ws"),
    ("", ""),
    ("bad\x00path", "bad\x00path"),
])
def test_a_path_outside_reads_absolute_inside_as_given(path, shown):
    assert shown_path(path, ROOT) == shown


@given(st.text(alphabet=st.sampled_from(list("ab./~\x00")), max_size=30))
def test_shown_path_never_raises_and_never_reads_relative_outside(path):
    shown = shown_path(path, ROOT)
    if shown != path:  # it was outside: now absolute, with no `..` left
        assert shown.startswith("/") and ".." not in shown.split("/")


def test_a_link_out_of_the_workspace_reads_as_where_it_leads(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret").mkdir()
    (root / "link").symlink_to(tmp_path / "secret")
    (root / "in.txt").write_text("x")
    workspace = Workspace(root)
    real = os.path.realpath(tmp_path / "secret")
    assert workspace.display_any("link/key.txt") == f"{real}/key.txt"
    assert workspace.display_any("../secret/key.txt") == f"{real}/key.txt"
    assert workspace.display_any(f"{root}/in.txt") == "in.txt"  # inside: relative, as today
    assert workspace.display_any("in.txt") == "in.txt"


@pytest.mark.parametrize(("name", "old", "new"), [
    ("/etc/hosts", "--- /etc/hosts\n", "+++ /etc/hosts\n"),
    ("src/app.py", "--- a/src/app.py\n", "+++ b/src/app.py\n"),
])
def test_a_diffs_headers_keep_an_absolute_name_whole(name, old, new):
    diff = unified_diff("a\n", "b\n", name)
    assert diff.startswith(old + new)
    assert [f.path for f in changed_files(diff)] == [name]
    created = unified_diff(None, "b\n", name)
    assert created.startswith("--- /dev/null\n" + new)
    assert [f.path for f in changed_files(created)] == [name]


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    base = tmp_path_factory.mktemp("acp-outside")
    workspace = base / "ws"
    workspace.mkdir()
    (workspace / "in.txt").write_text("a\n")
    (base / "outside.txt").write_text("a\n")
    (workspace / "link").symlink_to(base)
    loop = asyncio.new_event_loop()
    runner = AcpRunner(agent_argv(), cwd=workspace)
    yield runner, loop, workspace, base
    loop.run_until_complete(runner.close())
    loop.close()


def _edit(call_id: str, path: str, *, ask: bool = False) -> list[dict]:
    call = {"toolCallId": call_id, "title": f"Edit {path}", "kind": "edit", "status": "pending",
            "locations": [{"path": path}], "rawInput": {"file_path": path},
            "content": [{"type": "diff", "path": path, "oldText": "a\n", "newText": "b\n"}]}
    if ask:
        return [{"ask": call}]
    return [{"update": {"sessionUpdate": "tool_call", **call}},
            {"update": {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                        "status": "completed"}}]


def _run(agent, steps: list[dict], journal: Path) -> list:
    runner, loop, _workspace, _base = agent
    task = "script " + json.dumps(steps)
    _state, events = loop.run_until_complete(asyncio.wait_for(
        drive(runner, task, journal, answer=approve(False)), 120))
    return events


OUTSIDE = ["{base}/outside.txt", "../outside.txt", "sub/../../outside.txt", "link/outside.txt",
           "{ws}/../outside.txt"]


@pytest.mark.parametrize("path", OUTSIDE)
def test_an_agents_edit_outside_is_journaled_with_its_absolute_path(agent, path, tmp_path):
    _runner, _loop, workspace, base = agent
    named = path.format(base=base, ws=workspace)
    absolute = os.path.realpath(base / "outside.txt")
    events = _run(agent, _edit("t1", named), tmp_path / "j.jsonl")
    start = next(e for e in events if e.type == "tool_start")
    end = next(e for e in events if e.type == "tool_end")
    locations = start.tool_input["locations"]
    assert len(locations) == 1 and locations[0].startswith("/")
    assert ".." not in locations[0].split("/")
    assert end.diff.startswith(f"--- {absolute}\n+++ {absolute}\n")
    assert [f.path for f in changed_files(end.diff)] == [absolute]


@pytest.mark.parametrize("path", OUTSIDE)
def test_an_approval_for_an_edit_outside_shows_the_absolute_path(agent, path, tmp_path):
    _runner, _loop, workspace, base = agent
    named = path.format(base=base, ws=workspace)
    absolute = os.path.realpath(base / "outside.txt")
    events = _run(agent, _edit("p1", named, ask=True), tmp_path / "j.jsonl")
    asked = next(e for e in events if e.type == "approval_requested")
    assert asked.tool_input["diff"].startswith(f"--- {absolute}\n+++ {absolute}\n")
    for location in asked.tool_input.get("locations", []):
        assert location.startswith("/") and ".." not in location.split("/")


@pytest.mark.parametrize(("path", "header"), [("in.txt", "--- a/in.txt\n"),
                                              ("{ws}/in.txt", "--- a/in.txt\n"),
                                              ("./in.txt", "--- a/in.txt\n")])
def test_an_edit_inside_reads_as_today(agent, path, header, tmp_path):
    _runner, _loop, workspace, _base = agent
    named = path.format(ws=workspace)
    events = _run(agent, _edit("t2", named), tmp_path / "j.jsonl")
    start = next(e for e in events if e.type == "tool_start")
    end = next(e for e in events if e.type == "tool_end")
    assert start.tool_input["locations"] == [named]
    assert end.diff.startswith(header)
