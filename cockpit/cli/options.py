"""The options of the commands that run a task, declared once: each option's typer alias, and
the two groups `demo`, `run` and `resume` share (`RunFlags`, `AgentFlags`), which a command
takes as one parameter through `option_groups`."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

__all__ = [
    "AGENT_FLAGS",
    "GROUPS",
    "RUN_FLAGS",
    "AgentFlags",
    "AllowHomeOption",
    "AutoApproveOption",
    "CwdOption",
    "DetachOption",
    "EnvOption",
    "HeadlessOption",
    "JournalOption",
    "McpOption",
    "ModeOption",
    "NoMcpOption",
    "PassEnvOption",
    "PolicyOption",
    "RunFlags",
    "SandboxNetworkOption",
    "SandboxOption",
    "SettingOption",
    "ThemeOption",
    "TimeoutOption",
    "UnattendedOption",
    "ViaOption",
    "bare_flags_in_help",
    "option_groups",
]

# -- the display, journal and approval options: `demo`, `run` and `resume` (see RunFlags) ------

JournalOption = Annotated[Path | None, typer.Option(
    "--journal", metavar="PATH",
    help="Write the journal here (default: a new file under the user's data directory).")]
UnattendedOption = Annotated[bool, typer.Option(
    "--unattended", help="No human answers: every ask is denied at once (see --auto-approve).")]
TimeoutOption = Annotated[float | None, typer.Option(
    "--approval-timeout", metavar="S", help="Deny an ask nobody answers within S seconds.")]
HeadlessOption = Annotated[bool, typer.Option(
    "--headless", help="No TUI: one line per event (also whenever stdout is not a terminal); "
    "no human answers, so asks follow the unattended rules.")]
ThemeOption = Annotated[str | None, typer.Option(
    "--theme", metavar="NAME", help="Live cockpit theme: cockpit-dark, cockpit-light, "
    "cockpit-high-contrast, one of yours or any the command palette offers (textual-dark, "
    "nord, …) (default: the one chosen last).")]
AutoApproveOption = Annotated[bool, typer.Option(
    "--auto-approve", help="With no human present, allow tiers up to 3; tier 4 (destructive) "
    "stays denied. Without a sandbox on this machine, no command is auto-approved; an ACP "
    "agent's own tools (run by the agent, outside the sandbox): reads only.")]
SandboxOption = Annotated[str | None, typer.Option(
    "--sandbox", metavar="MODE", help="Where commands run: workspace-write (only the workspace "
    "and a private temp dir are writable, no network), read-only, or off (your full access; "
    "shown in a warning colour). Default: $COCKPIT_SANDBOX, else \\[sandbox] mode in "
    "config.toml, else workspace-write.")]
SandboxNetworkOption = Annotated[bool, typer.Option(
    "--sandbox-network", help="Let sandboxed commands use the network (default: \\[sandbox] "
    "network in config.toml, else no network).")]
PolicyOption = Annotated[Path | None, typer.Option(
    "--policy", metavar="FILE", help="An approval policy (TOML: ordered rules by tool, prefix "
    "and tier -> allow, deny or ask), consulted before anyone is asked; tier 4 is never "
    "allowed by it. With --headless, the way to run an agent in CI (see README).")]
CwdOption = Annotated[Path | None, typer.Option(
    "--cwd", metavar="DIR", help="The directory the agent works in (default: here).")]
DetachOption = Annotated[bool, typer.Option(
    "--detach", help="Start the run in the host (started if none runs) and return at once, "
    "printing the run id: it goes on without this terminal; `cockpit attach RUN` watches and "
    "answers it, `cockpit ps` lists it. Its asks wait for an attached client "
    "(--approval-timeout still applies).")]
ViaOption = Annotated[str | None, typer.Option(
    "--via", metavar='"COMMAND"', help="Reach the host through this command's stdin and "
    'stdout instead of this machine\'s socket, e.g. --via "ssh box cockpit host --stdio": the '
    "runs, their agents and sandbox are on the other machine, shown here.")]
ModeOption = Annotated[str | None, typer.Option(
    "--mode", metavar="MODE", help="The cockpit's permission mode to start in (m switches it "
    "in the cockpit): ask (every edit and command asks, with its diff), accept-edits (edits "
    "in the workspace run, commands ask; the default), auto (what the sandbox contains runs "
    "unasked; tier 4 and anything outside it ask; with no sandbox it asks as accept-edits "
    "does), plan (read-only: no edit or command runs). With --agent the cockpit's mode is "
    "mapped to the agent's own where it offers one; any other value is the agent's own mode "
    "id (e.g. default, read-only), an unknown one an error listing the agent's modes.")]
AllowHomeOption = Annotated[bool, typer.Option(
    "--allow-home-workspace", help="Let the workspace be / , your home folder or a folder "
    "holding it (refused otherwise); shell start-up files, ~/.gitconfig, ~/.ssh, ~/.local/bin, "
    "systemd units, autostart and the cockpit's settings then stay read-only for commands and "
    "file tools.")]

# -- what `run --agent` and `resume` ask of an ACP agent beyond the task ------------------------
SettingOption = Annotated[list[str] | None, typer.Option(
    "--option", metavar="KEY=VALUE", help="With --agent: set one of the agent's settings at "
    "start, by its id (e.g. reasoning_effort=high); repeatable. An unknown key or value is an "
    "error listing the valid ones.")]
McpOption = Annotated[list[str] | None, typer.Option(
    "--mcp", metavar="NAME", help="With --agent: give the agent only these MCP servers of "
    "config.toml's \\[mcp_servers.NAME] (repeatable; default: all of them).")]
NoMcpOption = Annotated[bool, typer.Option(
    "--no-mcp", help="With --agent: give the agent no MCP server.")]
EnvOption = Annotated[list[str] | None, typer.Option(
    "--env", metavar="KEY=VALUE", help="With --agent: set this variable for the agent "
    "(repeatable). The agent otherwise gets a filtered environment: the basics, its own key "
    "variables, and config.toml's \\[agents.NAME.env].")]
PassEnvOption = Annotated[list[str] | None, typer.Option(
    "--pass-env", metavar="NAME", help="Pass this variable of your shell on to the commands "
    "the run starts, which otherwise get none that looks like a secret (*KEY*, *TOKEN*, "
    "*SECRET*, *PASSWORD*, cloud credentials, …; also \\[sandbox] pass_env in config.toml), and "
    "with --agent to the agent too (repeatable).")]
AgentStateOption = Annotated[list[Path] | None, typer.Option(
    "--agent-state", metavar="DIR", help="With --agent: a folder (or file) the agent keeps its "
    "own state in, writable for it in the sandbox where the rest of your home is read-only "
    "(repeatable). A catalogue agent already gets its own (see `cockpit agents`); an agent "
    "given as a command gets a private home in cockpit's data folder unless this is given.")]


@dataclass(frozen=True)
class RunFlags:
    """The display, journal and approval options of every command that runs a task."""

    journal: JournalOption = None
    unattended: UnattendedOption = False
    approval_timeout: TimeoutOption = None
    headless: HeadlessOption = False
    auto_approve: AutoApproveOption = False
    policy: PolicyOption = None
    theme: ThemeOption = None
    mode: ModeOption = None


@dataclass(frozen=True)
class AgentFlags:
    """What `run --agent` and `resume` ask of an ACP agent beyond the task (its model aside,
    whose option reads differently in each)."""

    option: SettingOption = None
    mcp: McpOption = None
    no_mcp: NoMcpOption = False
    env: EnvOption = None
    pass_env: PassEnvOption = None
    agent_state: AgentStateOption = None


RUN_FLAGS = RunFlags()
AGENT_FLAGS = AgentFlags()
"""The groups' defaults: a command's parameter for a group defaults to one (`option_groups`
replaces it by the group's own options, each with its default)."""

GROUPS: tuple[type, ...] = (RunFlags, AgentFlags)
"""The option groups a command may take as one parameter."""

F = TypeVar("F", bound=Callable[..., Any])


def option_groups(command: F) -> F:
    """Let a typer command take option groups: a parameter typed as one of `GROUPS` stands, in
    the signature typer reads, for that group's options in its place (so `--help` lists them
    where the parameter is), and the command gets the group built from them."""
    signature = inspect.signature(command, eval_str=True)
    groups: dict[str, type] = {}
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        group = param.annotation
        if group not in GROUPS:
            params.append(param)
            continue
        groups[param.name] = group
        hints = get_type_hints(group, include_extras=True)
        params += [inspect.Parameter(f.name, param.kind, default=f.default,
                                     annotation=hints[f.name]) for f in fields(group)]

    @functools.wraps(command)
    def expanded(**given: Any) -> Any:
        for name, group in groups.items():
            given[name] = group(**{f.name: given.pop(f.name) for f in fields(group)})
        return command(**given)

    signature = signature.replace(parameters=params)
    expanded.__signature__ = signature  # type: ignore[attr-defined]  # what typer reads
    expanded.__annotations__ = {p.name: p.annotation for p in params}
    return expanded  # type: ignore[return-value]  # it stands for `command`, groups expanded


def bare_flags_in_help() -> None:
    """`--help` shows a flag bare (`--headless`), not as `--headless <bool>`: typer 0.2x labels
    every option with its type, and a flag takes no value, so the label reads as if one were
    wanted. Options that take a value keep their metavar (`PATH`, `S`) or type. Called once by
    `cockpit.cli.main`, which builds the app; idempotent."""
    from typer.core import TyperOption

    if getattr(TyperOption.display_type_rich, "bare_flags", False):
        return
    typed = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if self.is_flag and not self.count and self.metavar is None:
            return None
        return typed(self, ctx)

    display_type_rich.bare_flags = True  # type: ignore[attr-defined]  # a marker: patched once
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]  # see above
