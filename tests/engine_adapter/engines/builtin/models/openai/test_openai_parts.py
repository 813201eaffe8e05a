"""The real model's parts, offline: putting streamed tool calls together (split anywhere),
`<think>` blocks, messages sized for the context, and what each server error means."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest
from fakes.openai_fake.server import chunks
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_adapter.engines.builtin.models import (
    DecisionFeedback,
    ModelReply,
    ModelRequest,
    RawDecision,
    ToolResult,
    UserMessage,
)
from engine_adapter.engines.builtin.models.openai.errors import Where, is_context_overflow, judge
from engine_adapter.engines.builtin.models.openai.messages import build_messages, cap_for_model
from engine_adapter.engines.builtin.models.openai.stream import ReplyAssembler, ThinkSplitter

WHERE = Where("http://127.0.0.1:9/v1", "m", "MY_KEY", True)


def parsed(raw: list[dict]) -> list[dict]:
    """Chunks as the SDK hands them over with `cast_to=object`: the decoded JSON."""
    return [json.loads(json.dumps(chunk)) for chunk in raw]


def assemble(raw: list[dict]) -> tuple[ReplyAssembler, str, str]:
    assembler = ReplyAssembler()
    deltas = [d for chunk in parsed(raw) for d in assembler.feed(chunk)] + assembler.flush()
    message = "".join(d.text for d in deltas if d.channel == "message")
    thought = "".join(d.text for d in deltas if d.channel == "thought")
    return assembler, message, thought


# -- assembling ------------------------------------------------------------------------------

_ARGS = st.dictionaries(st.sampled_from(["path", "pattern", "content", "x"]),
                        st.text(max_size=30), max_size=3)


@settings(max_examples=150, deadline=None)
@given(calls=st.lists(st.tuples(st.sampled_from(["read_file", "edit", "search", "finish"]),
                                _ARGS), min_size=1, max_size=4),
       split=st.integers(1, 12), interleave=st.booleans(), text=st.text(max_size=40))
def test_calls_split_anywhere_come_back_whole_and_in_order(calls, split, interleave, text):
    ids = [f"call-{i}-abcdef" for i in range(len(calls))]
    assembler, message, _ = assemble(chunks(text, calls=calls, split=split,
                                            interleave=interleave, ids=ids))
    got = assembler.calls()
    assert [(c.id, c.name, json.loads(c.arguments)) for c in got] == \
        [(i, name, args) for i, (name, args) in zip(ids, calls, strict=True)]
    assert assembler.finish_reason == "tool_calls" and assembler.usage["prompt_tokens"] == 120
    if not text.lstrip().startswith("<think>"):
        assert message == text


def test_a_server_that_repeats_ids_and_names_in_every_delta():
    def piece(args: str) -> dict:
        return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
                    {"index": 0, "id": "call_7", "type": "function",
                     "function": {"name": "read_file", "arguments": args}}]}}]}
    assembler, _, _ = assemble([piece('{"pa'), piece('th": "a"}')])
    (call,) = assembler.calls()
    assert (call.id, call.name, call.arguments) == ("call_7", "read_file", '{"path": "a"}')


def test_calls_without_an_index_or_an_id():
    def piece(**call) -> dict:
        return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": None,
                             "delta": {"tool_calls": [call]}}]}
    raw = [piece(id="a", function={"name": "list_dir", "arguments": "{}"}),
           piece(id="b", function={"name": "read_file", "arguments": '{"path":'}),
           piece(function={"arguments": '"x"}'})]
    assembler, _, _ = assemble(raw)
    assert [(c.id, c.name, c.arguments) for c in assembler.calls()] == [
        ("a", "list_dir", "{}"), ("b", "read_file", '{"path":"x"}')]
    nameless, _, _ = assemble([piece(index=0, function={"name": "finish"})])
    assert nameless.calls()[0].id.startswith("call-")


@settings(max_examples=200, deadline=None)
@given(thought=st.text(max_size=30).filter(lambda t: "</think>" not in t),
       message=st.text(max_size=30), cuts=st.lists(st.integers(0, 80), max_size=4))
def test_think_blocks_split_anywhere(thought, message, cuts):
    text = f"<think>{thought}</think>{message}"
    bounds = sorted({min(c, len(text)) for c in cuts})
    splitter = ThinkSplitter()
    out = []
    for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True):
        out += splitter.feed(text[a:b])
    out += splitter.flush()
    assert "".join(d.text for d in out if d.channel == "thought") == thought
    assert "".join(d.text for d in out if d.channel == "message") == message.lstrip("\n")


@pytest.mark.parametrize("junk", [None, 3, "x", [], {"choices": "no"}, {"choices": [None, 5]},
                                  {"choices": [{"delta": "x"}]},
                                  {"choices": [{"delta": {"content": 5, "tool_calls": "x"}}]},
                                  {"choices": [{"delta": {"tool_calls": [None, {"index": "0",
                                                "function": {"name": 5}}]}}]},
                                  {"usage": "lots"}])
def test_chunks_of_an_odd_shape_are_ignored(junk):
    assembler = ReplyAssembler()
    assert assembler.feed(junk) == []
    assert assembler.finish_reason is None and assembler.usage is None
    assert all(c.name == "" and c.arguments == "" for c in assembler.calls())


def test_think_tags_later_in_a_reply_are_text():
    splitter = ThinkSplitter()
    out = splitter.feed("Use <think> tags") + splitter.flush()
    assert [(d.text, d.channel) for d in out] == [("Use <think> tags", "message")]


# -- messages and the context ----------------------------------------------------------------

def request(*entries) -> ModelRequest:
    return ModelRequest(task="t", turn=1, phase="investigate",
                        transcript=(UserMessage("fix it"), *entries), tools=())


def test_plan_mode_is_said_in_the_system_prompt_and_a_refusal_says_why():
    from dataclasses import replace

    planned = replace(request(ToolResult("c1", "shell", "denied", error=(
        "denied: plan mode: the cockpit is read-only"), model_call_id="k1")), mode="plan")
    prompt = build_messages("SYS", planned, output_cap=100)
    assert "# Plan mode" in prompt.messages[0]["content"]
    assert prompt.messages[-1]["content"] == ("denied: this shell call was not allowed, so it "
                                              "did not run (plan mode: the cockpit is "
                                              "read-only)")
    assert "# Plan mode" not in build_messages("SYS", request(), output_cap=100).messages[0][
        "content"]


def call(call_id: str, tool: str = "read_file", **given) -> RawDecision:
    return RawDecision({"action": "tool", "tool": tool, "input": given}, call_id)


def test_the_transcript_as_messages():
    reply = ModelReply("Looking.", None, (call("k1", path="a"), call("k2", path="b")))
    prompt = build_messages("SYS", request(
        reply, ToolResult("c1", "read_file", "ok", "A", model_call_id="k1"),
        ToolResult("c1.2", "read_file", "denied", error="denied", model_call_id="k2"),
        ModelReply("", None, (RawDecision(None, error="no tool"),)),
        DecisionFeedback("your reply called no tool")), output_cap=100)
    roles = [m["role"] for m in prompt.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    calls = prompt.messages[2]["tool_calls"]
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in calls] == [("k1", "read_file", {"path": "a"}),
                                ("k2", "read_file", {"path": "b"})]
    assert prompt.messages[3] == {"role": "tool", "tool_call_id": "k1", "content": "A"}
    assert prompt.messages[4]["content"].startswith("denied")
    assert "called no tool" in prompt.messages[5]["content"]


def test_cap_keeps_head_and_tail():
    text = "".join(f"{i:05d}\n" for i in range(10_000))
    capped = cap_for_model(text, 3000)
    assert capped.startswith("00000\n") and capped.endswith("09999\n")
    assert len(capped) < 3200 and "not shown to you" in capped
    assert cap_for_model("short", 3000) == "short"


def test_eliding_goes_oldest_first_and_keeps_the_latest_two():
    results = []
    for i in range(5):
        results += [ModelReply("", None, (call(f"k{i}", path=str(i)),)),
                    ToolResult(f"c{i}", "read_file", "ok", str(i) * 5000, model_call_id=f"k{i}")]
    full = build_messages("S", request(*results), output_cap=10_000)
    prompt = build_messages("S", request(*results), output_cap=10_000,
                            limit_chars=full.chars - 7000)
    tools = [m["content"] for m in prompt.messages if m["role"] == "tool"]
    assert ["elided" in t for t in tools] == [True, True, False, False, False]
    assert prompt.elided == 2 and prompt.chars <= full.chars - 7000
    tight = build_messages("S", request(*results), output_cap=10_000, limit_chars=100)
    sizes = [len(m["content"]) for m in tight.messages if m["role"] == "tool"]
    assert max(sizes[:3]) < 400 and all(s < 2200 for s in sizes[3:])  # never an error


# -- errors ----------------------------------------------------------------------------------

def status_error(status: int, body, headers=None) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx2.Response(status, headers=headers or {}, request=request)
    client = openai.AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9/v1")
    return client._make_status_error(f"Error code: {status}", body=body, response=response)


@pytest.mark.parametrize(("status", "retry"), [(400, False), (401, False), (403, False),
                                               (404, False), (408, True), (422, False),
                                               (429, True), (500, True), (502, True),
                                               (503, True)])
def test_which_statuses_are_tried_again(status, retry):
    verdict = judge(status_error(status, {"error": {"message": "said so"}}), WHERE)
    assert verdict.retry is retry and "said so" in verdict.message


@pytest.mark.parametrize("body", [{"error": {"message": "said so"}}, {"detail": "said so"},
                                  {"message": "said so"}, "said so", {"error": "said so"}])
def test_the_server_message_is_found_in_any_shape(body):
    assert "said so" in judge(status_error(400, body), WHERE).message


def test_retry_after_is_honoured_within_reason():
    assert judge(status_error(429, {}, {"retry-after": "3"}), WHERE).delay == 3
    assert judge(status_error(429, {}, {"retry-after-ms": "250"}), WHERE).delay == 0.25
    assert judge(status_error(429, {}, {"retry-after": "9999"}), WHERE).delay is None
    assert judge(status_error(429, {}, {"retry-after": "soon"}), WHERE).delay is None


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 8192 tokens",
    "the request exceeds the available context size, try increasing it",
    "prompt is too long: 210000 tokens > 200000 maximum",
    "Input is too long for requested model",
])
def test_context_overflows_are_recognised(message):
    assert is_context_overflow(status_error(400, {"error": {"message": message}}))
    assert not is_context_overflow(status_error(400, {"error": {"message": "bad field"}}))


def test_connection_errors():
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    refused = openai.APIConnectionError(request=request)
    refused.__cause__ = ConnectionRefusedError(111, "Connection refused")
    verdict = judge(refused, WHERE)
    assert not verdict.retry and "Is the server running at http://127.0.0.1:9/v1?" in \
        verdict.message
    reset = openai.APIConnectionError(request=request)
    reset.__cause__ = ConnectionResetError(104, "Connection reset by peer")
    assert judge(reset, WHERE).retry and "reset by peer" in judge(reset, WHERE).message
    assert judge(openai.APITimeoutError(request=request), WHERE).retry
