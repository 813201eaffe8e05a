"""The options `demo`, `run` and `resume` share, declared once (`cockpit.cli.options`): each
command lists every option of its groups, in place, and gets the groups built from them."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import typer
from typer.main import get_command
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.cli.options import (
    AGENT_FLAGS,
    RUN_FLAGS,
    AgentFlags,
    CwdOption,
    RunFlags,
    option_groups,
)

RUN = [f.name for f in fields(RunFlags)]
AGENT = [f.name for f in fields(AgentFlags)]


def params(command: str) -> list[str]:
    return [p.name for p in get_command(app).commands[command].params]  # type: ignore[attr-defined]


def test_each_command_lists_its_groups_options_in_place() -> None:
    assert params("demo")[:len(RUN)] == RUN
    run = params("run")
    at = run.index("cwd") + 1
    assert run[at:at + len(RUN) + len(AGENT)] == RUN + AGENT
    assert run[-4:] == ["sandbox", "sandbox_network", "detach", "via"]
    resume = params("resume")
    at = resume.index("cwd") + 1
    assert resume[at:] == [*RUN, "model", *AGENT, "sandbox", "sandbox_network"]
    for command in ("demo", "run", "resume"):
        for param in get_command(app).commands[command].params:  # type: ignore[attr-defined]
            assert param.name in ("task", "target") or param.help, (command, param.name)


def test_a_command_gets_its_groups_built_from_the_options_given() -> None:
    got: list[object] = []
    tiny = typer.Typer()

    @tiny.command()
    @option_groups
    def go(cwd: CwdOption = None, flags: RunFlags = RUN_FLAGS,
           agent_flags: AgentFlags = AGENT_FLAGS) -> None:
        got.extend((cwd, flags, agent_flags))

    result = CliRunner().invoke(tiny, ["--cwd", "w", "--journal", "j.jsonl", "--unattended",
                                       "--approval-timeout", "2.5", "--mode", "plan",
                                       "--option", "a=1", "--option", "b=2", "--no-mcp"])
    assert result.exit_code == 0, result.output
    assert got == [Path("w"),
                   RunFlags(journal=Path("j.jsonl"), unattended=True, approval_timeout=2.5,
                            mode="plan"),
                   AgentFlags(option=["a=1", "b=2"], no_mcp=True)]
    got.clear()
    assert CliRunner().invoke(tiny, []).exit_code == 0
    assert got == [None, RUN_FLAGS, AGENT_FLAGS]


def test_help_texts_show_config_sections_in_brackets_whole():
    """Help is rendered with Rich markup: a `[section]` of config.toml must be escaped, or it
    vanishes from `--help` (it did for `--mcp` and `--env`)."""
    for command in ("run", "resume"):
        result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0
        text = " ".join(result.output.split())
        for section in ("[mcp_servers.NAME]", "[agents.NAME.env]"):
            assert section in text, (command, section)
        assert "\\[" not in text
    text = " ".join(CliRunner().invoke(app, ["run", "--help"],
                                       env={"COLUMNS": "200"}).output.split())
    assert "else [sandbox] mode in config.toml" in text
    assert "(default: [sandbox] network in config.toml" in text


def _every_command(group=None, path=()):
    """Every command's path, sub-commands included (`grants list`)."""
    group = group or get_command(app)
    yield path
    for name, command in getattr(group, "commands", {}).items():
        yield from _every_command(command, (*path, name))


def test_help_shows_flags_bare_and_values_with_their_metavar() -> None:
    """Issue 26 §4: `--headless <bool>` read as if the flag wanted a value."""
    seen = 0
    for path in _every_command():
        result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, (path, result.output)
        seen += 1
    assert seen > 10
    demo = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "200"}).output
    line = {ln.split()[1]: ln for ln in demo.splitlines() if ln.startswith("│ --")}
    assert line["--headless"].split()[2] == "No"  # its help follows the name directly
    assert line["--journal"].split()[2] == "PATH"
    assert line["--approval-timeout"].split()[2] == "S"
