"""What a command does before anything runs: its options checked (`checked`, `check_theme`),
turned into launch's `RunOptions` and `AgentChoices`, the warnings said at start, and the one
handler of setup errors (`user_errors`: one line on stderr, exit code 2).

Imports nothing heavy at module level (`cockpit --help` loads this module): each function
imports what it uses.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from cockpit.cli.options import AgentFlags, RunFlags

if TYPE_CHECKING:
    from cockpit.launch import AgentChoices, RunOptions
    from engine_adapter.events import PermissionMode

__all__ = [
    "EXIT_SETUP",
    "agent_choices",
    "check_theme",
    "checked",
    "new_command",
    "run_options",
    "theme_names",
    "user_errors",
    "warn_agent_config",
    "warn_config",
    "warn_sandbox",
]

EXIT_SETUP = 2
"""The exit code of a command that could not start: a bad option, engine, directory or journal
path (the codes of a run's end are in `cockpit.cli.run`)."""


@contextmanager
def user_errors() -> Iterator[None]:
    """A setup error (bad engine, directory or journal path) is one line and exit code 2."""
    from cockpit.launch import SetupError
    from engine_adapter import JournalError

    try:
        yield
    except (SetupError, JournalError, OSError) as exc:
        typer.echo(f"cockpit: error: {exc}", err=True)
        raise typer.Exit(EXIT_SETUP) from None


def theme_names() -> list[str]:
    """Every theme a live cockpit or the replay viewer can use, as the command palette offers
    them: the cockpit's own and the user's (`load_themes`), then Textual's built-in ones."""
    from textual.theme import BUILTIN_THEMES

    from cockpit.themes import load_themes

    own = sorted(load_themes())
    return own + sorted(name for name in BUILTIN_THEMES if name not in own)


def check_theme(name: str | None) -> None:
    """`--theme NAME` must be one `theme_names` lists (checked whether or not the TUI runs: a
    typo is reported, never silently ignored). Raises `SetupError`."""
    if name is None:
        return  # (without a name, no Textual is loaded: the headless view never needs it)
    from cockpit.launch import SetupError

    names = theme_names()
    if name not in names:
        raise SetupError(f"--theme {name!r}: no such theme; available: {', '.join(names)} "
                         "(or add one to <config dir>/themes, see README)")


def run_options(flags: RunFlags, *, tui: bool, cwd: Path | None = None,
                sandbox: str | None = None, sandbox_network: bool = False,
                allow_home: bool = False, pass_env: tuple[str, ...] = (),
                agent: bool = False) -> RunOptions:
    """The `RunOptions` a command's flags ask for, the sandbox settled (`--sandbox`, else
    `$COCKPIT_SANDBOX`, else `config.toml`) and the policy file read; `SetupError` otherwise.
    `agent`: an ACP agent runs, so a `--mode` that is not the cockpit's is the agent's own."""
    from cockpit.config import config_path, load_config
    from cockpit.launch import RunOptions, SetupError
    from engine_adapter.checkpoints import CheckpointSettings
    from engine_adapter.grants import PolicyError, load_policy
    from engine_adapter.sandbox import ENV_VARIABLE, MODES, SandboxSettings

    if sandbox is not None and sandbox not in MODES:
        raise SetupError(f"--sandbox {sandbox!r}: use one of {', '.join(MODES)}")
    mode, agent_mode = split_mode(flags.mode)
    if agent_mode is not None and not agent:
        raise SetupError(f"--mode {agent_mode!r}: the cockpit's modes are ask, accept-edits, "
                         "auto and plan (an agent's own mode goes with --agent NAME)")
    config = load_config()
    warn_config()
    variable = os.environ.get(ENV_VARIABLE, "").strip()
    if variable and variable not in MODES:
        raise SetupError(f"{ENV_VARIABLE}={variable!r}: use one of {', '.join(MODES)}")
    # A deny list that cannot be read must stop the run: running with less hidden than the
    # user asked for is the silent downgrade the sandbox never makes.
    bad_paths = [problem for problem in config.problems if problem.startswith("[sandbox] read_")]
    if bad_paths:
        raise SetupError(f"{config_path()}: {bad_paths[0]}")
    for name in pass_env:
        if name not in os.environ:
            raise SetupError(f"--pass-env {name}: {name} is not set in this shell")
    passed = tuple(dict.fromkeys((*config.sandbox_pass_env, *pass_env)))
    settings = SandboxSettings(mode=sandbox or variable or config.sandbox_mode or MODES[0],
                               network=sandbox_network or bool(config.sandbox_network),
                               read_deny=config.sandbox_read_deny,
                               read_allow=config.sandbox_read_allow, pass_env=passed)
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
                      policy=loaded, project=project, sandbox=settings,
                      allow_home_workspace=allow_home, mode=mode,
                      checkpoints=config.checkpoints or CheckpointSettings())


def split_mode(text: str | None) -> tuple[PermissionMode, str | None]:
    """What `--mode TEXT` asks for: the cockpit's permission mode (the default when TEXT is
    not one of its names), and an agent's own mode id (None when TEXT is the cockpit's)."""
    from engine_adapter.events import DEFAULT_MODE, parse_mode

    if text is None:
        return DEFAULT_MODE, None
    found = parse_mode(text)
    return (found, None) if found is not None else (DEFAULT_MODE, text)


def agent_choices(model: str | None, flags: AgentFlags, mode: str | None = None
                  ) -> AgentChoices:
    """What the command line asks of an ACP agent beyond the task (`mode`: `--mode`, which
    is the agent's own only when it is not one of the cockpit's)."""
    from cockpit.launch import AgentChoices

    return AgentChoices(model=model, mode=split_mode(mode)[1], options=tuple(flags.option or ()),
                        mcp=tuple(flags.mcp or ()), no_mcp=flags.no_mcp,
                        env=tuple(flags.env or ()), pass_env=tuple(flags.pass_env or ()),
                        state=tuple(str(path) for path in flags.agent_state or ()))


@contextmanager
def checked(flags: RunFlags) -> Iterator[None]:
    """The run options shared by `demo`, `run` and `resume`, checked before anything is
    created; once the body has run, says which folder `--journal` made, if it made one."""
    from cockpit.launch import check_journal_path, check_seconds

    with user_errors():
        check_theme(flags.theme)
        check_seconds("--approval-timeout", flags.approval_timeout,
                      hint="seconds; leave it out to wait for an answer")
        created = check_journal_path(flags.journal)
    yield
    if created is not None and created.is_dir():
        typer.echo(f"cockpit: created the folder {str(created)!r} for --journal", err=True)


def warn_sandbox(factory: Any) -> None:
    """Say at start, with the fix, when commands will run without the sandbox wanted."""
    sandbox = getattr(factory, "sandbox", None)
    warning = sandbox.warning() if sandbox is not None else None
    if getattr(factory, "agent", False) and sandbox is not None and not sandbox.active:
        # Once, with the rest: where the agent's own tools run is what --auto-approve hangs on.
        why = "--sandbox off" if sandbox.state == "off" else "there is no sandbox here"
        note = (f"the agent itself runs outside the sandbox ({why}): what it runs of its own "
                "is not contained, and --auto-approve answers its own tools for reads only")
        warning = f"{warning} {note[0].upper()}{note[1:]}." if warning else note
    if warning:
        typer.echo(f"cockpit: warning: {warning}", err=True)


_said: set[str] = set()  # what this command has said (several of its steps read the config)


def new_command() -> None:
    """A command starts: nothing said yet (the app's callback calls this; in one process,
    tests run many commands)."""
    _said.clear()


def _say_once(line: str) -> None:
    """`line` on stderr, unless this command has said it already."""
    if line not in _said:
        _said.add(line)
        typer.echo(line, err=True)


def warn_config() -> None:
    """Say, once a command, what in `config.toml` could not be used: a broken file with the
    line to fix (all of it is then ignored), else each setting skipped. Headless runs say it
    too (in CI a dropped `[sandbox]` or provider would otherwise go unnoticed)."""
    from cockpit.config import load_config  # (not launch's models: they load the SDKs)

    for warning in load_config().warnings():
        _say_once(f"cockpit: warning: {warning}")


def warn_agent_config() -> None:
    """Say what `config.toml` says about agents that was left out, and why (a broken file:
    as `warn_config` says it, once)."""
    from cockpit.config import config_path
    from cockpit.launch import config_problems

    warn_config()
    for problem in config_problems():
        if not problem.startswith(str(config_path())):  # (the broken file: said above)
            _say_once(f"cockpit: warning: config.toml: {problem} (left out)")
