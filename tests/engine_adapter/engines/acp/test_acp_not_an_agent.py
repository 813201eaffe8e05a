"""A program that does not speak the Agent Client Protocol (issue 26 §4): `--agent cat` used to
fail with "error -32601: Method not found" (cat echoed our `initialize`, the SDK answered its
own request "method not found", cat echoed that too). Whatever the program does instead of
answering — echo what it reads, write text, write JSON that is not JSON-RPC, exit silently —
the run fails saying the program does not speak ACP, with its first output escaped and capped.
Real programs, through a real Session."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, drive

from engine_adapter.engines.acp import AcpRunner

NOT_ACP = "does not speak the Agent Client Protocol"
PY = sys.executable

# (argv, what the error must say besides NOT_ACP)
ECHOES = {
    "cat": (["cat"], "sent the cockpit's own request back"),
    "tee": (["tee", "/dev/null"], "sent the cockpit's own request back"),
    "sed doubling lines": (["sed", "-u", "p"], "sent the cockpit's own request back"),
    "a JSON re-writer": ([PY, "-u", "-c", "import sys, json\nfor l in sys.stdin: "
                          "print(json.dumps(json.loads(l), indent=None), flush=True)"],
                         "sent the cockpit's own request back"),
    "an echo after a banner": ([PY, "-u", "-c", "import sys\nprint('{\"jsonrpc\": \"2.0\", "
                                "\"method\": \"hello\"}', flush=True)\nfor l in sys.stdin: "
                                "print(l, end='', flush=True)"],
                               "sent the cockpit's own request back"),
}
TEXT = {
    "echo": (["echo", "hello world"], "its first output is not JSON-RPC: 'hello world'"),
    "yes": (["yes"], "its first output is not JSON-RPC: 'y'"),
    "a JSON list": (["sh", "-c", "echo '[1, 2]'; sleep 5"], "not JSON-RPC: '[1, 2]'"),
    "a JSON string": (["sh", "-c", "echo '\"hi\"'; sleep 5"], "not JSON-RPC: '\"hi\"'"),
    "a terminal escape": (["sh", "-c", r"printf '\033[31mred\n'; sleep 5"],
                          r"not JSON-RPC: '\x1b[31mred'"),
    "bytes that are not UTF-8": (["sh", "-c", r"printf '\377\376 binary\n'; sleep 5"],
                                 "not JSON-RPC: '\ufffd\ufffd binary'"),
    "a help text": (["ls", "--help"], "its first output is not JSON-RPC: 'Usage: ls"),
}


def run(argv: list[str], tmp_path: Path):
    async def main():
        async with AcpRunner(argv, cwd=tmp_path) as runner:
            return await drive(runner, "hello", tmp_path / "j.jsonl")

    return asyncio.run(main())


@pytest.mark.parametrize("name", sorted({**ECHOES, **TEXT}))
def test_a_program_that_is_no_agent_is_named_so(tmp_path, name) -> None:
    argv, says = {**ECHOES, **TEXT}[name]
    state, events = run(argv, tmp_path)
    assert state.status == "failed"
    error = state.error or ""
    assert NOT_ACP in error and says in error, error
    assert "-32601" not in error and "Method not found" not in error
    assert "cockpit agents" in error  # what to do instead
    assert "\x1b" not in error  # escaped, never raw
    assert events[-1].type == "agent_end" and events[-1].error == state.error


def test_the_first_output_shown_is_capped(tmp_path) -> None:
    state, _ = run(["sh", "-c", "printf '%05000d\\n' 0; sleep 5"], tmp_path)
    error = state.error or ""
    assert NOT_ACP in error and "more characters dropped" in error
    assert len(error) < 600


def test_a_program_that_exits_without_a_word_is_asked_about(tmp_path) -> None:
    for argv in (["true"], ["false"], ["sh", "-c", "echo oops >&2; exit 3"]):
        state, _ = run(argv, tmp_path)
        assert "during initialize without writing anything on stdout: is it an Agent Client " \
               "Protocol agent?" in (state.error or ""), state.error


def test_a_real_agent_is_not_taken_for_one_that_is_not(tmp_path) -> None:
    """Guards: the SDK test agent passes; its garbage written mid-turn keeps the old words."""
    state, _ = run(agent_argv("--log", tmp_path / "agent.jsonl"), tmp_path)
    assert state.status == "completed", state.error
    state, _ = asyncio.run(_garbage(tmp_path))
    assert state.status == "failed"
    assert NOT_ACP not in (state.error or "") and "not JSON-RPC" in (state.error or "")


async def _garbage(tmp_path: Path):
    async with AcpRunner(agent_argv("--log", tmp_path / "agent.jsonl"), cwd=tmp_path) as runner:
        return await drive(runner, "garbage", tmp_path / "g.jsonl")
