"""A runner that only reads a past session (`SessionSetup(load_only=True)`, what `cockpit replay
--agent --session` uses), against the SDK test agent: it loads by `session/load` even where the
agent offers `session/resume` (a resume replays nothing), its history journaled as history; no
task is ever sent as a prompt, however many runs; an agent without load, or an unknown id, ends
the run failed with the reason."""

from __future__ import annotations

import asyncio

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log, drive, ready

from engine_adapter.engines.acp import AcpRunner, AgentSpec
from engine_adapter.engines.acp.agent import SessionSetup


def _runner(tmp_path, *flags: str, setup: SessionSetup | None = None) -> AcpRunner:
    argv = agent_argv("--state", tmp_path / "state", "--log", tmp_path / "agent.jsonl", *flags)
    spec = AgentSpec(name="test", command=argv[0], args=tuple(argv[1:]), known=False)
    (tmp_path / "ws").mkdir(exist_ok=True)
    return AcpRunner(spec, cwd=tmp_path / "ws", setup=setup)


def _run(runner: AcpRunner, tasks: list[str], tmp_path) -> list[list]:
    async def main() -> list[list]:
        folder = tmp_path / f"journals-{len(list(tmp_path.glob('journals-*')))}"
        folder.mkdir()
        try:
            return [(await drive(runner, task, folder / f"{i}.jsonl"))[1]
                    for i, task in enumerate(tasks)]
        finally:
            await runner.close()
    return asyncio.run(main())


@pytest.fixture
def session(tmp_path) -> str:
    (events,) = _run(_runner(tmp_path), ["title Earlier work"], tmp_path)
    return ready(events).acp_session_id


@pytest.mark.parametrize("tasks", [[""], ["hello"], ["rm -rf ~", "title x"]])
def test_a_load_only_runner_loads_and_never_prompts(tmp_path, session, tasks):
    before = len(agent_log(tmp_path / "agent.jsonl"))
    runner = _runner(tmp_path, setup=SessionSetup(resume=session, load_only=True))
    results = _run(runner, tasks, tmp_path)
    seen = [e["event"] for e in agent_log(tmp_path / "agent.jsonl")[before:]]
    assert "load" in seen and "resume" not in seen and "prompt" not in seen, seen
    first = results[0]
    assert ready(first).resumed == "session/load"
    assert [e.text for e in first if e.type == "history_message"] == ["title Earlier work",
                                                                      "titled"]
    for events in results:
        assert events[-1].status == "completed"
        assert "nothing was sent to it" in events[-1].result
        assert not any(e.type in ("turn_start", "model_update") for e in events)


@pytest.mark.parametrize(("flags", "target", "reason"), [
    (("--no-load",), None, "the agent does not offer session/load (loadSession)"),
    (("--no-load", "--no-resume"), None, "the agent does not offer session/load"),
    ((), "sess-missing", "Session not found: sess-missing"),
])
def test_what_cannot_be_loaded_ends_the_run_failed_saying_why(tmp_path, session, flags, target,
                                                             reason):
    target = target or session
    runner = _runner(tmp_path, *flags, setup=SessionSetup(resume=target, load_only=True))
    (events,) = _run(runner, [""], tmp_path)
    end = events[-1]
    assert end.status == "failed"
    assert end.error.startswith(f"cannot load the agent's session {target}: ")
    assert reason in end.error
