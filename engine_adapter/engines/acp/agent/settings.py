"""An agent's session settings: its `configOptions` and session modes read from its answers,
the human's wishes (`--model`, `--mode`, `--option KEY=VALUE`, the command palette) checked
against what it offers, and set (`session/set_config_option`, `session/set_mode`).

A wish the agent does not offer is an error naming what it does offer: the human sees the valid
values, never a silent fallback. Everything the agent sends here is untrusted: names and values
are cleaned and capped before they become events.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from acp.client.connection import ClientSideConnection
from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectGroup,
    SessionConfigSelectOption,
    SessionModeState,
)

from engine_adapter.engines.acp.agent.setup import Wanted
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import AgentChoice, AgentMode, AgentOption

__all__ = [
    "NEVER_MAPPED",
    "ConfigOption",
    "SettingError",
    "Step",
    "agent_mode_for",
    "apply_step",
    "modes_from_acp",
    "options_from_acp",
    "parse_bool",
    "plan_settings",
]

ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean
"""One of an agent's `configOptions`, as the SDK reads it."""

MAX_OPTIONS = 64  # settings kept of one agent's answer
MAX_CHOICES = 500  # values kept of one select setting
_TRUE = {"true", "on", "yes", "1"}
_FALSE = {"false", "off", "no", "0"}


class SettingError(ValueError):
    """A setting the agent does not offer, or a value it does not take; the message lists what
    it does offer."""


def _choices(raw: list[SessionConfigSelectOption] | list[SessionConfigSelectGroup]
             ) -> list[AgentChoice]:
    found: list[AgentChoice] = []
    for entry in raw:
        group = entry.options if isinstance(entry, SessionConfigSelectGroup) else [entry]
        for choice in group:
            if len(found) < MAX_CHOICES:
                found.append(AgentChoice(value=clean(choice.value, 200),
                                         name=clean(choice.name or "", 200)))
    return found


def options_from_acp(config_options: Iterable[ConfigOption] | None) -> list[AgentOption]:
    """The agent's `configOptions` (select and boolean ones) as `AgentOption`s."""
    options = []
    for raw in list(config_options or [])[:MAX_OPTIONS]:
        option_id, name = clean(raw.id, 200), clean(raw.name or "", 200)
        # A category the SDK does not know is not a word (it reads it as a dict): dropped.
        category = clean(raw.category, 100) if isinstance(raw.category, str) else None
        if isinstance(raw, SessionConfigOptionBoolean):
            options.append(AgentOption(id=option_id, name=name, kind="boolean",
                                       category=category, value=raw.current_value))
        else:
            options.append(AgentOption(id=option_id, name=name, kind="select",
                                       category=category, value=clean(raw.current_value, 200),
                                       choices=_choices(raw.options)))
    return options


def modes_from_acp(modes: SessionModeState | None) -> tuple[list[AgentMode], str | None]:
    """The agent's session modes and the current one (`([], None)` when it has none)."""
    if modes is None:
        return [], None
    offered = [AgentMode(id=clean(m.id, 200), name=clean(m.name, 200))
               for m in list(modes.available_modes)[:MAX_OPTIONS]]
    return offered, clean(modes.current_mode_id, 200)


_MODE_MATCHES: dict[str, tuple[str, ...]] = {
    "ask": ("default", "ask", "always ask"),
    "accept-edits": ("acceptedits", "accept-edits", "accept_edits", "accept edits"),
    # auto: the agent still asks for its commands; the cockpit's gate allows what the sandbox
    # contains. Never an agent mode that runs everything unasked.
    "auto": ("acceptedits", "accept-edits", "accept_edits", "accept edits"),
    "plan": ("plan", "plan mode", "read-only", "readonly", "read only"),
}
NEVER_MAPPED = frozenset({"bypasspermissions", "bypass permissions", "full-access",
                          "full access", "dontask", "yolo"})
"""Agent modes the cockpit never sets for one of its own: each lets the agent run what it
likes without asking, past the cockpit's gate (the human may still choose one with --mode)."""


def agent_mode_for(mode: str, modes: Sequence[AgentMode]) -> str | None:
    """The agent's own mode id that matches the cockpit's `mode` (by id, else by name, any
    case: claude-agent-acp's `default`, `acceptEdits`, `plan`), or None when it offers none.
    Never one of `NEVER_MAPPED`."""
    wanted = _MODE_MATCHES.get(mode, ())
    for key in ("id", "name"):
        for word in wanted:
            for offered in modes:
                value = getattr(offered, key).casefold()
                if value == word and offered.id.casefold() not in NEVER_MAPPED \
                        and offered.name.casefold() not in NEVER_MAPPED:
                    return offered.id
    return None


def parse_bool(text: str) -> bool | None:
    """`true`/`on`/`yes`/`1` or `false`/`off`/`no`/`0` (any case), else None."""
    word = text.strip().lower()
    return True if word in _TRUE else False if word in _FALSE else None


@dataclass(frozen=True)
class Step:
    """One setting to make: a session mode (`kind` "mode") or an option's value."""

    kind: Literal["mode", "option"]
    id: str
    value: str | bool
    asked: str  # how the human asked for it, for messages ("--model gpt-5")
    mode: str | None = None  # the session mode this makes current (a mode option's value)


def _listing(values: Sequence[str], limit: int = 30) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f", … ({len(values) - limit} more)" if len(values) > limit else "") \
        if values else "none"


def _offered(options: Sequence[AgentOption], modes: Sequence[AgentMode]) -> str:
    names = [o.id for o in options]
    if modes:
        names.append("mode (--mode)")
    return _listing(names)


def _select(option: AgentOption, value: str, asked: str) -> str:
    """The value of `option` that `value` names (by value, else by name, any case)."""
    for choice in option.choices:
        if choice.value == value:
            return choice.value
    folded = value.casefold()
    for choice in option.choices:
        if choice.value.casefold() == folded or (choice.name and choice.name.casefold() == folded):
            return choice.value
    raise SettingError(f"{asked}: the agent does not offer {value!r} for {option.id}; valid "
                       f"values: {_listing([c.value for c in option.choices])}")


def _option_step(option: AgentOption, value: str, asked: str) -> Step:
    if option.kind == "boolean":
        flag = parse_bool(value)
        if flag is None:
            raise SettingError(f"{asked}: {option.id} is on or off; valid values: true, false")
        return Step("option", option.id, flag, asked)
    return Step("option", option.id, _select(option, value, asked), asked)


def _find(options: Sequence[AgentOption], key: str) -> AgentOption | None:
    for option in options:
        if option.id == key:
            return option
    folded = key.casefold()
    return next((o for o in options if o.id.casefold() == folded
                 or (o.name and o.name.casefold() == folded)), None)


def _mode_step(wanted: str, options: Sequence[AgentOption], modes: Sequence[AgentMode]) -> Step:
    """The step to the mode `wanted`: by the agent's mode setting where it has one that offers
    it (ACP: clients use config options in place of modes; `set_mode` would leave the setting
    showing the old mode), else by its session modes."""
    asked = f"--mode {wanted}"
    folded = wanted.casefold()
    mode = next((m for m in modes if m.id == wanted), None) or next(
        (m for m in modes if m.id.casefold() == folded or m.name.casefold() == folded), None)
    option = next((o for o in options if o.category == "mode"), None)
    if option is not None:
        try:
            step = _option_step(option, wanted, asked)
        except SettingError:
            if mode is None:
                raise
        else:
            same = step.value if isinstance(step.value, str) and any(
                m.id == step.value for m in modes) else None
            return Step("option", step.id, step.value, asked, mode=same)
    if mode is not None:
        return Step("mode", mode.id, mode.id, asked)
    if modes:
        raise SettingError(f"{asked}: the agent has no such mode; valid modes: "
                           f"{_listing([m.id for m in modes])}")
    raise SettingError(f"{asked}: the agent offers no modes; its settings: "
                       f"{_offered(options, modes)}")


def plan_settings(wanted: Wanted, options: Sequence[AgentOption],
                  modes: Sequence[AgentMode]) -> list[Step]:
    """The steps that make `wanted` true of a session offering `options` and `modes`; raises
    `SettingError` (listing what is offered) for anything it does not offer."""
    steps: list[Step] = []
    if wanted.model is not None:
        asked = f"--model {wanted.model}"
        option = next((o for o in options if o.category == "model"), None) or _find(options,
                                                                                    "model")
        if option is None:
            raise SettingError(f"{asked}: the agent offers no model setting; its settings: "
                               f"{_offered(options, modes)}")
        steps.append(_option_step(option, wanted.model, asked))
    if wanted.mode is not None:
        steps.append(_mode_step(wanted.mode, options, modes))
    for key, value in wanted.options:
        asked = f"--option {key}={value}"
        option = _find(options, key)
        if option is None:
            raise SettingError(f"{asked}: the agent has no setting {key!r}; its settings: "
                               f"{_offered(options, modes)}")
        steps.append(_option_step(option, value, asked))
    return steps


async def apply_step(conn: ClientSideConnection, session_id: str,
                     step: Step) -> list[AgentOption] | None:
    """Make one setting; returns the agent's settings as they now stand when it says (a mode
    change returns None: the agent reports it with `current_mode_update`)."""
    if step.kind == "mode":
        await conn.set_session_mode(session_id=session_id, mode_id=step.id)
        return None
    response = await conn.set_config_option(config_id=step.id, session_id=session_id,
                                            value=step.value)
    return options_from_acp(response.config_options)
