"""Where an ACP agent's process runs for `cockpit run --agent` and `cockpit resume`: in the
sandbox, with its own state folders writable (`agent_box`), each one checked (`state_problem`).

A catalogue agent's state is its entry's `state` (`~/.claude`, `~/.codex`, the npm cache, …);
an agent given as a command line gets a private home in the cockpit's data folder, one per
command line, unless `--agent-state` names its folders. A state folder is writable over every
mask, so one that would open what the sandbox protects is refused with the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

from cockpit.launch.factory import SetupError
from cockpit.paths import config_dir, data_dir, grants_dir
from engine_adapter.engines.acp import AgentSpec
from engine_adapter.engines.acp.agent import AgentBox
from engine_adapter.sandbox import CREDENTIAL_NAMES

__all__ = ["agent_box", "private_home", "state_problem"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def private_home(spec: AgentSpec) -> Path:
    """The private home of an agent given as a command line: one folder per command line
    (its name, then a hash of the whole line), under the cockpit's data folder."""
    digest = hashlib.sha256(spec.display.encode()).hexdigest()[:12]
    name = _SAFE.sub("-", os.path.basename(spec.command))[:40] or "agent"
    return data_dir() / "agent-state" / f"{name}-{digest}"


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def state_problem(path: str, *, workspace: str, home: str | None = None) -> str | None:
    """Why `path` cannot be an agent's writable state (None: it can). Refused: the root, the
    home directory and its parents (everything would be writable), the workspace or a folder
    in or around it (writable already, or holding its protected git dir), a place holding or
    inside a credential place, and the cockpit's own settings, saved grants and journals."""
    home = os.path.realpath(home or os.path.expanduser("~"))
    real = os.path.realpath(path)
    if not os.path.isabs(path):
        return "must be an absolute path"
    if _under(home, real):
        return "holds your home directory: everything in it would be writable"
    if _under(real, workspace) or _under(workspace, real):
        return "is the workspace, or in or around it (the workspace is writable already)"
    for name in CREDENTIAL_NAMES:
        place = os.path.join(home, name)
        if _under(real, place) or _under(place, real):
            return f"holds or lies in {place}, where credentials live"
    own_state = os.path.realpath(data_dir() / "agent-state")
    for own in (config_dir(), grants_dir(), data_dir()):
        mine = os.path.realpath(own)
        if _under(real, own_state) and real != own_state:
            continue  # a private home of ours
        if _under(real, mine) or _under(mine, real):
            return f"holds or lies in {mine}, cockpit's own settings, grants and journals"
    return None


def agent_box(spec: AgentSpec, workspace: Path, state: Sequence[str] = ()) -> AgentBox:
    """The agent's box: contained (the sandbox decides whether it can be: off or missing
    runs it outside, and the run says so), with `state` (`--agent-state`), else the
    catalogue's state, else a private home. `SetupError` names a refused path and why."""
    root = os.path.realpath(workspace)
    paths = [os.path.abspath(os.path.expanduser(path)) for path in state]
    for path in paths:
        problem = state_problem(path, workspace=root)
        if problem:
            raise SetupError(f"--agent-state {path}: {problem}; name the agent's own folder "
                             "(e.g. ~/.myagent)")
    if paths:
        return AgentBox(contain=True, state=(*paths, *spec.state_paths()))
    if spec.known:
        return AgentBox(contain=True, state=tuple(spec.state_paths()))
    return AgentBox(contain=True, home=str(private_home(spec)))
