"""Running real commands in the real sandbox (bubblewrap) from tests: the skip marker for a
machine without one, and `sandboxed(command, cwd)`, one shell command through the engines' own
path (`run_process`: the scope holder, bwrap, the seccomp filter)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine_adapter.engines.builtin.process import ProcessResult, run_process, shell_argv
from engine_adapter.sandbox import Sandbox, SandboxSettings
from support.event_loop import run

HERE = Sandbox(SandboxSettings(), workspace=Path(__file__).parent).check()
needs_sandbox = pytest.mark.skipif(
    not HERE.active, reason=f"no sandbox on this machine ({HERE.problem}): install bubblewrap "
    "(`apt-get install bubblewrap`) to run the sandbox tests")


def sandboxed(command: str, cwd: Path, *, sandbox: Sandbox | None = None,
              workspace: Path | None = None, timeout: float = 30,
              **settings: Any) -> ProcessResult:
    """`command` run with `/bin/sh -c` in `cwd`, in `sandbox` (default: a new one for
    `workspace`, default `cwd`, with `settings`)."""
    box = sandbox or Sandbox(SandboxSettings(**settings), workspace=workspace or cwd)
    return run(run_process(shell_argv(command), cwd=cwd, timeout=timeout, output_cap=20_000,
                           sandbox=box))
