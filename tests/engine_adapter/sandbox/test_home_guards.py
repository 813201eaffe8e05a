"""A workspace that is (or holds) a home folder, in the real sandbox: every start-up location
stays read-only, existing or not, through links and with its folders moved aside; nothing is
left behind on the host; the rest of the home stays usable. The mount plan, and the file tools'
refusal, as tables. Skipped without a working `bwrap`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.event_loop import run

from engine_adapter.engines.builtin.process import run_process, shell_argv
from engine_adapter.files.startup import HOME_STARTUP
from engine_adapter.sandbox import Sandbox, SandboxSettings
from engine_adapter.sandbox.guards import mount_plan

HERE = Sandbox(SandboxSettings(), workspace=os.path.dirname(__file__)).check()  # a neutral root
needs_bwrap = pytest.mark.skipif(not HERE.active, reason=f"no sandbox here ({HERE.problem})")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake HOME with a few real start-up files, one of them a link into a dotfiles folder,
    the cockpit's config in its default place (~/.config/cockpit) and a project."""
    home = tmp_path / "home"
    for folder in (".ssh", ".config/cockpit/grants", ".local/share/cockpit", "dotfiles",
                   "project"):
        (home / folder).mkdir(parents=True)
    (home / ".profile").write_text("mine\n")
    (home / ".ssh/authorized_keys").write_text("mine\n")
    (home / "dotfiles/bashrc").write_text("mine\n")
    (home / ".bashrc").symlink_to("dotfiles/bashrc")
    (home / "notes.txt").write_text("mine\n")
    monkeypatch.setenv("HOME", str(home))
    for name in ("COCKPIT_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


def snapshot(root: Path) -> dict[str, str]:
    """Every path under `root` with its content (files) or kind."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = path.read_text()
        else:
            found[rel] = "dir"
    return found


def in_sandbox(command: str, home: Path, *, cwd: Path | None = None) -> tuple[int | None, str]:
    from cockpit.launch.factory import RunOptions, make_sandbox

    sandbox = make_sandbox(RunOptions(sandbox=SandboxSettings(), allow_home_workspace=True),
                           home)
    done = run(run_process(shell_argv(command), cwd=cwd or home, timeout=30, output_cap=4000,
                           sandbox=sandbox))
    return done.exit_code, done.output


ATTACKS = [
    # new start-up files of every shell, none of which exists yet
    "echo evil > ~/.bash_login", "echo evil > ~/.bash_profile", "echo evil > ~/.zshenv",
    "echo evil > ~/.zlogin", "echo evil > ~/.kshrc", "echo evil > ~/.cshrc",
    "mkdir -p ~/.config/fish && echo evil > ~/.config/fish/config.fish",
    # existing ones, directly and through the link
    "echo evil >> ~/.profile", "echo evil >> ~/.bashrc", "echo evil >> ~/dotfiles/bashrc",
    "rm -f ~/.bashrc && echo evil > ~/.bashrc", "ln -sf /tmp/evil ~/.bashrc",
    "mv ~/.profile ~/.p && echo evil > ~/.profile",
    # programs on PATH, git, ssh, the session
    "mkdir -p ~/.local/bin && echo evil > ~/.local/bin/git", "mkdir -p ~/bin && touch ~/bin/ls",
    "echo evil >> ~/.ssh/authorized_keys", "echo evil > ~/.ssh/config", "mv ~/.ssh ~/.ssh-old",
    "echo '[core] pager=evil' > ~/.gitconfig",
    "mkdir -p ~/.config/git && touch ~/.config/git/config",
    "mkdir -p ~/.config/systemd/user && touch ~/.config/systemd/user/evil.service",
    "mkdir -p ~/.config/autostart && touch ~/.config/autostart/evil.desktop",
    "mkdir -p ~/.config/environment.d && touch ~/.config/environment.d/evil.conf",
    "echo PATH=/evil > ~/.pam_environment", "echo evil > ~/.vimrc", "echo evil > ~/.tmux.conf",
    "mkdir -p ~/.local/lib/python3/site-packages && touch ~/.local/lib/x.pth",
    # the cockpit's own config, directly and by moving its folders aside
    "echo 'mode = \"off\"' > ~/.config/cockpit/config.toml",
    "touch ~/.config/cockpit/grants/user.toml",
    "mv ~/.config ~/.c && mkdir -p ~/.config/cockpit && touch ~/.config/cockpit/config.toml",
    "mv ~/.config/cockpit ~/.config/old && mkdir ~/.config/cockpit",
    "rm -rf ~/.config", "mv ~/.local ~/.l && mkdir -p ~/.local/bin",
]


@needs_bwrap
@pytest.mark.parametrize("command", ATTACKS)
def test_start_up_locations_stay_read_only_with_home_as_the_workspace(home, command) -> None:
    before = snapshot(home)
    code, output = in_sandbox(command, home)
    assert code != 0, output
    assert snapshot(home) == before  # nothing written, nothing left behind (no mount points)


@needs_bwrap
def test_the_rest_of_the_home_stays_usable(home) -> None:
    code, output = in_sandbox("touch project/made && mkdir project/sub && echo more >> notes.txt"
                              " && rm project/made && echo ok", home)
    assert (code, output) == (0, "ok\n")
    assert (home / "notes.txt").read_text() == "mine\nmore\n"
    # New names directly in the home folder (or in a sealed ~/.config) are not: they may be a
    # start-up file some program reads.
    code, _ = in_sandbox("touch ~/new-file", home)
    assert code != 0 and not (home / "new-file").exists()


@needs_bwrap
def test_a_project_inside_the_home_still_cannot_touch_its_start_up_files(home) -> None:
    code, _ = in_sandbox("echo evil > ~/.bash_login; echo evil >> ~/.profile", home / "project",
                         cwd=home / "project")
    assert code != 0
    assert not (home / ".bash_login").exists() and (home / ".profile").read_text() == "mine\n"


def test_the_mount_plan_seals_missing_locations_and_chains_folders(home) -> None:
    plan = mount_plan(str(home), [str(home / name) for name in HOME_STARTUP])
    flags = {path: flag for flag, path in plan}
    assert flags[str(home)] == "--ro-bind"  # sealed: .bash_login etc. are missing
    assert flags[str(home / ".ssh")] == "--ro-bind" and flags[str(home / ".profile")] == "--ro-bind"
    assert flags[str(home / "project")] == "--bind"  # reopened
    assert str(home / ".bashrc") not in flags  # a link: never bound (it would be followed)
    assert flags[str(home / "dotfiles/bashrc")] == "--ro-bind"  # its target is protected
    assert flags[str(home / "dotfiles")] == "--bind"
    paths = [path for _flag, path in plan]
    assert paths == sorted(paths, key=lambda p: p.count("/"))  # parents first
    assert not any(p.startswith(str(home / ".ssh") + "/") for p in paths)  # nothing under


def test_paths_outside_the_workspace_are_left_to_the_read_only_root(home) -> None:
    assert mount_plan(str(home / "project"), [str(home / ".bashrc")]) == []


FILE_TOOL_TARGETS = [".bash_login", ".profile", ".bashrc", "dotfiles/bashrc",
                     ".ssh/authorized_keys", ".config/cockpit/config.toml",
                     ".config/cockpit/grants/user.toml",
                     ".config/systemd/user/x.service", ".local/bin/git", ".gitconfig"]


@pytest.mark.parametrize("target", FILE_TOOL_TARGETS)
def test_file_tools_refuse_what_the_sandbox_keeps_read_only(home, target) -> None:
    from cockpit.launch.factory import RunOptions, make_sandbox

    sandbox = make_sandbox(RunOptions(allow_home_workspace=True), home)
    assert sandbox.write_refusal(home / target)
    assert sandbox.write_refusal(home / "project/main.py") is None
    assert sandbox.write_refusal(home / "notes.txt") is None
