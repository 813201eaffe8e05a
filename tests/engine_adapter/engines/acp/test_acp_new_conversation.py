"""`AcpRunner.new_conversation()` (what `/clear` asks): the next run opens a new session with
`session/new` on the same agent process while it runs, and on a fresh process after the agent
died, where the earlier conversation is neither resumed nor said to be gone. Against the SDK
test agent."""

from __future__ import annotations

import asyncio

from fakes.acp_agent.helpers import agent_argv, agent_log, drive, ready

from engine_adapter.engines.acp import AcpRunner


def _runs(tmp_path, tasks: list[str], renew_before: set[int]):
    log = tmp_path / "agent.jsonl"
    runner = AcpRunner(agent_argv("--log", log, "--state", tmp_path / "state"), cwd=tmp_path)

    async def main():
        results = []
        try:
            for index, task in enumerate(tasks):
                if index in renew_before:
                    runner.new_conversation()
                results.append((await drive(runner, task, tmp_path / f"{index}.jsonl"))[1])
        finally:
            await runner.close()
        return results

    return asyncio.run(main()), agent_log(log)


def test_a_new_conversation_is_a_new_session_on_the_same_process(tmp_path):
    (first, second, third), logged = _runs(tmp_path, ["hello", "hello", "hello"], {1})
    sessions = [ready(events).acp_session_id for events in (first, second, third)]
    assert sessions[0] != sessions[1] == sessions[2]  # the third goes on in the new one
    assert [ready(e).new_session for e in (first, second, third)] == [True, True, False]
    pids = {events[-1].result.rsplit("pid ", 1)[1] for events in (first, second, third)}
    assert len(pids) == 1
    prompts = [e["session"] for e in logged if e["event"] == "prompt"]
    assert prompts == sessions
    assert [e["event"] for e in logged].count("initialize") == 1


def test_after_the_agent_died_the_new_conversation_starts_on_a_fresh_process(tmp_path):
    (crashed, after), logged = _runs(tmp_path, ["crash", "hello"], {1})
    assert crashed[-1].status == "failed"
    assert ready(after).new_session is True and after[-1].status == "completed"
    assert not [e for e in after if e.type == "agent_notice"]  # nothing reopened, nothing gone
    events = [e["event"] for e in logged]
    assert events.count("initialize") == 2 and "resume" not in events and "load" not in events
