"""The commands about an agent's earlier conversations: `cockpit sessions` and `cockpit resume`
(registered on the one typer app of `cli`, which imports this module)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cockpit.cli.main import (
    _agent_choices,
    _checked,
    _no_choices,
    _options,
    _present,
    _user_errors,
    _warn_agent_config,
    _warn_sandbox,
    app,
)
from cockpit.cli.options import (
    AGENT_FLAGS,
    RUN_FLAGS,
    AgentFlags,
    CwdOption,
    RunFlags,
    SandboxNetworkOption,
    SandboxOption,
    option_groups,
)


@app.command()
def sessions(
    agent: Annotated[str | None, typer.Option(
        "--agent", metavar="NAME|\"COMMAND ARGS\"", help="Ask this agent for its sessions "
        "(session/list) where it offers that; else list the ones your journals know of it.")
    ] = None,
    cwd: Annotated[Path | None, typer.Option(
        "--cwd", metavar="DIR", help="Only sessions in this directory (with an agent's own "
        "list).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array, for scripts.")
                       ] = False,
) -> None:
    """List agent sessions to resume: updated, agent, session id, title, directory.

    Continue one with `cockpit resume --agent NAME --session ID [TASK]`."""
    from cockpit.launch import agent_sessions, journal_sessions, session_lines

    with _user_errors():
        found = None
        name = None
        if agent is not None:
            from cockpit.launch import agent_runner, agent_spec, workspace

            spec = agent_spec(agent)
            name = spec.name
            root = workspace(cwd)
            found = agent_sessions(spec, agent_runner(spec, root, _no_choices()),
                                   str(root) if cwd is not None else None)
            if found is None and not as_json:
                typer.echo(f"{name} offers no session list (session/list); these are the "
                           "sessions your journals know:", err=True)
        if found is None:
            found = journal_sessions(name)
    if not found and not as_json:
        typer.echo("no agent sessions found: `cockpit run --agent NAME TASK` starts one")
        return
    for line in session_lines(found, as_json=as_json):
        typer.echo(line)


@app.command()
@option_groups
def resume(
    target: Annotated[str | None, typer.Argument(
        metavar="JOURNAL", help="The journal of the agent run to continue (default: the "
        "newest agent run's; with --session, this is the TASK).")] = None,
    task: Annotated[str | None, typer.Argument(
        help="What to do next (default: open the conversation and show its history).")
    ] = None,
    agent: Annotated[str | None, typer.Option(
        "--agent", metavar='NAME|"COMMAND ARGS"', help="The agent (needed with --session, and "
        "for an agent the catalogue does not know: a command is never read from a journal)."
    )] = None,
    session: Annotated[str | None, typer.Option(
        "--session", metavar="ID", help="The agent's session id (see `cockpit sessions`).")
    ] = None,
    cwd: CwdOption = None,
    flags: RunFlags = RUN_FLAGS,
    model: Annotated[str | None, typer.Option(
        "--model", metavar="NAME", help="The agent's model setting.")] = None,
    agent_flags: AgentFlags = AGENT_FLAGS,
    sandbox: SandboxOption = None,
    sandbox_network: SandboxNetworkOption = False,
) -> None:
    """Continue an agent's earlier conversation, with its context.

    By session/resume where the agent offers it, else session/load, whose replay of the
    conversation is shown (and journaled) as history. Without TASK it opens the conversation:
    in the cockpit, type the next task."""
    from cockpit.launch import SetupError, agent_factory, agent_spec, resumable, use_tui

    tui = use_tui(flags.headless)
    with _checked(flags), _user_errors():
        options = _options(flags, tui=tui, cwd=cwd, sandbox=sandbox,
                           sandbox_network=sandbox_network)
        choices = _agent_choices(model, agent_flags)
        if session is not None:
            if task is not None:
                raise SetupError("with --session ID, give at most one argument: the TASK")
            if agent is None:
                raise SetupError("--session ID needs --agent NAME (see `cockpit sessions`)")
            task, session_id, where = target, session, cwd
        else:
            found = resumable(Path(target) if target is not None else None, agent)
            agent = agent or found.require_agent()
            session_id = found.session_id
            where = cwd or found.workspace()
            if target is None:
                typer.echo(f"resuming {found.journal}", err=True)
        assert agent is not None
        _warn_agent_config()
        factory = agent_factory(agent_spec(agent), cwd=where, options=options, choices=choices,
                                resume=session_id)
        typer.echo(f"resuming {agent}'s session {session_id} in {factory.cwd}", err=True)
        first = factory(task or "")
    _warn_sandbox(factory)
    _present(factory, first, tui=tui, theme=flags.theme)
