"""The ACP agents of `cockpit run --agent NAME|"COMMAND"` and `cockpit resume`: their runners.

`agent_factory` builds the Sessions of one conversation with one `AcpRunner`: every task of the
conversation goes to the same agent process and ACP session. The agent's process group is
stopped when the event loop that ran it ends (see `AgentProcess`), so a finished `cockpit run`
leaves nothing behind. `AgentChoices` is what the command line asks of the agent beyond the
task: its model, mode and settings, its MCP servers and the environment passed on purpose.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.launch.agent_box import agent_box
from cockpit.launch.agent_config import ENV_NAME, AgentsConfig, load_agents_config, resolve_command
from cockpit.launch.checks import check_agent_program
from cockpit.launch.factory import RunOptions, SessionFactory, SetupError, make_sandbox
from engine_adapter.engines.acp import (
    AcpRunner,
    AgentSpec,
    AgentSpecError,
    resolve_agent,
)
from engine_adapter.engines.acp.agent import McpServer, SessionSetup, Wanted

__all__ = ["AgentChoices", "agent_factory", "agent_runner", "agent_spec", "config_problems",
           "workspace"]


@dataclass(frozen=True)
class AgentChoices:
    """What the command line asks of an agent: `model`, `mode`, `options` ("KEY=VALUE"), MCP
    servers (`mcp` names; `no_mcp`: none; else every configured one), and environment passed
    on purpose (`env` "KEY=VALUE", `pass_env` names of variables of this shell), and the
    folders the agent keeps its state in (`state`, see `agent_box`)."""

    model: str | None = None
    mode: str | None = None
    options: tuple[str, ...] = ()
    mcp: tuple[str, ...] = ()
    no_mcp: bool = False
    env: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()
    state: tuple[str, ...] = ()  # --agent-state: the agent's own folders, writable for it


def _pairs(values: tuple[str, ...], flag: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            raise SetupError(f"{flag} {value!r}: expected KEY=VALUE")
        pairs.append((key.strip(), rest))
    return pairs


def _servers(choices: AgentChoices, config: AgentsConfig) -> tuple[McpServer, ...]:
    if choices.no_mcp:
        if choices.mcp:
            raise SetupError("--mcp and --no-mcp cannot be used together: pick one")
        return ()
    known = config.mcp_servers
    for name in choices.mcp:
        if name not in known:
            listed = ", ".join(sorted(known)) or "none configured"
            raise SetupError(f"--mcp {name!r}: no such MCP server in config.toml "
                             f"([mcp_servers.NAME]); configured: {listed}")
    servers = []
    for name in choices.mcp or sorted(known):
        resolved = resolve_command(known[name])
        if isinstance(resolved, str):
            if choices.mcp:
                raise SetupError(resolved)
            continue  # every server by default: one that cannot start is left out (warned)
        servers.append(resolved)
    return tuple(servers)


def _environment(spec: AgentSpec, choices: AgentChoices,
                 config: AgentsConfig) -> dict[str, str]:
    """What the human passes to the agent on purpose: `[agents.NAME.env]`, then `--pass-env`,
    then `--env` (the later wins)."""
    env = dict(config.agent_env.get(spec.name, {}))
    for name in choices.pass_env:
        if not ENV_NAME.fullmatch(name):
            raise SetupError(f"--pass-env {name!r}: not a variable name")
        if name not in os.environ:
            raise SetupError(f"--pass-env {name}: {name} is not set in this shell")
        env[name] = os.environ[name]
    for key, value in _pairs(choices.env, "--env"):
        if not ENV_NAME.fullmatch(key):
            raise SetupError(f"--env {key}=…: {key!r} is not a variable name")
        env[key] = value
    return env


def config_problems() -> list[str]:
    """What `config.toml` says about agents that was left out, and why (to warn about)."""
    return load_agents_config().problems


def agent_runner(spec: AgentSpec, root: Path, choices: AgentChoices,
                 resume: str | None = None, *, sandbox: Any = None,
                 load_only: bool = False) -> AcpRunner:
    """The runner for `spec` in `root` with the human's choices (and an earlier session to
    resume; `load_only`: only to read it, see `SessionSetup`); raises `SetupError` for a bad
    choice."""
    config = load_agents_config()
    if choices.model is not None and choices.model.startswith("-"):
        raise SetupError(f"--model {choices.model!r}: a model name cannot start with '-'")
    wanted = Wanted(model=choices.model, mode=choices.mode,
                    options=tuple(_pairs(choices.options, "--option")))
    setup = SessionSetup(resume=resume, mcp_servers=_servers(choices, config), wanted=wanted,
                         load_only=load_only)
    return AcpRunner(spec, cwd=root, env=_environment(spec, choices, config), setup=setup,
                     sandbox=sandbox, box=agent_box(spec, root, choices.state))


def agent_spec(agent: str) -> AgentSpec:
    """The agent `--agent` names, installed; `SetupError` saying what to do otherwise."""
    try:
        spec = resolve_agent(agent)
    except AgentSpecError as exc:
        raise SetupError(str(exc)) from None
    if spec.known and spec.installed() is None:
        raise SetupError(f"agent {spec.name!r} is not installed ({spec.command} is not on PATH); "
                         f"install it with: {spec.install}")
    return spec


def workspace(cwd: str | Path | None) -> Path:
    """`--cwd` (default: here) as an absolute directory; `SetupError` if it is not one."""
    root = Path(cwd) if cwd is not None else Path.cwd()
    if not root.is_dir():
        raise SetupError(f"--cwd {str(root)!r} is not a directory")
    return root.resolve()


def agent_factory(agent: str | AgentSpec, *, cwd: str | Path | None = None,
                  options: RunOptions | None = None, choices: AgentChoices = AgentChoices(),
                  resume: str | None = None) -> SessionFactory:
    """The sessions of `cockpit run --agent AGENT` in `cwd` (default: here), all driven by one
    `AcpRunner` (opening the earlier session `resume` when given). Raises `SetupError` for an
    unknown agent, a bad directory or a bad choice."""
    root = workspace(cwd)
    spec = agent if isinstance(agent, AgentSpec) else agent_spec(agent)
    if not spec.known:
        check_agent_program(spec.command, root)  # cannot start: a setup error, like a typo
    options = options if options is not None else RunOptions()
    sandbox = make_sandbox(options, root)
    runner = agent_runner(spec, root, choices, resume, sandbox=sandbox)
    factory = SessionFactory(lambda _task, _index: runner, cwd=root, options=options,
                             sandbox=sandbox)
    factory.agent = True
    return factory
