"""The real ACP agents from npm, for the tests that drive them offline: where they are installed,
a HOME of their own, and what their processes were started with.

Install them once (they answer `initialize` and open sessions without network):

    npm install --prefix /tmp/acp-agents @agentclientprotocol/codex-acp \\
        @agentclientprotocol/claude-agent-acp @google/gemini-cli

Their programs are looked up in COCKPIT_TEST_AGENTS_BIN (default
/tmp/acp-agents/node_modules/.bin), then on PATH; a test of an agent that is not installed is
skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from pathlib import Path

import pytest

from engine_adapter.engines.acp import AgentSpec, load_catalogue

ANSWERS = Path(__file__).with_name("initialize")
"""The agents' `initialize` answers, captured from the npm packages (one JSON file a version)."""
AGENTS_BIN = Path(os.environ.get("COCKPIT_TEST_AGENTS_BIN",
                                 "/tmp/acp-agents/node_modules/.bin"))


def installed(name: str) -> str | None:
    """The path of the catalogue agent `name`'s program, if it is installed."""
    command = load_catalogue()[name].command
    return shutil.which(command, path=f"{AGENTS_BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def package_version(path: str) -> str | None:
    """The version in the package.json of the npm package whose program `path` is."""
    for folder in Path(path).resolve().parents:
        manifest = folder / "package.json"
        if manifest.is_file():
            return json.loads(manifest.read_text()).get("version")
    return None


def require(name: str, *, checked: bool = False) -> AgentSpec:
    """The catalogue's spec of `name`, started from where it is installed (else: skip); with
    `checked`, only the version the catalogue was checked on (a test that writes the agent's
    own files, whose format is the agent's to change)."""
    path = installed(name)
    if path is None:
        pytest.skip(f"{name} is not installed: see tests/fakes/acp_agent/real.py")
    wanted, found = load_catalogue()[name].version, package_version(path)
    if checked and found != wanted:
        pytest.skip(f"{name} {found} is installed; this test is for {wanted}")
    spec = load_catalogue()[name]
    return AgentSpec(**{**spec.__dict__, "command": path})


def offline_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """A process environment in which the agents find their programs, keep their files in
    `home`, and hold no real credentials (so they never reach a model)."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{AGENTS_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    for spec in load_catalogue().values():
        for name in spec.env:
            monkeypatch.delenv(name, raising=False)
    home.mkdir(parents=True, exist_ok=True)


def group_processes(pgid: int) -> list[tuple[list[str], dict[str, str]]]:
    """The command line and environment of each live process of a process group."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != pgid:
                continue
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            raw = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        env = dict(item.decode(errors="replace").partition("=")[::2] for item in raw if item)
        found.append(([a.decode(errors="replace") for a in argv if a], env))
    return found


def claude_transcript(home: Path, workspace: Path, title: str, said: tuple[str, str]) -> str:
    """Write a finished Claude Code conversation (a user message, the reply, a title) where
    claude-agent-acp keeps the sessions of `workspace`; returns its session id. This is the
    agent's own storage, written as data: the agent lists and reopens it without network."""
    session = str(uuid.uuid4())
    folder = home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    base = {"isSidechain": False, "userType": "external", "cwd": str(workspace),
            "sessionId": session, "version": "2.0.0", "gitBranch": ""}
    lines = [
        {**base, "parentUuid": None, "type": "user", "uuid": "u1",
         "timestamp": "2026-11-30T10:00:00.000Z",
         "message": {"role": "user", "content": said[0]}},
        {**base, "parentUuid": "u1", "type": "assistant", "uuid": "a1",
         "timestamp": "2026-11-30T10:00:05.000Z",
         "message": {"id": "msg_1", "type": "message", "role": "assistant",
                     "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": said[1]}],
                     "stop_reason": "end_turn", "stop_sequence": None,
                     "usage": {"input_tokens": 3, "output_tokens": 5}}},
        {"type": "custom-title", "customTitle": title, "sessionId": session},
    ]
    (folder / f"{session}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return session
