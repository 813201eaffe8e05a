"""Workspace confinement: `..`, absolute paths and symlinks that lead out are refused, by the
workspace and by every file tool of the engine."""

from __future__ import annotations

import pytest
from support.builtin_runs import run_steps, tool_ends

from engine_adapter.engines.builtin.workspace import Workspace, WorkspaceError


@pytest.fixture
def layout(tmp_path):
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    (root / "leak").symlink_to(secret)  # a file symlink leading out
    (root / "up").symlink_to(tmp_path)  # a directory symlink leading out
    (root / "alias.py").symlink_to(root / "pkg" / "mod.py")  # a symlink that stays inside
    return root, secret


@pytest.mark.parametrize("path", ["../secret.txt", "pkg/../../secret.txt", "..", "/etc/passwd",
                                  "leak", "up/secret.txt", "up", "", "  ", "a\x00b"])
def test_paths_that_escape_are_refused(layout, path) -> None:
    root, _ = layout
    with pytest.raises(WorkspaceError):
        Workspace(root).resolve(path)


@pytest.mark.parametrize(("path", "expected"), [
    ("pkg/mod.py", "pkg/mod.py"), ("pkg/../pkg/mod.py", "pkg/mod.py"), ("./pkg", "pkg"),
    (".", "."), ("alias.py", "pkg/mod.py"), ("new/file.txt", "new/file.txt"),
])
def test_paths_inside_resolve(layout, path, expected) -> None:
    root, _ = layout
    workspace = Workspace(root)
    assert workspace.relative(workspace.resolve(path)) == expected


def test_a_missing_workspace_is_an_error(tmp_path) -> None:
    with pytest.raises(WorkspaceError):
        Workspace(tmp_path / "nope")


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("read_file", {"path": "../secret.txt"}),
    ("read_file", {"path": "leak"}),
    ("read_file", {"path": "/etc/passwd"}),
    ("list_dir", {"path": "up"}),
    ("search", {"pattern": "secret", "path": "up"}),
])
def test_reading_tools_refuse_escapes(layout, tool, tool_input) -> None:
    root, _ = layout
    session = run_steps(root, [{"tool": tool, "input": tool_input},
                               {"finish": "done"}])
    (end,) = tool_ends(session)
    assert not end.ok
    assert "outside the workspace" in end.error or "absolute path" in end.error
    assert "top secret" not in end.output


def test_search_does_not_follow_symlinks_out(layout) -> None:
    root, _ = layout
    session = run_steps(root, [{"tool": "search", "input": {"pattern": "secret"}},
                               {"finish": "done"}])
    (end,) = tool_ends(session)
    assert end.ok and end.output == "no matches"


@pytest.mark.parametrize("path", ["leak", "../secret.txt", "up/secret.txt", "/tmp/x/y.txt"])
def test_writing_tools_refuse_escapes(layout, path) -> None:
    root, secret = layout
    steps = [
        {"tool": "switch_to_editing", "input": {"reason": "edit"}},
        {"tool": "declare_verification",
         "input": {"checks": [{"name": "true", "command": "true"}]}},
        {"tool": "write_file", "input": {"path": path, "content": "pwned\n"}},
        {"tool": "edit", "input": {"path": path, "old": "top secret", "new": "pwned"}},
        {"finish": "done", "success": False},
    ]
    session = run_steps(root, steps, auto_approve=True)
    write, edit = [e for e in tool_ends(session) if e.tool in ("write_file", "edit")]
    assert not write.ok and not edit.ok
    assert secret.read_text() == "top secret\n"
