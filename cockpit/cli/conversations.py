"""The commands about an agent's earlier conversations: `cockpit sessions` (and the lines it
prints) and `cockpit resume` (and `resume_in_cockpit`, the replay viewer's `r`).

Light at import (`cockpit --help` loads it): the ACP engine is imported when an agent is asked.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cockpit.cli.options import (
    AGENT_FLAGS,
    RUN_FLAGS,
    AgentFlags,
    AllowHomeOption,
    CwdOption,
    RunFlags,
    SandboxNetworkOption,
    SandboxOption,
    option_groups,
)
from cockpit.cli.preflight import (
    EXIT_SETUP,
    agent_choices,
    checked,
    run_options,
    user_errors,
    warn_agent_config,
    warn_sandbox,
)
from cockpit.cli.run import present, present_and_exit, use_tui

if TYPE_CHECKING:
    from cockpit.launch import KnownSession, RunOptions, SessionFactory
    from engine_adapter import Session

__all__ = ["resume", "resume_in_cockpit", "session_lines", "sessions"]


def sessions(
    agent: Annotated[str | None, typer.Option(
        "--agent", metavar="NAME|\"COMMAND ARGS\"", help="Ask this agent for its own sessions "
        "(session/list; it runs in the sandbox, as for `run`). Without it: the sessions your "
        "journals know.")] = None,
    cwd: Annotated[Path | None, typer.Option(
        "--cwd", metavar="DIR", help="Only sessions in this directory (with an agent's own "
        "list).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array, for scripts.")
                       ] = False,
) -> None:
    """List agent sessions: updated, agent, session id, title, directory.

    View one with `cockpit replay --agent NAME --session ID [--cwd DIR]`; continue it with
    `cockpit resume --agent NAME --session ID [TASK]`."""
    from cockpit.launch import agent_sessions, journal_sessions

    with user_errors():
        if agent is not None:
            from cockpit.launch import (
                AgentChoices,
                RunOptions,
                SetupError,
                agent_runner,
                agent_spec,
                make_sandbox,
                workspace,
            )

            spec = agent_spec(agent)
            root = workspace(cwd)
            runner = agent_runner(spec, root, AgentChoices(no_mcp=True),
                                  sandbox=make_sandbox(RunOptions(), root))
            listed = agent_sessions(spec, runner, str(root) if cwd is not None else None)
            if listed is None:
                raise SetupError(f"{spec.name} does not list its sessions (it offers no "
                                 "session/list); `cockpit sessions` lists the ones your "
                                 "journals know")
            found = listed
        else:
            found = journal_sessions(None)
    if not found and not as_json:
        typer.echo("no agent sessions found: `cockpit run --agent NAME TASK` starts one")
        return
    for line in session_lines(found, as_json=as_json):
        typer.echo(line)


@option_groups
def resume(
    target: Annotated[str | None, typer.Argument(
        metavar="JOURNAL", help="The journal of the run to continue: an agent's, or the "
        "built-in engine's (default: the newest agent run's; with --session, this is the "
        "TASK).")] = None,
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
    allow_home: AllowHomeOption = False,
    cwd: CwdOption = None,
    flags: RunFlags = RUN_FLAGS,
    model: Annotated[str | None, typer.Option(
        "--model", metavar="NAME", help="The agent's model setting; for a built-in run, the "
        "model that continues it (default: the journal's).")] = None,
    agent_flags: AgentFlags = AGENT_FLAGS,
    sandbox: SandboxOption = None,
    sandbox_network: SandboxNetworkOption = False,
) -> None:
    """Continue an earlier conversation, with its context.

    An agent's: by session/resume where the agent offers it, else session/load, whose replay of
    the conversation is shown (and journaled) as history. The built-in engine's: rebuilt from
    its journal (the task and what the model said), in the same workspace. Without TASK it
    opens the conversation: in the cockpit, type the next task."""
    from cockpit.launch import SetupError, agent_factory, agent_spec, is_builtin_journal, resumable

    tui = use_tui(flags.headless)
    builtin = session is None and target is not None and is_builtin_journal(Path(target))
    with checked(flags), user_errors():
        options = run_options(flags, tui=tui, cwd=cwd, sandbox=sandbox,
                              sandbox_network=sandbox_network, allow_home=allow_home,
                              pass_env=tuple(agent_flags.pass_env or ()), agent=not builtin)
        if builtin:
            assert target is not None
            factory, first = _resume_builtin(Path(target), task, cwd=cwd, options=options,
                                             model=model, agent=agent)
        else:
            choices = agent_choices(model, agent_flags, flags.mode)
            if session is not None:
                if task is not None:
                    raise SetupError("with --session ID, give at most one argument: the TASK")
                if agent is None:
                    raise SetupError("--session ID needs --agent NAME (see `cockpit "
                                     "sessions`)")
                task, session_id, where = target, session, cwd
            else:
                found = resumable(Path(target) if target is not None else None, agent)
                agent = agent or found.require_agent()
                session_id = found.session_id
                where = cwd or found.workspace()
                if target is None:
                    typer.echo(f"resuming {found.journal}", err=True)
            assert agent is not None
            warn_agent_config()
            factory = agent_factory(agent_spec(agent), cwd=where, options=options,
                                    choices=choices, resume=session_id)
            typer.echo(f"resuming {agent}'s session {session_id} in {factory.cwd}", err=True)
            first = factory(task or "")
    warn_sandbox(factory)
    present_and_exit(factory, first, tui=tui, theme=flags.theme)


def _resume_builtin(journal: Path, task: str | None, *, cwd: Path | None, options: RunOptions,
                    model: str | None, agent: str | None) -> tuple[SessionFactory, Session]:
    """The factory and first Session that continue the built-in run of `journal` (`task`
    None: the conversation is opened, the next task typed in the cockpit)."""
    from cockpit.launch import SetupError, builtin_factory, read_builtin_run

    if agent is not None:
        raise SetupError("--agent is for an agent's run; this journal is a built-in engine's "
                         "run (leave --agent out)")
    run = read_builtin_run(journal)
    factory = builtin_factory(run, cwd=cwd, options=options, model=model)
    typer.echo(f"resuming the built-in run of {run.journal} in {factory.cwd}", err=True)
    return factory, factory(task or "")


def resume_in_cockpit(journal: Path, *, theme: str | None = None) -> int:
    """Open the live cockpit on the conversation of `journal` (no task yet: the human types
    it); returns the exit code. Setup problems are printed as one line (exit code 2)."""
    from cockpit.launch import RunOptions, SetupError, agent_factory, agent_spec, resumable

    try:
        found = resumable(journal, None)
        factory = agent_factory(agent_spec(found.require_agent()), cwd=found.workspace(),
                                options=RunOptions(), resume=found.session_id)
        first = factory("")
    except (SetupError, OSError) as exc:
        print(f"cockpit: error: {exc}", file=sys.stderr)
        return EXIT_SETUP
    code = present(first, headless=False, next_session=factory, theme=theme)
    for path in factory.journals:
        print(f"journal: {path}")
    return code


def session_lines(found: list[KnownSession], *, as_json: bool) -> list[str]:
    """The lines `cockpit sessions` prints: one a session (text, escaped), or one JSON array."""
    if as_json:
        import json
        from dataclasses import asdict

        return [json.dumps([asdict(s) for s in found], ensure_ascii=False, indent=1)]
    from engine_adapter.text import printable

    lines = []
    for s in found:
        updated = printable((s.updated or "")[:19].replace("T", " "), 19)
        lines.append(f"{updated:<19}  {printable(s.agent, 18):<18} "
                     f"{printable(s.session_id, 40):<40}  {printable(s.title or '-', 50):<50}"
                     f"  {printable(s.cwd or '', 80)}")
    return lines
