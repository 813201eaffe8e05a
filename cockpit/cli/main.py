"""The `cockpit` command line (a typer app). Each command's docstring is its help text."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Annotated, Any

import typer

from cockpit import __version__
from cockpit.cli.grants import grants_app
from cockpit.cli.options import *  # noqa: F403 - every option alias stays importable from here
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

app = typer.Typer(
    name="cockpit",
    help="A terminal cockpit for AI agent runs: watch every event live, approve tool calls by "
    "keypress, and replay the run's journal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


app.add_typer(grants_app)


@app.command()
def version() -> None:
    """Print the cockpit version."""
    typer.echo(f"cockpit {__version__}")




@contextmanager
def _user_errors() -> Iterator[None]:
    """A setup error (bad engine, directory or journal path) is one line and exit code 2."""
    from cockpit.launch import EXIT_SETUP, SetupError
    from engine_adapter import JournalError

    try:
        yield
    except (SetupError, JournalError, OSError) as exc:
        typer.echo(f"cockpit: error: {exc}", err=True)
        raise typer.Exit(EXIT_SETUP) from None


def _present(factory: Any, session: Any, *, tui: bool, theme: str | None = None) -> None:
    """Show the run, then print where its journal is; exits with the run's code."""
    from cockpit.launch import present

    code = present(session, headless=not tui, next_session=factory, theme=theme)
    with suppress(BrokenPipeError):
        for path in factory.journals:
            typer.echo(f"journal: {path}")
    for ran in getattr(factory, "sessions", None) or [session]:
        if ran.journal_error:
            typer.echo(f"cockpit: {ran.journal_error}; the run was stopped (exit {code})",
                       err=True)
    raise typer.Exit(code)


def _options(flags: RunFlags, *, tui: bool, cwd: Path | None = None,
             sandbox: str | None = None, sandbox_network: bool = False) -> Any:
    from cockpit.config import load_config
    from cockpit.launch import RunOptions, SetupError
    from engine_adapter.grants import PolicyError, load_policy
    from engine_adapter.sandbox import ENV_VARIABLE, MODES, SandboxSettings

    if sandbox is not None and sandbox not in MODES:
        raise SetupError(f"--sandbox {sandbox!r}: use one of {', '.join(MODES)}")
    config = load_config()
    variable = os.environ.get(ENV_VARIABLE, "").strip()
    if variable and variable not in MODES:
        raise SetupError(f"{ENV_VARIABLE}={variable!r}: use one of {', '.join(MODES)}")
    settings = SandboxSettings(mode=sandbox or variable or config.sandbox_mode or MODES[0],
                               network=sandbox_network or bool(config.sandbox_network))
    policy = flags.policy
    try:
        loaded = load_policy(policy) if policy is not None else None
    except PolicyError as exc:
        raise SetupError(str(exc)) from None
    # The project as the user named it (not resolved): a path through a symbolic link gets no
    # project grants (see engine_adapter.grants.store).
    project = Path(os.path.abspath(cwd)) if cwd is not None else None
    return RunOptions(journal=flags.journal, unattended=flags.unattended or not tui,
                      approval_timeout=flags.approval_timeout, auto_approve=flags.auto_approve,
                      policy=loaded, project=project, sandbox=settings)


def _warn_sandbox(factory: Any) -> None:
    """Say at start, with the fix, when commands will run without the sandbox wanted."""
    sandbox = getattr(factory, "sandbox", None)
    warning = sandbox.warning() if sandbox is not None else None
    if warning:
        typer.echo(f"cockpit: warning: {warning}", err=True)


@contextmanager
def _checked(flags: RunFlags) -> Iterator[None]:
    """The run options shared by `demo` and `run`, checked before anything is created; once the
    body has run, says which folder `--journal` made, if it made one."""
    from cockpit.launch import check_journal_path, check_seconds, check_theme

    with _user_errors():
        check_theme(flags.theme)
        check_seconds("--approval-timeout", flags.approval_timeout,
                      hint="seconds; leave it out to wait for an answer")
        created = check_journal_path(flags.journal)
    yield
    if created is not None and created.is_dir():
        typer.echo(f"cockpit: created the folder {str(created)!r} for --journal", err=True)


@app.command()
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
) -> None:
    """Watch a real agent run, offline, in a throw-away sample project.

    The built-in engine and its scripted model fix a failing test: they read files, run
    commands, ask for approval, edit, and verify — all for real, no network, no API key."""
    from cockpit.launch import check_seconds, start_demo, use_tui

    tui = use_tui(flags.headless)
    with _checked(flags), _user_errors():
        check_seconds("--speed", speed, hint="2 is twice as fast, 0 has no pauses")
        factory, session = start_demo(speed=speed, options=_options(
            flags, tui=tui, sandbox=sandbox, sandbox_network=sandbox_network))
    typer.echo(f"demo workspace: {session.state.cwd}")
    _warn_sandbox(factory)
    try:
        _present(factory, session, tui=tui, theme=flags.theme)
    finally:
        _leave_workspace(Path(factory.cwd), keep=keep)


def _leave_workspace(root: Path, *, keep: bool) -> None:
    """The demo's throw-away workspace at exit: removed, or kept with its path printed."""
    import shutil

    if keep:
        with suppress(BrokenPipeError):
            typer.echo(f"demo workspace kept: {root} (remove it when done)")
    else:
        shutil.rmtree(root, ignore_errors=True)


@app.command()
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
    cwd: CwdOption = None,
    flags: RunFlags = RUN_FLAGS,
    agent_flags: AgentFlags = AGENT_FLAGS,
    sandbox: SandboxOption = None,
    sandbox_network: SandboxNetworkOption = False,
) -> None:
    """Run a task with an engine and watch it.

    Every event is shown and journaled; tool calls that need approval ask you."""
    from cockpit.launch import SetupError, engine_factory, use_tui

    tui = use_tui(flags.headless)
    with _checked(flags), _user_errors():
        options = _options(flags, tui=tui, cwd=cwd, sandbox=sandbox,
                           sandbox_network=sandbox_network)
        chosen = [flag for flag, value in (("--engine", engine), ("--agent", agent))
                  if value is not None]
        if model is not None and agent is None:
            chosen.append("--model")
        if len(chosen) > 1:
            raise SetupError(f"{' and '.join(chosen)} cannot be used together: pick one")
        choices = _agent_choices(model if agent is not None else None, agent_flags)
        if agent is None and choices != _no_choices():
            raise SetupError("--mode, --option, --mcp, --no-mcp, --env and --pass-env go with "
                             "--agent NAME")
        if (model is None or agent is not None) and (base_url is not None
                                                     or api_key_env is not None):
            raise SetupError("--base-url and --api-key-env go with --model NAME for the "
                             "built-in engine (with --agent, the agent reaches its own model)")
        if engine is not None and (sandbox is not None or sandbox_network):
            raise SetupError("--sandbox and --sandbox-network apply to the built-in engine "
                             "(--model) and ACP agents (--agent); your --engine runs its own "
                             "commands")
        if agent is not None:
            from cockpit.launch import agent_factory

            _warn_agent_config()
            factory = agent_factory(agent, cwd=cwd, options=options, choices=choices)
        elif model is not None:
            from cockpit.launch import config_warnings, model_factory

            for warning in config_warnings():
                typer.echo(f"cockpit: warning: {warning}", err=True)
            factory = model_factory(model, base_url=base_url, api_key_env=api_key_env, cwd=cwd,
                                    options=options)
        elif engine is None:
            raise SetupError("cockpit run needs something to drive it: --model NAME (a real "
                             "model, see `cockpit models`), --agent NAME (an ACP agent, see "
                             "`cockpit agents`) or --engine module:factory")
        else:
            factory = engine_factory(engine, cwd=cwd, options=options)
        session = factory(task)
    _warn_sandbox(factory)
    _present(factory, session, tui=tui, theme=flags.theme)


def _agent_choices(model: str | None, flags: AgentFlags) -> Any:
    from cockpit.launch import AgentChoices

    return AgentChoices(model=model, mode=flags.mode, options=tuple(flags.option or ()),
                        mcp=tuple(flags.mcp or ()), no_mcp=flags.no_mcp,
                        env=tuple(flags.env or ()), pass_env=tuple(flags.pass_env or ()))


def _no_choices() -> Any:
    from cockpit.launch import AgentChoices

    return AgentChoices()


def _warn_agent_config() -> None:
    from cockpit.launch import config_problems

    for problem in config_problems():
        typer.echo(f"cockpit: warning: config.toml: {problem} (left out)", err=True)


@app.command()
def agents() -> None:
    """List the Agent Client Protocol agents cockpit knows by name.

    Each with whether it is installed, the keys it reads and how to install it.

    Drive one with `cockpit run --agent NAME TASK`."""
    from cockpit.launch import agents_listing

    for line in agents_listing():
        typer.echo(line)


@app.command()
def models(
    provider: Annotated[str | None, typer.Argument(
        help="A provider: ollama, llamacpp, vllm, lmstudio, openai, openrouter or one from "
        "config.toml (default: --base-url, else $OPENAI_BASE_URL, else OpenAI).")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", metavar="URL", help="The server's API root, e.g. http://localhost:8080/v1.")
    ] = None,
    api_key_env: Annotated[str | None, typer.Option(
        "--api-key-env", metavar="VAR", help="The environment variable holding the key.")
    ] = None,
) -> None:
    """List the models an OpenAI-compatible server offers (for `cockpit run --model`)."""
    import asyncio

    from cockpit.launch import config_warnings, list_models, resolve_server

    for warning in config_warnings():
        typer.echo(f"cockpit: warning: {warning}", err=True)
    with _user_errors():
        server = resolve_server(provider, base_url=base_url, api_key_env=api_key_env)
        found = asyncio.run(list_models(server))
    if not found:
        typer.echo(f"{server.base_url} lists no models")
    for name, window in found:
        typer.echo(f"{name}" + (f"  (context {window:,} tokens)" if window else ""))
    prefix = f"{provider}:" if provider else ""
    extra = f" --base-url {server.base_url}" if base_url else ""
    typer.echo(f'\nRun one:  cockpit run "TASK" --model {prefix}NAME{extra}', err=True)


@app.command(help=(
    "Review a run from its journal: step, jump, search and filter its events. A journal that "
    "is still being written is followed live (watch a running agent from a second terminal). "
    "Without JOURNAL: pick from recent journals. Keys: space play/pause, +/- speed, ←/→ one "
    "event, [ ] tool calls, { } approvals, e/E errors, home/end, / search (n/N), f filter, "
    "enter raw event, ? help, q quit."))
def replay(
    journal: str | None = typer.Argument(
        None, help="The journal file (.jsonl). Without one: pick from recent journals."),
    theme: str | None = typer.Option(None, help="Theme name (default: the remembered one)."),
) -> None:
    """Review a run from its journal (help text above)."""
    from cockpit.cli.journals import run_replay
    from cockpit.launch import check_theme

    with _user_errors():
        check_theme(theme)
    raise typer.Exit(run_replay(journal, theme=theme))


@app.command()
def journals(
    limit: int = typer.Option(20, help="How many to list (newest first); 0 lists all."),
    agent: str | None = typer.Option(
        None, "--agent", metavar="NAME", help="Only runs of this agent (codex, claude, gemini, "
        "an agent's own name) or engine."),
    status: str | None = typer.Option(
        None, "--status", metavar="STATUS", help="Only runs that ended so: completed, failed, "
        "cancelled; running (no end yet), or crashed (no end, nothing writes it)."),
    search: str | None = typer.Option(
        None, "--search", metavar="TEXT", help="Only runs whose task, session title or path "
        "holds TEXT (any case)."),
) -> None:
    """List recent journals: start, status, agent, tokens, cost, title, task, events, path."""
    from cockpit.cli.journals import list_recent
    from cockpit.launch import check_limit

    with _user_errors():
        check_limit("--limit", limit)
    raise typer.Exit(list_recent(limit, agent=agent, status=status, search=search))


@app.command(help=(
    "Write a readable report of a run: task, turns, tool calls (outputs trimmed), approvals "
    "with who decided, verification and usage. Exits non-zero only when nothing could be read."))
def export(
    journal: str = typer.Argument(..., help="The journal file (.jsonl) to report on."),
    format: str = typer.Option("markdown", "--format", "-f",
                               help="markdown or html."),
    output: str | None = typer.Option(None, "--output", "-o",
                                      help="Write here instead of standard output."),
) -> None:
    """Write a report of a run (help text above)."""
    from cockpit.cli.journals import run_export

    raise typer.Exit(run_export(journal, format, output))


from cockpit.cli import conversations as cli_agents  # noqa: E402, F401 - registers `sessions` and `resume`


def main() -> None:
    """Console-script entry point."""
    from cockpit.launch import safe_output

    safe_output()
    app()
