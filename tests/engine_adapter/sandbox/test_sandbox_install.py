"""What runs outside the sandbox cannot be replaced from inside it (issue 24, A): `bwrap` and the
scope holder's interpreter are resolved once to real paths outside the workspace, and the
cockpit's own install (its venv, its packages) is read-only in the sandbox. Real venvs, real
bwrap, a real cockpit process run from a venv inside the workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.sandboxed import HERE, needs_sandbox, sandboxed

from engine_adapter.processes.scopes import HOLDER, Scope
from engine_adapter.sandbox import Sandbox, SandboxSettings
from engine_adapter.sandbox.install import pick_bwrap

REPO = Path(__file__).resolve().parents[3]
PLANT = "#!/bin/sh\ntouch {marker}\nexec /usr/bin/env \"$@\"\n"


def plant(folder: Path, name: str, marker: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(PLANT.format(marker=marker))
    program.chmod(0o755)
    return program


@needs_sandbox
@pytest.mark.parametrize("where", [".venv/bin", "bin", "node_modules/.bin", "a/b/c"])
def test_a_bwrap_planted_on_path_in_the_workspace_is_never_run(tmp_path, monkeypatch,
                                                               where) -> None:
    ws = tmp_path / "ws"
    marker = tmp_path / "planted-ran"
    plant(ws / where, "bwrap", marker)
    monkeypatch.setenv("PATH", f"{ws / where}{os.pathsep}{os.environ['PATH']}")
    sandbox = Sandbox(SandboxSettings(), workspace=ws).check()
    assert sandbox.active and sandbox.backend == os.path.realpath(HERE.backend or "")
    assert sandboxed("echo ok", ws, sandbox=sandbox).output == "ok\n"
    assert not marker.exists()


def test_a_bwrap_found_only_in_the_workspace_makes_no_sandbox_and_says_why(tmp_path) -> None:
    ws = tmp_path / "ws"
    marker = tmp_path / "planted-ran"
    plant(ws / ".venv" / "bin", "bwrap", marker)
    sandbox = Sandbox(SandboxSettings(), workspace=ws, path=str(ws / ".venv" / "bin")).check()
    assert not sandbox.active and "found only in the workspace" in (sandbox.problem or "")
    assert str(ws / ".venv" / "bin" / "bwrap") in (sandbox.problem or "")
    assert sandbox.approval_flag() is False and not marker.exists()  # every command asks


def test_the_system_bwrap_wins_over_one_earlier_on_path(tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    plant(elsewhere, "bwrap", tmp_path / "m")
    if not os.path.exists("/usr/bin/bwrap"):
        pytest.skip("needs /usr/bin/bwrap")
    picked, refused = pick_bwrap(f"{elsewhere}{os.pathsep}/usr/bin", [str(tmp_path / "ws")])
    assert picked == os.path.realpath("/usr/bin/bwrap") and refused == []


def test_links_are_resolved_before_the_check(tmp_path) -> None:
    ws = tmp_path / "ws"
    real = plant(ws / "tools", "bwrap", tmp_path / "m")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "bwrap").symlink_to(real)  # outside by name, inside in fact
    picked, refused = pick_bwrap(str(outside), [str(ws)])
    assert picked is None and refused and str(real) in refused[0]
    if os.path.exists("/usr/bin/bwrap"):
        (ws / "bin").mkdir()
        (ws / "bin" / "bwrap").symlink_to("/usr/bin/bwrap")  # inside by name, outside in fact
        picked, _ = pick_bwrap(str(ws / "bin"), [str(ws)])
        assert picked == os.path.realpath("/usr/bin/bwrap")  # resolved now: a later swap of
        # the link changes nothing, the real path is what runs


def test_the_holder_runs_from_its_source_not_a_file_a_command_could_rewrite() -> None:
    scope = Scope()
    if not scope.held:
        pytest.skip("no holder on this platform")
    argv = scope.argv(["true"])
    assert argv[1:4] == ["-I", "-S", "-c"] and str(HOLDER) not in argv
    assert argv[4] == HOLDER.read_text(encoding="utf-8") and argv[-2:] == ["--", "true"]
    assert os.path.realpath(argv[0]) == argv[0]  # a real path, links followed


COCKPIT_IN_A_VENV = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {repo!r})
    from engine_adapter.engines.builtin.process import run_process, shell_argv
    from engine_adapter.processes.scopes import Scope
    from engine_adapter.sandbox import Sandbox, SandboxSettings
    import asyncio

    ws = {ws!r}
    sandbox = Sandbox(SandboxSettings(), workspace=ws).check()
    said = {{"active": sandbox.active, "prefix": sys.prefix, "executable": sys.executable}}
    attacks = {attacks!r}
    said["attacks"] = []
    for command in attacks:
        done = asyncio.run(run_process(shell_argv(command), cwd=ws, timeout=30,
                                       output_cap=4000, sandbox=sandbox))
        said["attacks"].append([command, done.exit_code, done.blocked, done.output[-300:]])
    done = asyncio.run(run_process(["true"], cwd=ws, timeout=30, output_cap=100,
                                   sandbox=sandbox))
    said["after"] = done.exit_code
    said["holder"] = Scope().argv(["true"])[0]
    print(json.dumps(said))
""")

VENV_ATTACKS = [
    "printf '#!/bin/sh\\ntouch {marker}\\n' > .venv/bin/python",
    "rm -f .venv/bin/python3 && printf '#!/bin/sh\\ntouch {marker}\\n' > .venv/bin/python3",
    "mv .venv .venv-old && mkdir -p .venv/bin",
    "rm -rf .venv",
    "echo 'import os; os.system(\"touch {marker}\")' > .venv/lib/evil.pth",
    "touch .venv/pyvenv.cfg",
    "printf '#!/bin/sh\\ntouch {marker}\\n' > .venv/bin/bwrap && chmod +x .venv/bin/bwrap",
]


@needs_sandbox
@pytest.mark.parametrize("copies", [False, True])
def test_a_cockpit_running_from_the_workspaces_venv(tmp_path, copies) -> None:
    """The README's own set-up: the venv in the project. A command must not replace what the
    next command's holder (outside the sandbox) or the human's next start runs."""
    ws = tmp_path / "ws"
    ws.mkdir()
    flags = ["--copies"] if copies else ["--symlinks"]
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", *flags, str(ws / ".venv")],
                   check=True)
    marker = tmp_path / "pwned"
    attacks = [attack.format(marker=marker) for attack in VENV_ATTACKS]
    script = COCKPIT_IN_A_VENV.format(repo=str(REPO), ws=str(ws), attacks=attacks)
    env = {**os.environ, "PATH": f"{ws / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    site = subprocess.run([sys.executable, "-c", "import site; print(site.getsitepackages()[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    env["PYTHONPATH"] = site  # the cockpit's dependencies, as an install in the venv has them
    done = subprocess.run([str(ws / ".venv" / "bin" / "python"), "-c", script], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])
    assert said["active"] and said["prefix"] == str(ws / ".venv")
    for command, code, blocked, output in said["attacks"]:
        assert code != 0 and blocked, (command, output)
    assert said["after"] == 0 and not marker.exists()
    holder = said["holder"]
    assert not holder.startswith(str(ws) + "/"), holder  # a --copies interpreter is not used
    assert (ws / ".venv" / "bin" / "python").exists()
