"""Telling from a failed command's output that the sandbox stopped it: a write refused outside
the writable places ("write to /etc/x"), a read of a masked place ("read ~/.ssh/id_rsa"), a
unix socket ("connect to /tmp/tmux-0/default"), or a network that is not there ("network").

Read only for a command that ran sandboxed and failed. The words are what the tools print for
EROFS (`Read-only file system`, which inside the sandbox can only be the sandbox), for EACCES and
EPERM on a path outside the writable places, and for a missing network (resolver and connect
errors). A path is named when the line holds one; the answer is a few plain words, never the
output itself (it is untrusted and may be long).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

__all__ = ["blocked_by_sandbox"]

_SCAN_CHARS = 64_000  # the tail of a long output is where the failure is
_SCAN_LINES = 20  # error lines looked at closely (each costs a few regex passes)
_EROFS = "Read-only file system"
_BUSY = "Device or resource busy"  # a rename onto a file kept read-only by a bind mount
_DENIED = ("Permission denied", "Operation not permitted")
_IN_THE_WAY = ("File exists", "Is a directory")  # making a file where a mask stands
_NETWORK = tuple(words.lower() for words in (  # what resolvers and connects say, lower case
    "Network is unreachable", "Temporary failure in name resolution", "Could not resolve",
    "Name or service not known", "No address associated with hostname", "getaddrinfo",
    "nodename nor servname", "unable to resolve", "EAI_AGAIN", "ENOTFOUND", "ENETUNREACH",
    "Connection refused", "ECONNREFUSED", "No route to host",
    "Failed to establish a new connection", "Couldn't connect to server"))
# A path in a line: quoted ('…', ‘…’, "…", `…'), or a bare word that starts like a path.
_QUOTED = re.compile(r"""'([^'\n]+)'|‘([^’\n]+)’|"([^"\n]+)"|`([^'`\n]+)'""")
_BARE = re.compile(r"(?<![\w.])((?:~|\.\.?)?/[^\s:'\"`,;]*)")
_SOCKET = re.compile(r"socket|connect", re.IGNORECASE)
_EPERM_CONNECT = re.compile(r"\bconnect E(?:PERM|ACCES) (\S+)")
_REMOVE = re.compile(r"cannot remove|unlink|rmdir|remove", re.IGNORECASE)
_PATH_CHARS = 300


def _path_in(line: str, at: int, end: int) -> str | None:
    """The path in `line` nearest the error words at `at:end` (`sh: cannot create /x: …`
    names the shell first; Python names the path after the words)."""
    found: list[tuple[int, str]] = []
    for match in _QUOTED.finditer(line):
        text = next(group for group in match.groups() if group is not None)
        if text.strip():
            found.append((_distance(match.start(), match.end(), at, end), text))
    for match in _BARE.finditer(line):
        found.append((_distance(match.start(), match.end(), at, end), match.group(1)))
    return min(found, key=lambda pair: pair[0])[1] if found else None


def _distance(start: int, stop: int, at: int, end: int) -> int:
    return at - stop if stop <= at else max(0, start - end)


def _named(line: str, relative: str) -> bool:
    """Whether `line` names `relative` (`.git`) as a word of its own (not `.gitignore`)."""
    return re.search(rf"(?<![\w./-]){re.escape(relative)}(?![\w.-])", line) is not None


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _where(raw: str, cwd: str) -> str:
    expanded = os.path.expanduser(raw)
    return os.path.normpath(os.path.join(cwd, expanded))


def _clip(path: str) -> str:
    if len(path) <= _PATH_CHARS and path.isprintable():
        return path
    shown = "".join(ch if ch.isprintable() else "?" for ch in path[:_PATH_CHARS])
    return shown + ("…" if len(path) > _PATH_CHARS else "")


def blocked_by_sandbox(output: str, *, cwd: str, writable: Sequence[str],
                       network: bool, masked: Sequence[str] = ()) -> str | None:
    """What the sandbox stopped, judging by `output` ("write to /etc/x", "delete /x/y",
    "read /home/u/.ssh/id_rsa", "connect to a unix socket", "a write outside the workspace",
    "network"), or None when nothing points to it.

    `writable`: the places that were writable (absolute); `masked`: the places hidden (reads
    fail there); `network`: whether it was allowed."""
    text = output[-_SCAN_CHARS:]
    looked = 0
    errors = (_EROFS, _BUSY, *_DENIED, *(_IN_THE_WAY if masked else ()))
    lines = text.splitlines() if any(words in text for words in (*errors, "EPERM")) else []
    for index, line in enumerate(lines):
        words = next((w for w in errors if w in line), None)
        if words is None:
            refused = _EPERM_CONNECT.search(line)  # node: "connect EPERM /tmp/x.sock"
            if refused:
                return f"connect to {_clip(refused.group(1))}"
            continue
        looked += 1
        if looked > _SCAN_LINES:
            break
        erofs = words in (_EROFS, _BUSY)
        at = line.index(words)
        raw = _path_in(line, at, at + len(words))
        where = _where(raw, cwd) if raw else None
        if words in _IN_THE_WAY:  # a mask in the way of a new file: only on a masked path
            named = where if where is not None and _inside(where, masked) else next(
                (path for path in masked if path in line
                 or _named(line, os.path.relpath(path, cwd))), None)
            if named is not None:
                return f"write to {_clip(named)}"
            continue
        if not erofs and where is not None and _inside(where, masked):
            return f"read {_clip(where)}"
        if words == _DENIED[1] and _SOCKET.search(line):
            return f"connect to {_clip(where)}" if where else "connect to a unix socket"
        if words == _DENIED[1] and _SOCKET.search(" ".join(lines[max(0, index - 2):index])):
            return "connect to a unix socket"  # a traceback names the call a line above
        if not erofs and (where is None or _inside(where, writable)):
            continue  # an ordinary permission problem, the same without a sandbox
        verb = "delete" if _REMOVE.search(line) else "write to"
        return f"{verb} {_clip(where)}" if where else "a write outside the writable places"
    if not network:
        lowered = text.lower()
        if any(words in lowered for words in _NETWORK):
            return "network"
    return None
