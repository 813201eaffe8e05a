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
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from typing import Any

from ...shell import DESTRUCTIVE, classify_command
from .text import clean, clean_json

__all__ = [
    "approval_input",
    "choose_option",
    "command_of",
    "destructive_reason",
    "same_command",
    "tier_for",
]

_KIND_TIERS = {"read": 1, "search": 1, "think": 1, "fetch": 2, "switch_mode": 2, "edit": 3,
               "delete": 3, "move": 3, "execute": 3, "other": 3}

def command_of(raw_input: Any) -> str | list[str] | None:
    """The command a call's raw input runs: a shell line, an argv list, or `None`."""
    if not isinstance(raw_input, dict):
        return None
    for key in ("command", "cmd", "argv"):
        value = raw_input.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return list(value)
    return None


def tier_for(kind: str | None, raw_input: Any, workspace: str) -> int:
    """The cockpit tier of an agent's tool call of `kind` with `raw_input`: the kind's tier,
    or 4 when its command is destructive (the built-in engine's shell classifier decides)."""
    tier = _KIND_TIERS.get(kind or "other", 3)
    command = command_of(raw_input)
    if command is not None and classify_command(command, workspace).tier >= DESTRUCTIVE:
        return DESTRUCTIVE
    return tier


def destructive_reason(raw_input: Any, workspace: str) -> str | None:
    """Why a call's command is tier 4 ("forced push", …), or `None` if it is not."""
    command = command_of(raw_input)
    if command is None:
        return None
    verdict = classify_command(command, workspace)
    return verdict.reason if verdict.tier >= DESTRUCTIVE else None


def approval_input(raw_input: Any, *, locations: Sequence[str] = (),
                   workspace: str | None = None) -> dict[str, Any]:
    """The input an approval shows (and `grant_prefix` judges) for a call's raw input.

    A command becomes `command` (a shell line) or `argv` (a list); a `cwd` equal to the
    workspace is dropped (the human loses nothing); every other key stays, cleaned and capped.
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


def choose_option(options: Sequence[Any], *, allowed: bool, remembered: bool,
                  forward_always: bool = False) -> Any | None:
    """The agent's option that carries the cockpit's decision, chosen by kind, or `None`.

    Allowed: `allow_once` — or `allow_always` when the human granted "always" and
    `forward_always` is set (the agent then stops asking for what *it* considers the same,
    which may be more than the cockpit's grant covers, so it is off by default: the cockpit's
    grant answers the next request itself). An agent offering no `allow_once` gets
    `allow_always` only if the human said "always"; otherwise `None` (answer "cancelled"):
    never allow more than the human did.
    Denied: `reject_once`, else `reject_always` (refusing more is always safe); else `None`.
    """
    by_kind: dict[str, Any] = {}
    for option in options:
        by_kind.setdefault(getattr(option, "kind", None), option)
    if allowed:
        if remembered and forward_always and "allow_always" in by_kind:
            return by_kind["allow_always"]
        if "allow_once" in by_kind:
            return by_kind["allow_once"]
        return by_kind.get("allow_always") if remembered else None
    return by_kind.get("reject_once") or by_kind.get("reject_always")
