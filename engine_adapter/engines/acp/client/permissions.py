"""How an ACP permission request becomes a cockpit approval, and the answer goes back.

- The tool is the call's kind (`execute`, `edit`, `read`, …), so a grant given for an agent's
  `execute` of `git status` covers the same command asked for later — run by the agent itself.
  It never covers a `terminal/create`, which the cockpit runs in its sandbox as the tool
  `terminal` (see `terminal_calls`), nor the other way round: a grant names what it covers.
- The tier never comes from the agent's `kind` alone: the kind's tier (read/search/think 1,
  fetch/switch_mode 2, edit/delete/move/execute and anything unknown 3) and, for every command
  the input carries under any likely key (`command`, `cmd`, `argv`, `script`, `commandLine`,
  …, a string or a list, at any depth), the shell classifier's tier
  (`engine_adapter.shell.classify_command`); the higher wins. So a `read` that runs
  `python3 deploy.py` is tier 3, and `rm -rf`, `sudo`, `git push --force` or a write outside
  the workspace is 4 whatever the kind — tier 4 is never granted and always asks.
- A permission whose input is still empty (opencode and fast-agent send the command later) is
  tier 4: what it will do is unknown, so it is asked, never granted or auto-approved.
- The approval input is the raw input's command as `{"command": str}` or `{"argv": [...]}` (so
  `grant_prefix` can compute what `[a] always` would allow) plus any other key the agent sent,
  which makes the call ungrantable unless it is only descriptive: a grant never covers more
  than the human saw.
- The answer is chosen by option kind, never by option id (ids differ per agent).
- An allowed permission becomes a `Permit` for the rest of the turn, good for one matching
  operation the agent then asks the cockpit to do: an `edit` permission covers one
  `fs/write_text_file` of the content the human saw in its diff (bound by a hash of that
  content, per path: other content, or no diff shown, asks again); an `execute` permission
  covers one `terminal/create` of the same command with no environment and no working
  directory of its own (the human saw neither). `delete` and `move` cover no write.
- A file a permission request named this turn (allowed or not) is the human's call for the rest
  of the turn (`Permits.asked_about`): a write to it runs on its permit only, for the content
  shown, and otherwise asks — accept-edits never runs unasked what the human refused, nor other
  content than they saw.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp.schema import PermissionOption

from engine_adapter.engines.acp.text import clean, clean_json
from engine_adapter.shell import DESTRUCTIVE, classify_command

__all__ = [
    "EMPTY_INPUT",
    "PERMISSION_DENIED",
    "Permit",
    "Permits",
    "agent_auto_max_tier",
    "approval_input",
    "choose_option",
    "command_of",
    "commands_of",
    "content_hash",
    "destructive_reason",
    "in_workspace",
    "is_empty_input",
    "likely_commands",
    "same_command",
    "tier_for",
]

PERMISSION_DENIED = -32001  # our error code for "the cockpit (its human) said no"

_KIND_TIERS = {"read": 1, "search": 1, "think": 1, "fetch": 2, "switch_mode": 2, "edit": 3,
               "delete": 3, "move": 3, "execute": 3, "other": 3}

_COMMAND_KEYS = ("command", "cmd", "argv")

# Keys under which an input may carry something to run, compared lower-case without `_`/`-`
# (`commandLine`, `command_line`, `CMD`): read for the tier only, so too many is harmless.
_LIKELY_KEYS = frozenset({"command", "commands", "cmd", "cmds", "cmdline", "commandline",
                          "argv", "args", "arguments", "script", "scripts", "shell",
                          "shellcommand", "bash", "sh", "zsh", "exec", "execute", "run",
                          "program", "code"})
_KEY_NOISE = re.compile(r"[_\-\s]")
_LINE_CHARS = re.compile(r"[\s;|&<>$`()]")
_MAX_DEPTH = 4
_MAX_COMMANDS = 32  # beyond this many, the input is judged tier 4 unread
# A longer command is judged tier 4 unread: the mapper judges on the event loop, where reading
# a hostile 16 KB line would cost tens of milliseconds (the grant check offloads above this).
_MAX_COMMAND_CHARS = 4_096

EMPTY_INPUT = "its input is empty: what it will do is not known yet"
"""The reason a permission asking with an empty input is tier 4 (asked every time)."""


def likely_commands(raw_input: Any) -> list[str | list[str]] | None:
    """Every command a call's raw input may carry: under any likely key (see `_LIKELY_KEYS`),
    at any depth, or the whole input when it is a bare string or list; a shell line or a list
    (also read as lines, one each). `None` when there are
    too many, or one too long, to judge here: the caller then treats the call as tier 4."""
    found: list[str | list[str]] = []

    def walk(value: Any, depth: int, likely: bool) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(value, dict):
            return all(walk(v, depth + 1, isinstance(k, str) and _KEY_NOISE.sub(
                "", k).lower() in _LIKELY_KEYS) for k, v in value.items())
        if isinstance(value, list):
            words = [v for v in value if isinstance(v, str)]
            if likely and words:
                found.append(words)
                # `["ls", "rm -rf ~"]`: a word that reads as a line of its own is judged so too
                found.extend(w for w in words if _LINE_CHARS.search(w))
            return all(walk(v, depth + 1, likely) for v in value if not isinstance(v, str))
        if likely and isinstance(value, str) and value.strip():
            found.append(value)
        return True

    # A bare string or list as the whole input: that is what it runs, if anything.
    if not walk(raw_input, 0, not isinstance(raw_input, dict)) or len(found) > _MAX_COMMANDS or any(
            len(c) > _MAX_COMMAND_CHARS if isinstance(c, str) else sum(map(len, c))
            > _MAX_COMMAND_CHARS for c in found):
        return None
    return found


def is_empty_input(raw_input: Any) -> bool:
    """Whether a call's raw input says nothing yet: none, or only empty values (`{}`,
    `{"command": ""}`, `{"args": []}`)."""
    if raw_input is None:
        return True
    if isinstance(raw_input, str):
        return not raw_input.strip()
    if isinstance(raw_input, dict):
        return all(is_empty_input(v) for v in raw_input.values())
    if isinstance(raw_input, list):
        return all(is_empty_input(v) for v in raw_input)
    return False  # a number or a boolean is something


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


def tier_for(kind: str | None, raw_input: Any, workspace: str, *,
             asking: bool = False) -> int:
    """The cockpit tier of an agent's tool call of `kind` with `raw_input`: the higher of the
    kind's tier and the shell classifier's tier of every command the input carries (see
    `likely_commands`). `asking`: for a permission request, where an empty input is tier 4."""
    if asking and is_empty_input(raw_input):
        return DESTRUCTIVE
    return max(_KIND_TIERS.get(kind or "other", 3), _command_tier(raw_input, workspace)[0])


def _command_tier(raw_input: Any, workspace: str) -> tuple[int, str | None]:
    """The highest classifier tier among the input's commands (0: none), and its reason."""
    commands = likely_commands(raw_input)
    if commands is None:
        return DESTRUCTIVE, "its input carries more (or longer) commands than are read here"
    tier, reason = 0, None
    for command in commands:
        verdict = classify_command(command, workspace)
        if verdict.tier > tier:
            tier, reason = verdict.tier, verdict.reason
            if tier >= DESTRUCTIVE:
                break
    return tier, reason


def destructive_reason(raw_input: Any, workspace: str, *, asking: bool = False) -> str | None:
    """Why a call is tier 4 ("forced push", an empty input when `asking`, …), or `None`."""
    if asking and is_empty_input(raw_input):
        return EMPTY_INPUT
    tier, reason = _command_tier(raw_input, workspace)
    return reason if tier >= DESTRUCTIVE else None


def agent_auto_max_tier(*, agent_sandboxed: bool) -> int | None:
    """The highest tier `--auto-approve` may allow for a permission the agent asks about its
    own tool (which the agent then runs itself): None (the Session's usual rule, tiers up to 3)
    once the agent process runs in the sandbox, else 1 — reads only: what an agent outside the
    sandbox executes or edits itself is never auto-approved. The one switch for later work."""
    return None if agent_sandboxed else 1


def in_workspace(path: str, workspace: str) -> bool:
    """Whether `path` (relative paths from the workspace; symlinks followed) is the workspace
    or inside it."""
    try:
        full = os.path.realpath(os.path.join(workspace, os.path.expanduser(path)))
        root = os.path.realpath(workspace)
        return full == root or os.path.commonpath([full, root]) == root
    except (OSError, ValueError):
        return False


def content_hash(text: str) -> str:
    """The hash an edit permit is bound to: the content the human saw (SHA-256 of its
    UTF-8)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
    if command is not None and workspace is not None:
        # opencode names the workspace as the location of every call: a location equal to it
        # or inside it tells the human nothing a grant must judge (the row still shows it).
        locations = [loc for loc in locations if not in_workspace(loc, workspace)]
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
    """A permission the agent got in this turn, good for one matching fs write or command.
    `contents`: per real path, the hash of the content the human saw for it (an edit's
    diff); `call_id` the tool call it was asked for."""

    kind: str
    command: str | list[str] | None
    paths: set[str] = field(default_factory=set)
    contents: dict[str, str] = field(default_factory=dict)
    call_id: str = ""


class Permits:
    """The permits of the current turn (see the module docstring); each is used up once."""

    def __init__(self) -> None:
        self._items: list[Permit] = []
        self._asked: set[str] = set()  # real paths a permission request named this turn

    def clear(self) -> None:
        """A new turn: nothing granted before covers anything any more."""
        self._items.clear()
        self._asked.clear()

    def asked_for(self, reals: Sequence[str]) -> None:
        """A permission request names the real paths `reals` (its locations, input paths and
        diffs inside the workspace): each is the human's call for the rest of the turn,
        whatever they answer."""
        self._asked.update(reals)

    def asked_about(self, real: str) -> bool:
        """Whether a permission request of this turn named the real path `real`."""
        return real in self._asked

    def add(self, kind: str, raw_input: Any, locations: Sequence[str],
            resolve: Callable[[str], str], *, shown: Sequence[tuple[str, str]] = (),
            call_id: str = "") -> None:
        """Record an allowed permission of `kind`; `resolve` maps a path to its real path
        inside the workspace (raising for one outside, which is then not covered); `shown` is
        `(path, content_hash(new content))` of each diff the human was shown: only such a
        write is covered."""
        paths = list(locations)
        if isinstance(raw_input, dict):
            paths += [v for k in _PATH_KEYS if isinstance(v := raw_input.get(k), str)]
        real: set[str] = set()
        for path in paths:
            try:
                real.add(resolve(path))
            except Exception:  # outside the workspace or unresolvable: covers nothing
                continue
        contents: dict[str, str] = {}
        for path, digest in shown:
            try:
                contents[resolve(path)] = digest
            except Exception:  # outside the workspace: covers nothing
                continue
        self._items.append(Permit(kind, command_of(raw_input), real, contents, call_id))

    def revoke(self, call_id: str) -> None:
        """The call's input changed after it was allowed: its permits cover nothing now."""
        self._items = [p for p in self._items if not (call_id and p.call_id == call_id)]

    def _take(self, test: Callable[[Permit], bool]) -> Permit | None:
        for permit in self._items:
            if test(permit):
                self._items.remove(permit)
                return permit
        return None

    def take_write(self, real: str, content: str) -> Permit | None:
        """The `edit` permit whose diff showed exactly `content` for `real`, used up; `None` if
        there is none (a permit naming the path without showing this content covers
        nothing)."""
        digest = content_hash(content)
        return self._take(lambda p: p.kind == "edit" and p.contents.get(real) == digest)

    def take_command(self, argv: Sequence[str]) -> Permit | None:
        """The `execute` permit for exactly `argv`, used up; `None` if there is none. Call it
        only for a command with no env and no cwd of its own."""
        return self._take(lambda p: p.kind == "execute" and p.command is not None and (
            same_command(p.command, argv) or same_command(p.command, shlex.join(argv))))
