"""Another tool's session file, recognised: so that `cockpit replay`, `export`, `verify` and the
journal picker say what a file is and how to view it, instead of "not a journal" or "crashed?".

Recognised from the first bytes only (`HEAD_BYTES`, never the whole file), by the shape of their
records, never by the file's name alone:

- Claude Code's session JSONL (`~/.claude/projects/<dir>/<id>.jsonl`): records with `type`
  `user` / `assistant` / `system` / `summary`, a `uuid` and the `sessionId`.
- Codex's rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`): `session_meta`,
  `response_item`, `event_msg`, `turn_context` records around a `payload`; older ones open
  with a bare `{"id", "timestamp", "instructions"}` line, then `message` / `record_type` items.
- Gemini CLI's saved chats: a session (`chats/session-….json`: `sessionId`, `projectHash`,
  `messages`; or its newer JSON Lines) and a checkpoint (`checkpoint-TAG.json`, saved with
  `/chat save TAG`: a list of `{role, parts}`).
- inspect_ai's logs: `.eval` (a zip holding `header.json` and `_journal/`) and `.json` (an
  object opening with `version` and `status`, holding `eval`).

A file is never called foreign when any line of its head is a cockpit event (`seq`,
`session_id`, `ts` and a `type`). Values taken from the file (a session id, a directory) are
untrusted: kept only when they are short and plain (`readable`), else left out of the hint.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass
from typing import Any

__all__ = ["HEAD_BYTES", "ForeignSession", "detect_foreign", "detect_foreign_bytes", "readable"]

HEAD_BYTES = 256 * 1024
"""Bytes of a file's head read to recognise it."""
_LINES = 64  # records of a JSON Lines head looked at
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
_DIR = re.compile(r"/[^\x00-\x1f\x7f'\"`$\\;|&<>*?!\u2028\u2029]{0,1000}")
_CLAUDE_TYPES = {"user", "assistant", "system", "summary"}
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}


@dataclass(frozen=True)
class ForeignSession:
    """What a file is: the `tool` that wrote it, `what` it is ("a Claude Code session"),
    the catalogue `agent` that can replay it over ACP (None: none), the session's id and
    directory when the file names them readably, and `other`: how to view it otherwise."""

    tool: str
    what: str
    agent: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    other: str | None = None

    def hint(self) -> str:
        """How to view it: the cockpit command (the id and directory filled in when known),
        else the tool's own way."""
        if self.agent is not None:
            session = self.session_id or "ID"
            where = f" --cwd {shlex.quote(self.cwd)}" if self.cwd else ""
            text = f"`cockpit replay --agent {self.agent} --session {session}{where}`"
            if self.session_id is None:
                text += (f" (its id is not readable here: `cockpit sessions --agent "
                         f"{self.agent}` lists them)")
            return text + (f", or {self.other}" if self.other else "")
        return self.other or "the tool that wrote it"

    def message(self, shown: str) -> str:
        """The one line `cockpit replay` and the others print for the file `shown`."""
        return f"{shown} is {self.what}, not a cockpit journal; view it with {self.hint()}"


def readable(value: Any, pattern: re.Pattern[str] = _ID) -> str | None:
    """`value` when it is a string short and plain enough to print inside a command, else None."""
    return value if isinstance(value, str) and pattern.fullmatch(value) else None


def _objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects among the first lines of `text` (other lines skipped; the last one,
    perhaps cut by the head's limit, too)."""
    found = []
    for line in text.split("\n")[:_LINES]:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _kind(record: dict[str, Any], key: str = "type") -> str | None:
    """`record[key]` when it is a string (a record of any shape: a list there is no crash)."""
    value = record.get(key)
    return value if isinstance(value, str) else None


def _is_event(record: dict[str, Any]) -> bool:
    return all(key in record for key in ("type", "seq", "session_id", "ts"))


def _claude(records: list[dict[str, Any]]) -> ForeignSession | None:
    ours = [r for r in records if _kind(r) in _CLAUDE_TYPES
            and ("uuid" in r or "leafUuid" in r)]
    with_session = [r for r in ours if "sessionId" in r]
    if not with_session:
        return None
    first = with_session[0]
    return ForeignSession(tool="Claude Code", what="a Claude Code session", agent="claude",
                          session_id=readable(first.get("sessionId")),
                          cwd=readable(first.get("cwd"), _DIR))


def _codex(records: list[dict[str, Any]]) -> ForeignSession | None:
    framed = [r for r in records if _kind(r) in _CODEX_TYPES
              and isinstance(r.get("payload"), dict)]
    if framed:
        meta: dict[str, Any] = next(
            (r["payload"] for r in framed if _kind(r) == "session_meta"), {})
        return ForeignSession(tool="Codex", what="a Codex session (rollout)", agent="codex",
                              session_id=readable(meta.get("id")),
                              cwd=readable(meta.get("cwd"), _DIR))
    head = records[0] if records else {}
    older = [r for r in records[1:] if _kind(r, "record_type") == "state"
             or (_kind(r) == "message" and "role" in r)]
    if {"id", "timestamp"} <= head.keys() and ("instructions" in head or older):
        return ForeignSession(tool="Codex",
                              what="a Codex session (rollout, an older format)",
                              agent="codex", session_id=readable(head.get("id")))
    return None


def _gemini_lines(records: list[dict[str, Any]]) -> ForeignSession | None:
    for record in records:
        if "sessionId" in record and ("projectHash" in record or _kind(record) in (
                "gemini", "user", "info", "error")) and "uuid" not in record:
            return _gemini(record.get("sessionId"))
    return None


def _json_document(text: str, name: str) -> ForeignSession | None:
    """A whole-file JSON document (Gemini's session or checkpoint, inspect_ai's .json log),
    recognised from its head: parsed when it is complete, else by its opening keys."""
    stripped = text.lstrip()
    try:
        value: Any = json.loads(stripped)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        if "sessionId" in value and "messages" in value:
            return _gemini(value.get("sessionId"))
        if "eval" in value and "version" in value and "status" in value:
            return _inspect("an inspect_ai evaluation log (.json)")
    opening = stripped[:4096]
    if (isinstance(value, list) and value and all(
            isinstance(v, dict) and "role" in v and "parts" in v for v in value[:50])) or (
            value is None and re.match(r'\[\s*\{\s*"role"\s*:\s*"[a-z]{1,20}"\s*,\s*"parts"',
                                       opening)):
        return _checkpoint(name)
    if value is None:  # cut by the head's limit: its opening keys say what it is
        if re.match(r'\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:', opening) and \
                '"eval"' in stripped:
            return _inspect("an inspect_ai evaluation log (.json)")
        match = re.match(r'\{\s*"sessionId"\s*:\s*"([^"\\]{0,200})"', opening)
        if match and '"messages"' in stripped:
            return _gemini(match.group(1))
    return None


def _gemini(session_id: Any) -> ForeignSession:
    return ForeignSession(tool="Gemini CLI", what="a Gemini CLI chat session", agent="gemini",
                          session_id=readable(session_id))


def _checkpoint(name: str) -> ForeignSession:
    """Gemini CLI's `/chat save TAG` file (`checkpoint-TAG.json`): no session id, its tag."""
    tag = name.removeprefix("checkpoint-").removesuffix(".json") \
        if name.startswith("checkpoint-") else None
    resume = f"`/chat resume {tag}` in Gemini CLI" if readable(tag) else \
        "`/chat resume TAG` in Gemini CLI"
    return ForeignSession(tool="Gemini CLI",
                          what="a Gemini CLI checkpoint (/chat save)", other=resume)


def _inspect(what: str) -> ForeignSession:
    return ForeignSession(tool="inspect_ai", what=what,
                          other="`inspect view` (its log viewer) or `inspect log dump FILE`")


def detect_foreign_bytes(head: bytes, name: str = "") -> ForeignSession | None:
    """What another tool's file is, from its first bytes (`name`: the file's base name, for a
    checkpoint's tag); None when it is none of the known ones, or a cockpit journal. Never
    raises on any input."""
    if head.startswith(b"PK\x03\x04"):  # a zip: inspect_ai's .eval names its members early
        if b"_journal/" in head or b"header.json" in head or name.endswith(".eval"):
            return _inspect("an inspect_ai evaluation log (.eval)")
        return None
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    records = _objects(text)
    if any(_is_event(r) for r in records):
        return None
    for detect in (_claude, _codex, _gemini_lines):
        found = detect(records)
        if found is not None:
            return found
    if text.lstrip()[:1] in ("{", "["):
        return _json_document(text, name)
    return None


def detect_foreign(path: str | os.PathLike[str]) -> ForeignSession | None:
    """`detect_foreign_bytes` on the first `HEAD_BYTES` of the file at `path` (blocking I/O:
    call it off an event loop); None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except (OSError, ValueError):
        return None
    return detect_foreign_bytes(head, os.path.basename(os.fspath(path)))
