"""`--detach`, the host's side: `launch` builds a run from a `start` request's params (see
`cockpit.cli.detach.to_params`) with the same code `cockpit run` and `cockpit demo` use,
attended (its asks wait for a client), importing a user's engine as the client would (the
client's directory and `PYTHONPATH` first on `sys.path`)."""

from __future__ import annotations

import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.cli.options import AgentFlags, RunFlags

if TYPE_CHECKING:
    from cockpit.host.runs import Launched

__all__ = ["launch"]


def _flags(data: Any) -> RunFlags:
    data = dict(data or {})
    known = {f.name for f in fields(RunFlags)}
    flags = RunFlags(**{key: value for key, value in data.items() if key in known})
    return replace(flags, headless=False,
                   journal=Path(flags.journal) if flags.journal else None,
                   policy=Path(flags.policy) if flags.policy else None)


def _agent_flags(data: Any) -> AgentFlags:
    data = dict(data or {})
    known = {f.name for f in fields(AgentFlags)}
    flags = AgentFlags(**{key: value for key, value in data.items() if key in known})
    state = flags.agent_state
    return replace(flags, agent_state=[Path(item) for item in state] if state else None)


def launch(command: str, params: dict[str, Any]) -> Launched:
    """Build a detached run in the host from a `start` request (see `to_params`)."""
    from cockpit.cli.run import build_demo, build_run
    from cockpit.host.runs import Launched
    from cockpit.launch import release_workspace

    for entry in reversed(params.get("sys_path") or []):
        if isinstance(entry, str) and entry not in sys.path:
            sys.path.insert(0, entry)
    flags = _flags(params.get("flags"))
    if command == "demo":
        factory, session = build_demo(flags, tui=True, sandbox=params.get("sandbox"),
                                      sandbox_network=bool(params.get("sandbox_network")),
                                      speed=float(params.get("speed", 1.0)))
        root = str(factory.cwd)
        keep = bool(params.get("keep"))
        return Launched(factory, session, "demo",
                        cleanup=lambda: release_workspace(root, remove=not keep))
    cwd = params.get("cwd")
    factory, session = build_run(
        str(params.get("task", "")), engine=params.get("engine"), agent=params.get("agent"),
        model=params.get("model"), base_url=params.get("base_url"),
        api_key_env=params.get("api_key_env"), allow_home=bool(params.get("allow_home")),
        cwd=Path(cwd) if cwd else None, flags=flags,
        agent_flags=_agent_flags(params.get("agent_flags")), sandbox=params.get("sandbox"),
        sandbox_network=bool(params.get("sandbox_network")), tui=True)
    engine = params.get("agent") or params.get("model") or params.get("engine") or "?"
    return Launched(factory, session, str(engine))
