"""`cockpit demo` and `cockpit run`, and how a run is presented and ends.

- `use_tui`: whether the live cockpit shows the run, else the headless line view;
  `present(session, headless=…)` shows it and returns the exit code; `present_and_exit` also
  prints where the journals are, then exits with that code.
- The exit codes (README: "Exit codes"): 0 `completed`, `EXIT_FAILED`, `EXIT_CANCELLED`,
  `EXIT_JOURNAL_FAILED`, and `cockpit.cli.preflight.EXIT_SETUP` for a run that could not start.

Light at import (`cockpit --help` loads it): the engines, the live app and the headless view
are imported by the command that uses them.
"""

from __future__ import annotations

import sys
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cockpit.cli.options import (
    AGENT_FLAGS,
    RUN_FLAGS,
    AgentFlags,
    AllowHomeOption,
    CwdOption,
    DetachOption,
    RunFlags,
    SandboxNetworkOption,
    SandboxOption,
    ViaOption,
    option_groups,
)
from cockpit.cli.preflight import (
    EXIT_SETUP,
    agent_choices,
    checked,
    run_options,
    user_errors,
    warn_agent_config,
    warn_config,
    warn_sandbox,
)

if TYPE_CHECKING:
    from cockpit.launch import AgentChoices, RunOptions, SessionFactory
    from engine_adapter import Session

__all__ = [
    "EXIT_CANCELLED",
    "EXIT_FAILED",
    "EXIT_JOURNAL_FAILED",
    "build_demo",
    "build_run",
    "demo",
    "exit_code",
    "present",
    "present_and_exit",
    "run",
    "use_tui",
]

EXIT_FAILED = 1  # the run ended `failed`
EXIT_JOURNAL_FAILED = 74  # its journal could not be written (sysexits' EX_IOERR): the run was
# stopped, since what it did next could not be recorded
EXIT_CANCELLED = 130  # the run ended `cancelled` (Ctrl-C, escape), as a shell reports SIGINT


def use_tui(headless: bool) -> bool:
    """Whether the live cockpit shows the run (else the headless line view, with no human)."""
    return not headless and sys.stdin.isatty() and sys.stdout.isatty()


def exit_code(status: str, *, journal_failed: bool = False) -> int:
    """The process exit code for how a run ended: 0 completed, 130 cancelled, 1 otherwise; 74
    whenever a journal could not be written (the run was stopped, or its record is incomplete)."""
    if journal_failed:
        return EXIT_JOURNAL_FAILED
    return {"completed": 0, "cancelled": EXIT_CANCELLED}.get(status, EXIT_FAILED)


def present(session: Session, *, headless: bool,
            next_session: SessionFactory | None = None,
            theme: str | None = None) -> int:
    """Run `session` in front of the user and return the exit code (0: completed).

    The headless view prints one line per event; otherwise the live cockpit shows it
    (`CockpitApp`, which runs the session itself; `next_session` offers a next task). Either
    way the factory's agents are closed in the run's event loop before it ends.
    """
    if not headless:
        from cockpit.export import export_beside
        from cockpit.live import CockpitApp

        app = CockpitApp(session, theme=theme, next_session=next_session,
                         exporter=export_beside)  # `/export` (live may not import export)
        app.run()
        sessions = app.sessions or [session]
        return exit_code(sessions[-1].state.status,
                         journal_failed=any(s.journal_error for s in sessions))
    import asyncio

    from cockpit.headless import run_headless

    async def run_then_close() -> Any:
        try:
            return await run_headless(session)
        finally:
            if next_session is not None:
                await next_session.aclose()

    state = asyncio.run(run_then_close())
    return exit_code(state.status, journal_failed=bool(session.journal_error))


def present_and_exit(factory: SessionFactory, session: Session, *, tui: bool,
                     theme: str | None = None) -> None:
    """Show the run, then print where its journal is; exits with the run's code."""
    code = present(session, headless=not tui, next_session=factory, theme=theme)
    with suppress(BrokenPipeError):
        for path in factory.journals:
            typer.echo(f"journal: {path}")
    for ran in factory.sessions or [session]:
        if ran.journal_error:
            typer.echo(f"cockpit: {ran.journal_error}; the run was stopped (exit {code})",
                       err=True)
    raise typer.Exit(code)


@option_groups
def demo(
    flags: RunFlags = RUN_FLAGS,
    sandbox: SandboxOption = None,
    sandbox_network: SandboxNetworkOption = False,
    speed: Annotated[float, typer.Option(
        "--speed", help="Pacing of the scripted model: 2 is twice as fast, 0 has no pauses.")
    ] = 1.0,
    keep: Annotated[bool, typer.Option(
        "--keep", help="Keep the throw-away workspace at exit (and print where it is); "
        "without it, it is removed.")] = False,
    detach: DetachOption = False,
    via: ViaOption = None,
) -> None:
    """Watch a real agent run, offline, in a throw-away sample project.

    The built-in engine and its scripted model fix a failing test: they read files, run
    commands, ask for approval, edit, and verify — all for real, no network, no API key."""
    from cockpit.launch import check_seconds

    _via_needs_detach(via, detach)
    if detach:
        from cockpit.cli.detach import detached

        with checked(flags), user_errors():
            check_seconds("--speed", speed, hint="2 is twice as fast, 0 has no pauses")
        detached("demo", via=via, flags=flags, sandbox=sandbox, sandbox_network=sandbox_network,
                 speed=speed, keep=keep)
    tui = use_tui(flags.headless)
    with checked(flags), user_errors():
        check_seconds("--speed", speed, hint="2 is twice as fast, 0 has no pauses")
        factory, session = build_demo(flags, tui=tui, sandbox=sandbox,
                                      sandbox_network=sandbox_network, speed=speed)
    typer.echo(f"demo workspace: {session.state.cwd}")
    warn_sandbox(factory)
    try:
        present_and_exit(factory, session, tui=tui, theme=flags.theme)
    finally:
        _leave_workspace(Path(factory.cwd), keep=keep)
        if not keep:
            from cockpit.launch import forget_demo_grants

            forget_demo_grants(factory)  # a removed folder's project grants go with it


def _via_needs_detach(via: str | None, detach: bool) -> None:
    if via is not None and not detach:
        typer.echo("cockpit: error: --via starts the run in another machine's host: it goes "
                   "with --detach (then `cockpit attach --via … RUN`)", err=True)
        raise typer.Exit(EXIT_SETUP)


def build_demo(flags: RunFlags, *, tui: bool, sandbox: str | None, sandbox_network: bool,
               speed: float) -> tuple[SessionFactory, Session]:
    """The demo's factory and first Session (`SetupError` if it cannot start)."""
    from cockpit.launch import start_demo

    return start_demo(speed=speed, options=run_options(
        flags, tui=tui, sandbox=sandbox, sandbox_network=sandbox_network))


def _leave_workspace(root: Path, *, keep: bool) -> None:
    """The demo's throw-away workspace at exit: removed, or kept with its path printed."""
    from cockpit.launch import release_workspace

    release_workspace(root, remove=not keep)
    if keep:
        with suppress(BrokenPipeError):
            typer.echo(f"demo workspace kept: {root} (remove it when done)")


@option_groups
def run(
    task: Annotated[str, typer.Argument(help="What the agent should do.")],
    engine: Annotated[str | None, typer.Option(
        "--engine", metavar="MODULE:FACTORY",
        help="Your engine: FACTORY(cwd=..., task=...) returns an AgentRunner.")] = None,
    agent: Annotated[str | None, typer.Option(
        "--agent", metavar='NAME|"COMMAND ARGS"',
        help="Drive an Agent Client Protocol agent: a name from `cockpit agents` (codex, "
        "claude, gemini) or any ACP agent's command line, quoted.")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", metavar="[PROVIDER:]NAME",
        help="Without --agent: drive the built-in engine with a real model on any "
        "OpenAI-compatible server, e.g. gpt-4.1-mini, ollama:qwen3-coder, llamacpp:any (see "
        "`cockpit models`). With --agent: the agent's own model setting, e.g. --agent claude "
        "--model sonnet (an unknown one is an error listing the agent's models).")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", metavar="URL", help="The model server's API root, e.g. "
        "http://localhost:11434/v1 (default: the provider's, else $OPENAI_BASE_URL, else "
        "OpenAI's).")] = None,
    api_key_env: Annotated[str | None, typer.Option(
        "--api-key-env", metavar="VAR", help="The environment variable holding the key "
        "(default: the provider's, else OPENAI_API_KEY; a local server needs none).")] = None,
    allow_home: AllowHomeOption = False,
    cwd: CwdOption = None,
    flags: RunFlags = RUN_FLAGS,
    agent_flags: AgentFlags = AGENT_FLAGS,
    sandbox: SandboxOption = None,
    sandbox_network: SandboxNetworkOption = False,
    detach: DetachOption = False,
    via: ViaOption = None,
) -> None:
    """Run a task with an engine and watch it.

    Every event is shown and journaled; tool calls that need approval ask you."""
    given: dict[str, Any] = {
        "task": task, "engine": engine, "agent": agent, "model": model, "base_url": base_url,
        "api_key_env": api_key_env, "allow_home": allow_home, "cwd": cwd, "flags": flags,
        "agent_flags": agent_flags, "sandbox": sandbox, "sandbox_network": sandbox_network}
    _via_needs_detach(via, detach)
    if detach:
        from cockpit.cli.detach import detached

        with checked(flags), user_errors():
            _check_drivers(engine=engine, agent=agent, model=model,
                           choices=agent_choices(model if agent is not None else None,
                                                 agent_flags, flags.mode),
                           server=base_url is not None or api_key_env is not None,
                           sandboxed=sandbox is not None or sandbox_network)
        detached("run", via=via, **given)
    tui = use_tui(flags.headless)
    with checked(flags), user_errors():
        factory, session = build_run(tui=tui, **given)
    warn_sandbox(factory)
    present_and_exit(factory, session, tui=tui, theme=flags.theme)


def build_run(task: str, *, engine: str | None, agent: str | None, model: str | None,
              base_url: str | None, api_key_env: str | None, allow_home: bool,
              cwd: Path | None, flags: RunFlags, agent_flags: AgentFlags, sandbox: str | None,
              sandbox_network: bool, tui: bool) -> tuple[SessionFactory, Session]:
    """The factory and first Session `cockpit run` asks for (`SetupError` if it cannot)."""
    options = run_options(flags, tui=tui, cwd=cwd, sandbox=sandbox,
                          sandbox_network=sandbox_network, allow_home=allow_home,
                          pass_env=tuple(agent_flags.pass_env or ()), agent=agent is not None)
    choices = agent_choices(model if agent is not None else None, agent_flags, flags.mode)
    _check_drivers(engine=engine, agent=agent, model=model, choices=choices,
                   server=base_url is not None or api_key_env is not None,
                   sandboxed=sandbox is not None or sandbox_network)
    if agent is not None:
        from cockpit.launch import agent_factory

        warn_agent_config()
        factory = agent_factory(agent, cwd=cwd, options=options, choices=choices)
    elif model is not None:
        factory = _model_factory(model, base_url=base_url, api_key_env=api_key_env,
                                 cwd=cwd, options=options)
    else:
        from cockpit.launch import engine_factory

        assert engine is not None  # (`_check_drivers` made sure)
        factory = engine_factory(engine, cwd=cwd, options=options)
    return factory, factory(task)


def _check_drivers(*, engine: str | None, agent: str | None, model: str | None,
                   choices: AgentChoices, server: bool, sandboxed: bool) -> None:
    """What drives `cockpit run` is exactly one of `--engine`, `--agent` and `--model`, and
    each option goes with the one it applies to; `SetupError` otherwise."""
    from dataclasses import replace

    from cockpit.launch import AgentChoices, SetupError

    chosen = [flag for flag, value in (("--engine", engine), ("--agent", agent))
              if value is not None]
    if model is not None and agent is None:
        chosen.append("--model")
    if len(chosen) > 1:
        raise SetupError(f"{' and '.join(chosen)} cannot be used together: pick one")
    if agent is None and replace(choices, pass_env=()) != AgentChoices():
        raise SetupError("--option, --mcp, --no-mcp, --env and --agent-state go "
                         "with --agent NAME")
    if engine is not None and choices.pass_env:
        raise SetupError("--pass-env applies to the commands the cockpit runs (--model, "
                         "--agent); your --engine runs its own")
    if (model is None or agent is not None) and server:
        raise SetupError("--base-url and --api-key-env go with --model NAME for the "
                         "built-in engine (with --agent, the agent reaches its own model)")
    if engine is not None and sandboxed:
        raise SetupError("--sandbox and --sandbox-network apply to the built-in engine "
                         "(--model) and ACP agents (--agent); your --engine runs its own "
                         "commands")
    if not chosen:
        raise SetupError("cockpit run needs something to drive it: --model NAME (a real "
                         "model, see `cockpit models`), --agent NAME (an ACP agent, see "
                         "`cockpit agents`) or --engine module:factory")


def _model_factory(model: str, *, base_url: str | None, api_key_env: str | None,
                   cwd: Path | None, options: RunOptions) -> SessionFactory:
    """The built-in engine on a real model, after the warnings `config.toml` gives."""
    from cockpit.launch import model_factory

    warn_config()
    return model_factory(model, base_url=base_url, api_key_env=api_key_env, cwd=cwd,
                         options=options)
