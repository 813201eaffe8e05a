"""Where the agent process itself runs: `AgentBox` (the choice) and `contain` (its command line).

An ACP agent such as the Claude or Codex adapter, Gemini CLI or opencode runs most of its tools
itself and only reports them: the cockpit's sandbox contains them only if the agent process
runs inside it. `contain` wraps the agent's command in the same sandbox as the commands
(`engine_adapter.sandbox.Sandbox.wrap`): the system read-only, the workspace writable, a private
temp dir, the cockpit's own install, settings and journals read-only, the credential masks, no
unix socket (seccomp) and the socket folders masked, its own PID namespace (everything it starts
dies with it) — but with the network on, since the agent talks to its model's API, and with its
own state folders writable (`state`: its login and settings, `~/.claude` say), over the masks.

Stdio passes straight through bwrap: the ACP connection is the agent's stdin and stdout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine_adapter.sandbox import OFF, Sandbox, Wrapped

__all__ = ["HOME_VARIABLES", "AgentBox", "contain"]

HOME_VARIABLES = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")
"""Left out when the agent gets a private home: they would point it back at the real one."""


@dataclass(frozen=True)
class AgentBox:
    """How the agent process runs: `contain` it in the sandbox (False: outside, as a plain
    process), with `state` (absolute paths) writable for it, and `home` (a private folder, for
    an agent the catalogue does not know) as its `HOME`. Folders of `state` and `home` that do
    not exist are made; a missing file of `state` is made empty (`{}` for a `.json`)."""

    contain: bool = False
    state: tuple[str, ...] = ()
    home: str | None = None

    def paths(self) -> list[str]:
        """Every path the agent may write besides the workspace and its temp dir."""
        return [*self.state, *([self.home] if self.home else [])]


def _prepare(paths: Sequence[str]) -> None:
    """Make what the agent's state needs exist (a bind needs its source): folders made, a
    missing file made empty, with the agent's own defaults left to it."""
    for path in paths:
        if os.path.lexists(path):
            continue
        stem = os.path.basename(path)
        if "." in stem.lstrip("."):  # a file (`.claude.json`): made, empty
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "x", encoding="utf-8") as handle:
                handle.write("{}" if path.endswith(".json") else "")
        else:
            os.makedirs(path, mode=0o700, exist_ok=True)


def contain(sandbox: Sandbox | None, box: AgentBox, argv: Sequence[str], *, cwd: str,
            env: Mapping[str, str]) -> Wrapped:
    """The agent's command ready to start (`argv`, `env`, `pass_fds`), and where it runs
    (`state`: the sandbox mode, `off` when the box or the sandbox is off, `unavailable` when
    the sandbox is missing on this machine; `sandboxed` says whether it is contained). `close()`
    it once the agent is gone. Raises `OSError` as exec would."""
    run_env = dict(env)
    if box.home:
        run_env["HOME"] = box.home
        for name in HOME_VARIABLES:
            run_env.pop(name, None)
    if box.home:
        os.makedirs(box.home, mode=0o700, exist_ok=True)
    if sandbox is None or not box.contain or not sandbox.active:
        state = sandbox.state if sandbox is not None and box.contain else OFF
        return Wrapped(list(argv), run_env, state, network=True, cwd=cwd)
    _prepare(box.paths())
    return sandbox.wrap(argv, cwd=cwd, env=run_env, network=True, state=box.paths())
