"""The built-in engine with a real model: whole runs through the official `openai` SDK against a
real HTTP server on 127.0.0.1 (the fake in tests/fakes/openai_fake) — streaming, tool calls, usage,
retries, errors, cancel and the context."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from fakes.openai_fake.helpers import closed_port, model_for, run_against
from fakes.openai_fake.server import Error, FakeOpenAI, Stream, chunks, sample_fix_replies
from support.builtin_runs import end, of_type, tool_ends

from engine_adapter import JsonlEventJournal, Session, TaskState, read_journal
from engine_adapter.engines.builtin import BuiltinRunner, make_workspace
from engine_adapter.engines.builtin.models.openai import Price
from engine_adapter.engines.builtin.tools import TOOLS

FINISH = Stream(chunks("Done.", calls=[("finish", {"result": "all done"})]))


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    return tmp_path


def read(path: str = "a.txt", text: str = "Reading.", **kw) -> Stream:
    return Stream(chunks(text, calls=[("read_file", {"path": path})], **kw))


async def seen(session: Session, kind: str, count: int = 1) -> None:
    """Wait for the `count`-th event of a kind (on the event stream itself)."""
    async for event in session.events():
        if event.type == kind:
            count -= 1
            if count == 0:
                return
    raise AssertionError(f"the run ended before {kind}")


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


# -- a whole run -----------------------------------------------------------------------------

def test_the_sample_project_is_fixed_and_verified_for_real(tmp_path) -> None:
    workspace = make_workspace(tmp_path)
    journal = tmp_path / "run.jsonl"
    session, fake = run_against(workspace, sample_fix_replies(sys.executable),
                                task="Fix the failing test", journal=JsonlEventJournal(journal))
    assert end(session).status == "completed", end(session).error
    checks = of_type(session, "verification_end")
    assert [c.check_id for c in checks] == ["unit-tests", "doctests"]
    assert all(c.passed for c in checks) and "Ran 5 tests" in checks[0].output
    assert "ordered[mid - 1] + ordered[mid]" in (workspace / "stats" / "core.py").read_text()
    assert [e.type for e in read_journal(journal)] == [e.type for e in session.history]
    assert of_type(session, "agent_start")[0].model == "fake-model"
    # The request: the engine's tools by their own names plus finish, usage asked for.
    first = fake.requests[0]
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert names == [*TOOLS, "finish"]
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert "declare_verification" in first["messages"][0]["content"]
    # Every tool result answers its call by the server's id.
    second = fake.requests[1]["messages"]
    said = second[2]
    assert said["role"] == "assistant" and len(said["tool_calls"]) == 2
    answers = [m["tool_call_id"] for m in second[3:]]
    assert answers == [call["id"] for call in said["tool_calls"]]
    assert "stats/" in second[3]["content"] and "python -m unittest" in second[4]["content"]


def test_the_schemas_come_from_the_tool_specs() -> None:
    from engine_adapter.engines.builtin.models.openai.schema import function_tools

    tools = {t["function"]["name"]: t["function"] for t in function_tools(TOOLS.values())}
    for name, spec in TOOLS.items():
        params = tools[name]["parameters"]
        assert tools[name]["description"] == spec.description
        assert params["required"] == list(spec.required)
        assert set(params["properties"]) == {*spec.required, *spec.optional}
    assert tools["shell"]["parameters"]["properties"]["timeout"] == {"type": "number"}
    assert tools["shell"]["parameters"]["properties"]["argv"]["items"] == {"type": "string"}
    checks = tools["declare_verification"]["parameters"]["properties"]["checks"]
    assert checks["items"]["required"] == ["name", "command"]
    assert tools["finish"]["parameters"]["required"] == ["result"]


# -- streaming -------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])
def test_text_and_reasoning_stream_as_message_and_thought(ws, key) -> None:
    reply = Stream(chunks("Let me read a.txt.", reasoning="The file may hold the answer.",
                          calls=[("read_file", {"path": "a.txt"})], reasoning_key=key,
                          text_pieces=5))
    session, _ = run_against(ws, [reply, FINISH])
    updates = [u for u in of_type(session, "model_update") if u.turn == 1]
    assert "".join(u.text for u in updates if u.channel == "thought") == \
        "The file may hold the answer."
    assert "".join(u.text for u in updates if u.channel == "message") == "Let me read a.txt."
    assert updates[0].channel == "thought" and updates[-1].channel == "message"


def test_think_tags_in_the_content_are_thoughts(ws) -> None:
    reply = Stream(chunks("<think>\nweigh it up\n</think>\n\nReading.", text_pieces=9,
                          calls=[("read_file", {"path": "a.txt"})]))
    session, fake = run_against(ws, [reply, FINISH])
    updates = [u for u in of_type(session, "model_update") if u.turn == 1]
    assert "".join(u.text for u in updates if u.channel == "thought") == "\nweigh it up\n"
    assert "".join(u.text for u in updates if u.channel == "message") == "Reading."
    assert fake.requests[1]["messages"][2]["content"] == "Reading."


@pytest.mark.parametrize("split", [1, 2, 5, 9])
@pytest.mark.parametrize("interleave", [False, True])
def test_parallel_calls_split_anywhere_run_in_order(ws, split, interleave) -> None:
    (ws / "b.txt").write_text("bee\n")
    calls = [("read_file", {"path": "a.txt"}), ("list_dir", {}), ("read_file", {"path": "b.txt"})]
    reply = Stream(chunks("Three looks.", calls=calls, split=split, interleave=interleave))
    session, fake = run_against(ws, [reply, FINISH])
    assert end(session).status == "completed"
    assert [(d.tool, d.tool_input) for d in of_type(session, "model_decision")][:3] == \
        [(name, args) for name, args in calls]
    starts, ends = of_type(session, "tool_start"), tool_ends(session)
    assert [s.call_id for s in starts] == [e.call_id for e in ends]
    assert len({s.call_id for s in starts}) == 3
    assert [e.output.splitlines()[0] for e in ends] == ["one", "a.txt  (8 bytes)", "bee"]
    sent = fake.requests[1]["messages"]
    assert [m["role"] for m in sent[2:]] == ["assistant", "tool", "tool", "tool"]
    assert [c["function"]["name"] for c in sent[2]["tool_calls"]] == \
        ["read_file", "list_dir", "read_file"]


# -- decisions the model must correct ----------------------------------------------------------

def test_a_bad_tool_call_is_reported_and_corrected(ws) -> None:
    replies = [
        Stream(chunks("Reading.", calls=[("read_file", '{"path": "a.txt"')], ids=["bad-1"])),
        Stream(chunks("Again.", calls=[("read_file", {"file": "a.txt"})], ids=["bad-2"])),
        read(), FINISH]
    session, fake = run_against(ws, replies)
    assert end(session).status == "completed"
    errors = of_type(session, "decision_error")
    assert len(errors) == 2
    assert "arguments of read_file are not valid JSON" in errors[0].error
    assert errors[0].raw is not None and '{"path": "a.txt"' in errors[0].raw
    assert "read_file needs 'path'" in errors[1].error
    told = tool_messages(fake.requests[1])
    assert told[0]["tool_call_id"] == "bad-1" and "not valid JSON" in told[0]["content"]
    assert tool_messages(fake.requests[2])[-1]["tool_call_id"] == "bad-2"
    assert tool_ends(session)[0].output == "one\ntwo\n"


def test_one_bad_call_stops_the_whole_reply(ws) -> None:
    calls = [("read_file", {"path": "a.txt"}), ("nope", {})]
    session, fake = run_against(ws, [Stream(chunks("Two.", calls=calls, ids=["k1", "k2"])),
                                     FINISH])
    assert not of_type(session, "tool_start")
    (error,) = of_type(session, "decision_error")
    assert "unknown tool 'nope'" in error.error
    told = {m["tool_call_id"]: m["content"] for m in tool_messages(fake.requests[1])}
    assert "not run" in told["k1"] and "unknown tool" in told["k2"]


def test_finish_beside_other_calls_is_a_decision_error(ws) -> None:
    calls = [("read_file", {"path": "a.txt"}), ("finish", {"result": "x"})]
    session, _ = run_against(ws, [Stream(chunks("Both.", calls=calls)), FINISH])
    assert "finish alone" in of_type(session, "decision_error")[0].error
    assert end(session).status == "completed" and end(session).result == "all done"


def test_a_reply_without_a_tool_call_is_told_to_call_one(ws) -> None:
    session, fake = run_against(ws, [Stream(chunks("I think it is fine.")), FINISH])
    assert "called no tool" in of_type(session, "decision_error")[0].error
    last = fake.requests[1]["messages"][-1]
    assert last["role"] == "user" and "called no tool" in last["content"]
    assert end(session).status == "completed"


def test_a_server_that_ignores_tools_is_named(ws) -> None:
    session, _ = run_against(ws, [Stream(chunks(f"words {i}")) for i in range(3)])
    assert end(session).status == "failed"
    assert "without calling a tool" in end(session).error
    assert "llama-server --jinja" in end(session).error


def test_a_denied_call_stops_the_rest_of_its_reply(ws) -> None:
    calls = [("shell", {"command": "echo hi"}), ("read_file", {"path": "a.txt"})]
    replies = [Stream(chunks("Run then read.", calls=calls, ids=["s1", "r1"])), FINISH]
    session, fake = run_against(ws, replies, auto_approve=False)
    assert [e.tool for e in tool_ends(session)] == []
    told = {m["tool_call_id"]: m["content"] for m in tool_messages(fake.requests[1])}
    assert told["s1"].startswith("denied") and "not run" in told["r1"]


# -- usage and cost --------------------------------------------------------------------------

def test_usage_from_the_server_and_the_cost_from_a_price(ws) -> None:
    replies = [read(usage=(1000, 200)), Stream(chunks("Done.", usage=(3000, 10),
                                                      calls=[("finish", {"result": "ok"})]))]
    session, _ = run_against(ws, replies, model={"price": Price(2.0, 8.0)})
    usage = of_type(session, "model_usage")
    assert [(u.input_tokens, u.output_tokens) for u in usage] == [(1000, 200), (3000, 10)]
    assert usage[0].cost_usd == pytest.approx((1000 * 2 + 200 * 8) / 1e6)


def test_unknown_price_shows_tokens_only_and_missing_usage_is_estimated(ws) -> None:
    replies = [read(usage=None), FINISH]
    session, _ = run_against(ws, replies)
    first = of_type(session, "model_usage")[0]
    assert first.input_tokens > 100 and first.output_tokens > 0 and first.cost_usd is None
    priced, _ = run_against(ws, [read(usage=None), FINISH], model={"price": Price(2, 8)})
    assert of_type(priced, "model_usage")[0].cost_usd is None  # no made-up cost


# -- retries and errors ----------------------------------------------------------------------

def test_a_429_is_retried_and_the_retry_is_shown(ws) -> None:
    replies = [Error(429, "Rate limit reached, slow down", {"retry-after": "0"}), read(),
               FINISH]
    session, fake = run_against(ws, replies)
    assert end(session).status == "completed"
    (retry,) = of_type(session, "model_retry")
    assert retry.turn == 1 and retry.attempt == 1 and retry.delay_s == 0
    assert "429" in retry.error and "Rate limit reached, slow down" in retry.error
    assert len(fake.requests) == 3


def test_server_errors_are_retried_then_end_the_run_verbatim(ws) -> None:
    replies = [Error(503, "upstream overloaded")] * 4
    session, fake = run_against(ws, replies)
    assert len(of_type(session, "model_retry")) == 3 and len(fake.requests) == 4
    assert end(session).status == "failed"
    assert "503: upstream overloaded" in end(session).error
    assert "gave up after 4 attempts" in end(session).error


@pytest.mark.parametrize(("status", "words"), [(401, "rejected the API key"),
                                               (403, "refused access")])
def test_a_rejected_key_names_the_variable_it_was_read_from(ws, status, words) -> None:
    replies = [Error(status, "Incorrect API key provided: sk-te***")]
    session, _ = run_against(ws, replies, model={"api_key": "sk-test",
                                                 "key_variable": "MY_MODEL_KEY"})
    error = end(session).error
    assert end(session).status == "failed" and not of_type(session, "model_retry")
    assert words in error and "Incorrect API key provided: sk-te***" in error
    assert "$MY_MODEL_KEY" in error


def test_no_key_sent_says_which_variable_to_set(ws) -> None:
    session, _ = run_against(ws, [Error(401, "missing key")])
    assert "no key was sent: set $OPENAI_API_KEY" in end(session).error


def test_an_unknown_model_is_a_404_with_the_way_to_list_models(ws) -> None:
    replies = [Error(404, "The model `nope` does not exist")]
    session, fake = run_against(ws, replies, model={"model": "nope"})
    error = end(session).error
    assert f"model 'nope' not found at {fake.url} (404): The model `nope` does not exist" in error
    assert f"cockpit models --base-url {fake.url}" in error


@pytest.mark.parametrize("message", [
    "tools param requires --jinja flag",
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    "registry.ollama.ai/library/gemma:2b does not support tools",
])
def test_a_server_without_tool_support_says_which_flag(ws, message) -> None:
    session, _ = run_against(ws, [Error(400, message)])
    error = end(session).error
    assert end(session).status == "failed" and message in error
    assert "llama-server --jinja" in error and "--enable-auto-tool-choice" in error


def test_connection_refused_asks_whether_the_server_runs(ws) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    session = Session(BuiltinRunner(model_for(url), cwd=ws), TaskState(task="t"))
    asyncio.run(asyncio.wait_for(session.run(), 30))
    assert end(session).status == "failed"
    assert end(session).error == (f"cannot connect to {url}: connection refused. Is the server "
                                  f"running at {url}?")


def test_a_stream_cut_mid_way_is_asked_again(ws) -> None:
    cut = Stream(chunks("Reading the fi", calls=[("read_file", {"path": "a.txt"})]),
                 cut_after=3)
    session, fake = run_against(ws, [cut, read(text="Reading the file."), FINISH])
    (retry,) = of_type(session, "model_retry")
    assert "cut" in retry.error
    assert end(session).status == "completed" and len(tool_ends(session)) == 1
    assert fake.requests[2]["messages"][2]["content"] == "Reading the file."


def test_a_stream_that_ends_without_finishing_is_asked_again(ws) -> None:
    unfinished = Stream(chunks("Half", usage=None)[:2], done=False)
    session, _ = run_against(ws, [unfinished, read(), FINISH])
    assert "before the reply was complete" in of_type(session, "model_retry")[0].error
    assert end(session).status == "completed"


def test_a_slow_server_is_waited_for(ws) -> None:
    session, _ = run_against(ws, [Stream(read().events, delay=0.2), FINISH])
    assert end(session).status == "completed" and not of_type(session, "model_retry")


def test_a_server_slower_than_the_timeout_is_retried(ws) -> None:
    replies = [Stream(read().events, delay=2.0), read(), FINISH]
    session, _ = run_against(ws, replies, model={"timeout": 0.2})
    assert "did not answer in time" in of_type(session, "model_retry")[0].error
    assert end(session).status == "completed"


# -- cancel ----------------------------------------------------------------------------------

def test_cancel_mid_stream_closes_the_connection(ws) -> None:
    held = Stream(chunks("Thinking about it " * 20, calls=[("list_dir", {})]), hold_after=4)

    async def main(fake: FakeOpenAI) -> Session:
        session = Session(BuiltinRunner(model_for(fake.url), cwd=ws), TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await seen(session, "model_update")  # the stream is open and talking
        assert await asyncio.to_thread(fake.holding.wait, 30)
        session.cancel("enough")
        await asyncio.wait_for(task, 30)
        return session

    with FakeOpenAI([held]) as fake:
        session = asyncio.run(main(fake))
        assert fake.closed_early.wait(30)  # the server saw the client leave
    assert end(session).status == "cancelled"
    assert of_type(session, "cancellation_observed")[0].reason == "enough"
    assert of_type(session, "model_update") and not of_type(session, "tool_start")
    assert len(of_type(session, "model_usage")) == 1


def test_cancel_while_waiting_to_retry(ws) -> None:
    async def main(fake: FakeOpenAI) -> Session:
        model = model_for(fake.url, retry_delays=(600.0,))
        session = Session(BuiltinRunner(model, cwd=ws), TaskState(task="t"))
        task = asyncio.create_task(session.run())
        await seen(session, "model_retry")
        session.cancel("no more waiting")
        await asyncio.wait_for(task, 30)
        return session

    with FakeOpenAI([Error(500, "boom")]) as fake:
        session = asyncio.run(main(fake))
    assert end(session).status == "cancelled"


# -- context ---------------------------------------------------------------------------------

def test_tool_outputs_are_capped_for_the_model_but_whole_in_the_journal(ws) -> None:
    (ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(3000)))
    session, fake = run_against(ws, [read("big.txt"), FINISH], model={"tool_output_cap": 2000})
    seen = tool_messages(fake.requests[1])[0]["content"]
    assert len(seen) < 2200 and "not shown to you" in seen
    assert seen.startswith("line 0\n") and seen.endswith("line 2999\n")
    assert len(tool_ends(session)[0].output) > 20_000


def test_older_outputs_are_elided_near_the_context_window(ws) -> None:
    for name in "abcd":
        (ws / f"{name}.log").write_text(name * 6000)
    replies = [read(f"{name}.log", usage=None) for name in "abcd"] + [FINISH]
    session, fake = run_against(ws, replies, model={"context_window": 7000,
                                                    "max_output_tokens": 500})
    assert end(session).status == "completed"
    last = tool_messages(fake.requests[4])
    assert [("elided" in m["content"]) for m in last] == [True, True, False, False]
    assert len(tool_ends(session)[0].output) == 6000


def test_a_context_overflow_from_the_server_elides_and_asks_again(ws) -> None:
    for name in "abc":
        (ws / f"{name}.log").write_text(name * 6000)
    too_long = Error(400, "This model's maximum context length is 4096 tokens. However, your "
                          "messages resulted in 6000 tokens.")
    replies = [read("a.log"), read("b.log"), read("c.log"), too_long, FINISH]
    session, fake = run_against(ws, replies)
    assert "maximum context length" in of_type(session, "model_retry")[0].error
    assert end(session).status == "completed"
    assert "elided" in tool_messages(fake.requests[4])[0]["content"]


def test_the_context_window_is_read_from_the_server_listing(ws) -> None:
    model_box = {}

    def replies(body, number):
        return [read(), FINISH][number]

    with FakeOpenAI(replies, models=[{"id": "fake-model", "max_model_len": 32768}]) as fake:
        model = model_box["m"] = model_for(fake.url)
        session = Session(BuiltinRunner(model, cwd=ws), TaskState(task="t"))
        asyncio.run(session.run())
    assert model.context_window == 32768 and end(session).status == "completed"


def test_the_user_system_prompt_is_sent(ws) -> None:
    _, fake = run_against(ws, [FINISH], model={"system_prompt": "Be brief."})
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}
    assert json.dumps(fake.requests[0]).count("Be brief.") == 1


# -- deltas read in one burst are one event ------------------------------------------------------

class BurstModel:
    """Streams `pieces` deltas, pausing (a real await) between them or not at all."""

    name = "burst"

    def __init__(self, pieces: int, pause: bool) -> None:
        self.pieces, self.pause = pieces, pause

    async def respond(self, request):
        from engine_adapter.engines.builtin import RawDecision, TextDelta

        yield TextDelta("hm", "thought")
        for i in range(self.pieces):
            if self.pause:
                await asyncio.sleep(0)
            yield TextDelta(f"w{i} ")
        yield RawDecision({"action": "finish", "result": "ok"})


@pytest.mark.parametrize(("pause", "updates"), [(False, 2), (True, 1 + 50)])
def test_a_burst_of_deltas_is_one_event_a_slow_stream_one_each(ws, pause, updates) -> None:
    session = Session(BuiltinRunner(BurstModel(50, pause), cwd=ws), TaskState(task="t"))
    asyncio.run(session.run())
    got = of_type(session, "model_update")
    assert len(got) == updates
    assert (got[0].channel, got[0].text) == ("thought", "hm")
    assert "".join(u.text for u in got[1:]) == "".join(f"w{i} " for i in range(50))
    assert got[-1].seq < of_type(session, "model_usage")[0].seq


def test_a_huge_server_error_is_cut(ws) -> None:
    session, _ = run_against(ws, [Error(400, "<html>" + "x" * 50_000)])
    error = end(session).error
    assert len(error) < 2_500 and "more characters" in error


def test_a_reply_cut_at_the_token_limit_says_so(ws) -> None:
    cut = Stream(chunks("Let me think " * 5, finish="length"))
    bad = Stream(chunks("Writing.", calls=[("write_file", '{"path": "a.txt", "cont')],
                        finish="length"))
    session, _ = run_against(ws, [cut, bad, FINISH])
    first, second = (e.error for e in of_type(session, "decision_error"))
    assert "cut at the output token limit" in first
    assert "not valid JSON" in second and "output token limit" in second


def test_a_server_that_refuses_stream_options_is_asked_without(ws) -> None:
    refused = Error(400, "Unrecognized request argument supplied: stream_options")
    session, fake = run_against(ws, [refused, read(usage=None), FINISH])
    assert "does not take stream_options" in of_type(session, "model_retry")[0].error
    assert "stream_options" not in fake.requests[1] and "stream_options" not in fake.requests[2]
    assert end(session).status == "completed"
    assert of_type(session, "model_usage")[1].input_tokens > 0  # estimated


def test_cancel_while_the_server_has_not_answered(ws) -> None:
    async def main(fake: FakeOpenAI) -> Session:
        session = Session(BuiltinRunner(model_for(fake.url), cwd=ws), TaskState(task="t"))
        task = asyncio.create_task(session.run())
        assert await asyncio.to_thread(fake.received.wait, 30)  # the server sits on it
        session.cancel("too slow")
        await asyncio.wait_for(task, 30)  # the server would answer only after 120 s
        return session

    with FakeOpenAI([Stream(read().events, delay=120)]) as fake:
        session = asyncio.run(main(fake))
    assert end(session).status == "cancelled" and not of_type(session, "model_update")
