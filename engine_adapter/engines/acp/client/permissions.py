"""How an ACP permission request becomes a cockpit approval, and the answer goes back.

- The tool is the call's kind (`execute`, `edit`, `read`, …), so a grant given for an agent's
  `execute` of `git status` also covers the same command asked for later, or run through
  `terminal/create`.
- The tier comes from the kind: read/search/think 1, fetch/switch_mode 2, edit/delete/move/
  execute (and anything unknown) 3, and 4 for a command the shell classifier
  (`engine_adapter.shell.classify_command`) calls destructive (`rm -rf`, `sudo`,
  `git push --force`, writes outside the workspace, …) — tier 4 is never granted and always
  asks.
- The approval input is the raw input's command as `{"command": str}` or `{"argv": [...]}` (so
  `grant_prefix` can compute what `[a] always` would allow) plus any other key the agent sent,
  which makes the call ungrantable unless it is only descriptive: a grant never covers more
  than the human saw.
- The answer is chosen by option kind, never by option id (ids differ per agent).
- An allowed permission becomes a `Permit` for the rest of the turn, good for one matching
  operation the agent then asks the cockpit to do: an `edit` permission naming a path covers
  one `fs/write_text_file` to it (whose row still shows the diff); an `execute` permission
  covers one `terminal/create` of the same command with no environment and no working
  directory of its own (the human saw neither). `delete` and `move` cover no write.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp.schema import PermissionOption

from engine_adapter.engines.acp.text import clean, clean_json
from engine_adapter.shell import DESTRUCTIVE, classify_command

__all__ = [
    "PERMISSION_DENIED",
    "Permit",
    "Permits",
    "approval_input",
    "choose_option",
    "command_of",
    "commands_of",
    "destructive_reason",
    "same_command",
    "tier_for",
]

PERMISSION_DENIED = -32001  # our error code for "the cockpit (its human) said no"

_KIND_TIERS = {"read": 1, "search": 1, "think": 1, "fetch": 2, "switch_mode": 2, "edit": 3,
               "delete": 3, "move": 3, "execute": 3, "other": 3}

_COMMAND_KEYS = ("command", "cmd", "argv")


def commands_of(raw_input: Any) -> list[str | list[str]]:
    """Every command a call's raw input names (a shell line or an argv list per key)."""
    if not isinstance(raw_input, dict):
        return []
    found: list[str | list[str]] = []
    for key in _COMMAND_KEYS:
        value = raw_input.get(key)
        if isinstance(value, str) and value.strip():
            found.append(value)
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            found.append(list(value))
    return found


def command_of(raw_input: Any) -> str | list[str] | None:
    """The command a call's raw input runs: a shell line, an argv list, or `None` — also when
    it names several (`command` and `cmd`): which one the agent runs is unknown."""
    commands = commands_of(raw_input)
    return commands[0] if len(commands) == 1 else None


def tier_for(kind: str | None, raw_input: Any, workspace: str) -> int:
    """The cockpit tier of an agent's tool call of `kind` with `raw_input`: the kind's tier,
    or 4 when its command is destructive (the shell classifier decides)."""
    tier = _KIND_TIERS.get(kind or "other", 3)
    if any(classify_command(command, workspace).tier >= DESTRUCTIVE
           for command in commands_of(raw_input)):
        return DESTRUCTIVE
    return tier


def destructive_reason(raw_input: Any, workspace: str) -> str | None:
    """Why a call's command is tier 4 ("forced push", …), or `None` if it is not."""
    for command in commands_of(raw_input):
        verdict = classify_command(command, workspace)
        if verdict.tier >= DESTRUCTIVE:
            return verdict.reason
    return None


def approval_input(raw_input: Any, *, locations: Sequence[str] = (),
                   workspace: str | None = None) -> dict[str, Any]:
    """The input an approval shows (and `grant_prefix` judges) for a call's raw input.

    A command becomes `command` (a shell line) or `argv` (a list); a `cwd` equal to the
    workspace is dropped (the human loses nothing); every other key stays, cleaned and capped.
    An input naming several commands (`command` and `cmd`) keeps them all as sent: the human
    sees both, and a grant covers neither.
    """
    data: dict[str, Any] = dict(clean_json(raw_input)) if isinstance(raw_input, dict) else (
        {} if raw_input is None else {"input": clean_json(raw_input)})
    command = command_of(raw_input)
    if command is not None:
        for key in ("command", "cmd", "argv"):
            data.pop(key, None)
        if isinstance(command, str):
            data["command"] = clean(command, 8192)
        else:
            data["argv"] = [clean(word, 8192) for word in command]
        cwd = data.get("cwd")
        if (workspace is not None and isinstance(cwd, str)
                and os.path.realpath(cwd) == os.path.realpath(workspace)):
            del data["cwd"]
    if locations and not any(k in data for k in ("path", "file_path", "locations")):
        data["locations"] = list(locations)
    return data


def _argv(command: str | Sequence[str]) -> tuple[str, ...] | None:
    if not isinstance(command, str):
        return tuple(command)
    try:
        return tuple(shlex.split(command))
    except ValueError:
        return None


def same_command(a: str | Sequence[str], b: str | Sequence[str]) -> bool:
    """Whether two spellings of a command run the same argv (`"ls -la"` vs `["ls", "-la"]`)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.strip() == b.strip()
    left, right = _argv(a), _argv(b)
    return left is not None and left == right


def choose_option(options: Sequence[PermissionOption], *, allowed: bool, remembered: bool,
                  forward_always: bool = False) -> PermissionOption | None:
    """The agent's option that carries the cockpit's decision, chosen by kind, or `None`.

    Allowed: `allow_once` — or `allow_always` when the human granted "always" and
    `forward_always` is set (the agent then stops asking for what *it* considers the same,
    which may be more than the cockpit's grant covers, so it is off by default: the cockpit's
    grant answers the next request itself). An agent offering no `allow_once` gets
    `allow_always` only if the human said "always"; otherwise `None` (answer "cancelled"):
    never allow more than the human did.
    Denied: `reject_once`, else `reject_always` (refusing more is always safe); else `None`.
    """
    by_kind: dict[str, PermissionOption] = {}
    for option in options:
        by_kind.setdefault(option.kind, option)
    if allowed:
        if remembered and forward_always and "allow_always" in by_kind:
            return by_kind["allow_always"]
        if "allow_once" in by_kind:
            return by_kind["allow_once"]
        return by_kind.get("allow_always") if remembered else None
    return by_kind.get("reject_once") or by_kind.get("reject_always")


_PATH_KEYS = ("path", "file_path", "filePath", "abs_path", "target", "destination")


@dataclass
class Permit:
    """A permission the agent got in this turn, good for one matching fs write or command."""

    kind: str
    command: str | list[str] | None
    paths: set[str] = field(default_factory=set)


class Permits:
    """The permits of the current turn (see the module docstring); each is used up once."""

    def __init__(self) -> None:
        self._items: list[Permit] = []

    def clear(self) -> None:
        """A new turn: nothing granted before covers anything any more."""
        self._items.clear()

    def add(self, kind: str, raw_input: Any, locations: Sequence[str],
            resolve: Callable[[str], str]) -> None:
        """Record an allowed permission of `kind`; `resolve` maps a path to its real path
        inside the workspace (raising for one outside, which is then not covered)."""
        paths = list(locations)
        if isinstance(raw_input, dict):
            paths += [v for k in _PATH_KEYS if isinstance(v := raw_input.get(k), str)]
        real: set[str] = set()
        for path in paths:
            try:
                real.add(resolve(path))
            except Exception:  # outside the workspace or unresolvable: covers nothing
                continue
        self._items.append(Permit(kind, command_of(raw_input), real))

    def _take(self, test: Callable[[Permit], bool]) -> Permit | None:
        for permit in self._items:
            if test(permit):
                self._items.remove(permit)
                return permit
        return None

    def take_write(self, real: str) -> Permit | None:
        """The `edit` permit naming `real`, used up; `None` if there is none."""
        return self._take(lambda p: p.kind == "edit" and real in p.paths)

    def take_command(self, argv: Sequence[str]) -> Permit | None:
        """The `execute` permit for exactly `argv`, used up; `None` if there is none. Call it
        only for a command with no env and no cwd of its own."""
        return self._take(lambda p: p.kind == "execute" and p.command is not None and (
            same_command(p.command, argv) or same_command(p.command, shlex.join(argv))))
