"""The ACP agents on the command line: `cockpit agents` and `cockpit run --agent NAME|"COMMAND"`.

`agent_factory` builds the Sessions of one conversation with one `AcpRunner`: every task of the
conversation goes to the same agent process and ACP session. The agent's process group is
stopped when the event loop that ran it ends (see `AgentProcess`), so a finished `cockpit run`
leaves nothing behind.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine_adapter.engines.acp import (
    AcpRunner,
    AgentSpec,
    AgentSpecError,
    load_catalogue,
    resolve_agent,
)

from .cli_checks import check_agent_program
from .runs import RunOptions, SessionFactory, SetupError, make_sandbox

__all__ = ["agent_factory", "agents_listing"]


def agent_factory(agent: str, *, cwd: str | Path | None = None,
                  options: RunOptions | None = None) -> SessionFactory:
    """The sessions of `cockpit run --agent AGENT` in `cwd` (default: here), all driven by one
    `AcpRunner`. Raises `SetupError` for an unknown agent or a bad directory."""
    root = Path(cwd) if cwd is not None else Path.cwd()
    if not root.is_dir():
        raise SetupError(f"--cwd {str(root)!r} is not a directory")
    root = root.resolve()
    try:
        spec = resolve_agent(agent)
    except AgentSpecError as exc:
        raise SetupError(str(exc)) from None
    if spec.known and spec.installed() is None:
        raise SetupError(f"agent {spec.name!r} is not installed ({spec.command} is not on PATH); "
                         f"install it with: {spec.install}")
    if not spec.known:
        check_agent_program(spec.command, root)  # cannot start: a setup error, like a typo
    options = options if options is not None else RunOptions()
    sandbox = make_sandbox(options, root)
    runner = AcpRunner(spec, cwd=root, sandbox=sandbox)
    return SessionFactory(lambda _task, _index: runner, cwd=root, options=options,
                          sandbox=sandbox)


def _auth_note(spec: AgentSpec) -> str:
    if not spec.env:
        return ""
    present = [name for name in spec.env if os.environ.get(name)]
    if present:
        return "key set: " + ", ".join(present)
    names = " or ".join(spec.env[:2]) + (", …" if len(spec.env) > 2 else "")
    return f"no key set ({names}), unless logged in with its own CLI"


def agents_listing(catalogue: dict[str, AgentSpec] | None = None) -> list[str]:
    """The lines `cockpit agents` prints: each known agent, whether it is installed (and where),
    its authentication variables, and how to install it."""
    agents = load_catalogue() if catalogue is None else catalogue
    lines = []
    for name, spec in sorted(agents.items()):
        path = spec.installed()
        lines.append(f"{name:<8} {spec.title}")
        lines.append(f"         command: {spec.display}")
        if path:
            lines.append(f"         installed: {path}")
        else:
            lines.append(f"         not installed: {spec.install}")
        note = _auth_note(spec)
        if note:
            lines.append(f"         auth: {note}")
    lines.append("")
    lines.append('Run one:  cockpit run --agent NAME "TASK"   (or --agent "COMMAND ARGS" for any '
                 "other ACP agent)")
    return lines
