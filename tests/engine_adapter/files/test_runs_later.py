"""`runs_later`: which writes land in a file git, the shell or an editor runs by itself later
(issue 24 §B), on real repositories made with git: the git dir in every spelling a case-
insensitive, Windows or HFS+ file system folds to it, through symlinks and `..`, nested and
separate git dirs, bare repositories, `core.hooksPath`, hook managers and start-up files."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.runs_later import ORDINARY, RUNS_LATER, plant

from engine_adapter.files import runs_later


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return plant(tmp_path_factory.mktemp("runs-later") / "ws")


def _judge(workspace, path: str) -> str | None:
    return runs_later(workspace, path, os.path.realpath(os.path.join(workspace, path)))


@pytest.mark.parametrize("path", RUNS_LATER)
def test_files_that_run_later_are_named(workspace, path) -> None:
    assert _judge(workspace, path), path


@pytest.mark.parametrize("path", ORDINARY)
def test_ordinary_files_are_not(workspace, path) -> None:
    assert _judge(workspace, path) is None


def test_writing_head_into_a_dir_with_a_config_makes_a_git_dir(workspace) -> None:
    (workspace / "fake").mkdir(exist_ok=True)
    (workspace / "fake" / "config").write_text("[core]\n")
    assert _judge(workspace, "fake/HEAD")  # the write that would complete a git dir
    assert _judge(workspace, "fake/config") is None  # no HEAD yet: a config alone is data
    (workspace / "fake" / "config").unlink()
    assert _judge(workspace, "fake/HEAD") is None


def test_a_gitdir_file_names_a_git_dir_anywhere(tmp_path) -> None:
    ws = tmp_path / "ws"
    (ws / "wt").mkdir(parents=True)
    (ws / "elsewhere").mkdir()
    (ws / "wt" / ".git").write_text("gitdir: ../elsewhere\n")
    assert _judge(ws, "elsewhere/config") is None  # no HEAD: git would not use it...
    (ws / "wt" / "inner").mkdir()
    assert _judge(ws, "wt/inner/x") is None
    (ws / "elsewhere" / "HEAD").write_text("ref: refs/heads/main\n")
    assert _judge(ws, "elsewhere/config")  # ...but with HEAD it does


def test_a_relative_hooks_path_in_the_users_config_counts(tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[core]\n\thooksPath = .githooks\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    assert _judge(ws, ".githooks/pre-commit")
    assert _judge(ws, "githooks/pre-commit") is None


_CASES = st.sampled_from([".git", ".GIT", ".Git", ".gIt", ".git.", ".git ", "git~1", "GIT~1",
                          ".git::$INDEX_ALLOCATION", ".g\u200bit", "\u200e.git", ".git\ufeff"])


@settings(max_examples=60, deadline=None)
@given(prefix=st.lists(st.sampled_from(["a", "src", "sub", "x.y", "deep"]), max_size=3),
       git=_CASES, rest=st.lists(st.sampled_from(["config", "hooks", "pre-commit", "HEAD",
                                                  "modules", "info"]), min_size=1, max_size=3))
def test_every_folded_spelling_of_a_git_dir_anywhere_is_named(tmp_path_factory, prefix, git,
                                                               rest) -> None:
    ws = tmp_path_factory.getbasetemp() / "fold-ws"
    ws.mkdir(exist_ok=True)
    assert _judge(ws, "/".join([*prefix, git, *rest]))


# The workspace is a home folder (issue 24: one list with the sandbox's): every start-up
# location the sandbox keeps read-only in a home asks as a write too, whoever writes it.
_HOME_ONLY = ["bin/tool", ".local/lib/python3.11/site-packages/usercustomize.py",
              ".cargo/env", ".cargo/bin/cargo", "go/bin/gopls", ".config/nvim/init.lua",
              ".emacs.d/init.el", ".git-credentials", ".netrc", ".aws/credentials",
              ".docker/config.json", ".kube/config", ".config/zsh/.zshrc", ".bashrc.d/x.sh",
              ".vim/plugin/x.vim", ".config/tmux/tmux.conf", ".gnupg/gpg.conf"]


@pytest.mark.parametrize("path", _HOME_ONLY)
def test_a_homes_start_up_locations_ask_when_the_workspace_is_that_home(tmp_path, path,
                                                                          monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert runs_later(home, path, os.path.join(home, path)) is not None
    # and when the workspace holds the home (a workspace of `/home`, say)
    assert runs_later(tmp_path, f"home/{path}", os.path.join(home, path)) is not None


def test_a_homes_locations_are_ordinary_in_a_project(tmp_path) -> None:
    from engine_adapter.files.startup import homes_in
    project = tmp_path / "project"
    project.mkdir()
    if homes_in(str(project)):  # the test's tmp dir lies in no home on any sane machine
        pytest.skip("the tmp dir is a home folder here")
    for path in ("bin/tool", ".cargo/env", ".local/lib/x.py"):
        assert runs_later(project, path, os.path.join(project, path)) is None, path


@pytest.mark.parametrize("name", [".vimrc", ".exrc", ".tmux.conf", ".screenrc", ".emacs",
                                  ".bash_aliases", ".shrc", "sub/.VIMRC"])
def test_editor_start_up_files_ask_anywhere(tmp_path, name) -> None:
    assert runs_later(tmp_path, name, os.path.join(tmp_path, name)) is not None


@pytest.mark.parametrize("path", [".LOCAL/bin/tool", "Bin/tool", ".cargo/ENV", ".Config/Nvim/x",
                                  ".git-credentials.", "sub/../bin/tool", ".local/bin./x",
                                  ".aws/credentials::$DATA"])
def test_a_homes_locations_ask_in_every_spelling_a_file_system_folds_to_them(
        tmp_path, path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert runs_later(home, path, os.path.normpath(os.path.join(home, path))) is not None, path


def test_a_link_into_a_homes_bin_asks_by_where_it_lands(tmp_path, monkeypatch) -> None:
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / "tools").symlink_to(home / ".local" / "bin")
    monkeypatch.setenv("HOME", str(home))
    given = "tools/x"
    assert runs_later(home, given, os.path.realpath(home / given)) is not None
