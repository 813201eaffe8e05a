"""Every line the Session writes reads back with its own strict reader: deep parts, huge parts
and text JSON cannot carry are cut at the boundary, visibly (`events.caps`)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.event_loop import run
from support.steps import StepRunner

from engine_adapter import (
    AgentEnd,
    JsonlEventJournal,
    ModelUpdate,
    Session,
    TaskState,
    ToolEnd,
    ToolStart,
    VerificationCheck,
    VerificationPlanFrozen,
    read_journal,
)
from engine_adapter.events import (
    EVENT_ADAPTER,
    MAX_DEPTH,
    MAX_LINE_BYTES,
    bounded_line,
    dump_event,
    line_depth,
)


def nest(levels: int, shape: str = "dict"):
    """`levels` containers inside each other, innermost holding 1."""
    value: object = 1
    for i in range(levels):
        kind = shape if shape != "mixed" else ("dict", "list", "tuple")[i % 3]
        value = {"k": value} if kind == "dict" else [value] if kind == "list" else (value,)
    return value


def reads_back(line: bytes):
    """The strict reader's event for `line`, which must be one whole, bounded journal line."""
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert len(line) - 1 <= MAX_LINE_BYTES
    assert line_depth(line) <= MAX_DEPTH
    json.loads(line)  # Python's own json too (it raises RecursionError past ~1,000 levels)
    return EVENT_ADAPTER.validate_json(line)


def check(event):
    capped, line = bounded_line(event)
    back = reads_back(line)
    assert dump_event(capped) + b"\n" == line  # what observers get is what the journal holds
    assert type(back) is type(event)
    assert (back.seq, back.ts, back.session_id) == (event.seq, event.ts, event.session_id)
    return capped, line, back


# -- nesting --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", ["dict", "list", "tuple", "mixed"])
@pytest.mark.parametrize("levels", [0, 1, 10, 60, 61, 62, 63, 64, 65, 100, 196, 197, 198, 199,
                                    200, 254, 255, 256, 300, 999, 1_000, 5_000, 50_000])
def test_any_depth_reads_back_and_the_cut_says_how_many_levels(levels, shape) -> None:
    # tool_input is level 2 and "x" level 3: levels beyond 64 are cut.
    event = ToolStart(call_id="c", tool="t", tool_input={"x": nest(levels, shape)}, seq=4, ts=5.0)
    capped, line, _ = check(event)
    deepest = levels + 2
    if deepest <= MAX_DEPTH:
        assert capped is event  # untouched, not even copied
        assert b"nested too deep" not in line
    else:
        cut = deepest - MAX_DEPTH
        assert f"nested too deep ({cut:,} level{'s' if cut != 1 else ''} cut)".encode() in line
        assert line_depth(line) == MAX_DEPTH


@settings(max_examples=60, deadline=None)
@given(levels=st.integers(0, 3_000), shape=st.sampled_from(["dict", "list", "mixed"]),
       field=st.sampled_from(["tool_input", "extra"]))
def test_deep_values_anywhere_in_an_event_read_back(levels, shape, field) -> None:
    if field == "tool_input":
        event = ToolStart(call_id="c", tool="t", tool_input={"a": [{"b": nest(levels, shape)}]})
    else:  # an engine's own extra field (kept by the schema, so capped too)
        event = ToolEnd(call_id="c", tool="t", ok=True, details=nest(levels, shape))
    check(event)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                  max_size=4),
    max_leaves=60)


@settings(max_examples=200, deadline=None)
@given(tool_input=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
       wrap=st.integers(0, 120))
def test_arbitrary_inputs_at_arbitrary_depths_read_back(tool_input, wrap) -> None:
    for _ in range(wrap):
        tool_input = {"w": tool_input}
    check(ToolStart(call_id="c", tool="t", tool_input=tool_input))


def test_a_cycle_is_cut_not_an_endless_loop() -> None:
    loop: dict = {"name": "loop"}
    loop["self"] = loop
    items: list = [1]
    items.append(items)
    _, line, back = check(ToolStart(call_id="c", tool="t", tool_input={"d": loop, "l": items}))
    assert re.search(rb"nested too deep \(at least [\d,]+ levels cut\)", line)
    assert back.tool_input["d"]["name"] == "loop"


def test_a_deep_input_parsed_from_an_agents_json_reads_back() -> None:
    # What an ACP agent can send: 900 levels is within Python's json, beyond pydantic's reader.
    raw = json.loads('{"cmd": ' + "[" * 900 + "]" * 900 + "}")
    check(ToolStart(call_id="c", tool="t", tool_input=raw))


# -- size ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "x" * (MAX_LINE_BYTES + 1),
    "x" * 10_000_000,
    "\x01" * 1_000_000,  # 6 bytes each once escaped
    "😀" * 2_000_000,  # 4 bytes each
    "é" * 3_000_000,
    ('"\\' * 1_500_000),
    "line\n" * 1_000_000,
])
def test_a_huge_text_is_cut_visibly_and_the_line_fits(text) -> None:
    _, _, back = check(ToolEnd(call_id="c", tool="t", ok=True, output=text))
    assert re.search(r"…\[[\d,]+ characters cut\]$", back.output)
    kept = back.output[:back.output.rindex("…[")]
    assert text.startswith(kept) and len(kept) > 1000  # the head is kept, as much as fits
    assert int(re.search(r"\[([\d,]+) characters", back.output)[1].replace(",", "")) == \
        len(text) - len(kept)


def test_a_text_just_under_the_cap_is_kept_whole() -> None:
    text = "y" * (MAX_LINE_BYTES - 500)
    event = ToolEnd(call_id="c", tool="t", ok=True, output=text)
    capped, _, back = check(event)
    assert capped is event and back.output == text


@pytest.mark.parametrize("make", [
    lambda: {"items": list(range(2_000_000))},
    lambda: {f"key{i}": i for i in range(500_000)},
    lambda: {"rows": [{"path": f"/src/file{i}.py", "text": "z" * 200} for i in range(40_000)]},
    lambda: {f"{'k' * 300_000}{i}": i for i in range(30)},  # long keys that collide once cut
    lambda: {"a": "x" * 3_000_000, "b": "y" * 3_000_000, "c": ["z" * 1_000_000] * 5},
    lambda: {"set": set(range(1_000_000)), "tuple": tuple(range(1_000_000))},
])
def test_a_huge_input_is_cut_visibly_and_the_line_fits(make) -> None:
    _, line, back = check(ToolStart(call_id="c", tool="t", tool_input=make()))
    assert re.search(rb"(more items cut|more keys cut|characters cut)", line)
    assert back.tool_input


def test_many_extra_fields_are_cut_like_keys() -> None:
    extras = {f"field{i}": "v" * 50 for i in range(90_000)}
    _, line, back = check(ModelUpdate(text="hi", **extras))
    assert back.text == "hi" and b"more keys cut" in line


def test_a_huge_plan_keeps_whole_checks_and_says_how_many_were_cut() -> None:
    checks = [VerificationCheck(id=str(i), name="n" * 1000, command="pytest")
              for i in range(6_000)]
    _, _, back = check(VerificationPlanFrozen(checks=checks))
    assert all(isinstance(c, VerificationCheck) for c in back.checks)
    last = back.checks[-1].model_extra or {}
    assert last["…"] == f"{6_000 - len(back.checks):,} more items cut"


# -- text JSON cannot carry ---------------------------------------------------------------------

LONE = ["\ud800", "\udfff", "a\ud83d", "\ude00b", "\ude00\ud83d", "x\udc80y" * 3]


@pytest.mark.parametrize("bad", LONE)
@pytest.mark.parametrize("where", ["text", "call_id", "tool_input_value", "tool_input_key",
                                   "nested", "extra"])
def test_lone_surrogates_become_replacement_characters(bad, where) -> None:
    if where == "text":
        event = ModelUpdate(text=bad)
    elif where == "call_id":
        event = ToolEnd(call_id=bad, tool=bad, ok=False, error=bad)
    elif where == "tool_input_value":
        event = ToolStart(call_id="c", tool="t", tool_input={"command": bad})
    elif where == "tool_input_key":
        event = ToolStart(call_id="c", tool="t", tool_input={bad: 1})
    elif where == "nested":
        event = ToolStart(call_id="c", tool="t", tool_input={"a": [[{"b": bad}]]})
    else:
        event = AgentEnd(status="failed", stderr=[bad], note=bad)
    _, line, _ = check(event)
    assert "\ufffd".encode() in line
    line.decode("utf-8")  # strict UTF-8


def test_a_surrogate_pair_split_in_two_is_joined() -> None:
    _, _, back = check(ModelUpdate(text="\ud83d\ude00 ok"))
    assert back.text == "😀 ok"


def test_values_json_has_no_form_for_are_written_as_text() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    tool_input = {"bytes": b"\xff\xfeok", "bytearray": bytearray(b"abc"), "opaque": Opaque(),
                  "when": datetime(2024, 1, 2, tzinfo=UTC), "frozen": frozenset({1})}
    _, _, back = check(ToolStart(call_id="c", tool="t", tool_input=tool_input))
    assert back.tool_input["opaque"] == "<opaque>"
    assert back.tool_input["bytes"] == "\ufffd\ufffdok"
    assert back.tool_input["bytearray"] == "abc"
    assert back.tool_input["frozen"] == [1]


def test_ordinary_events_pass_untouched() -> None:
    for event in (ModelUpdate(text="héllo ✓", turn=1),
                  ToolStart(call_id="c", tool="shell", tool_input={"command": "ls -la"}),
                  ToolEnd(call_id="c", tool="shell", ok=True, output="a{[" * 100),
                  AgentEnd(status="completed", result="done")):
        capped, line = bounded_line(event)
        assert capped is event and line == dump_event(event) + b"\n"


@pytest.mark.parametrize(("text", "depth"), [
    (b"{}", 1), (b"[]", 1), (b"1", 0), (b'"[[[["', 0), (b'{"a":"\\"[[["}', 1),
    (b'{"a":[{"b":[]}]}', 4), (b"[" * 70 + b"]" * 70, 70), (b'["\\\\", [[]]]', 3),
])
def test_line_depth_skips_brackets_inside_strings(text, depth) -> None:
    assert line_depth(text) == depth


# -- through the Session and the journal ------------------------------------------------------

@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(levels=st.sampled_from([150, 199, 200, 300, 2_000]), size=st.sampled_from([0, 5_000_000]))
def test_the_session_writes_only_lines_its_strict_reader_reads(tmp_path_factory, levels,
                                                               size) -> None:
    path = tmp_path_factory.mktemp("caps") / "run.jsonl"

    async def hostile(runner: StepRunner) -> None:
        runner.emit(ToolStart(call_id="c1", tool="shell",
                              tool_input={"command": "x" * size, "deep": nest(levels)}))
        runner.emit(ToolEnd(call_id="c1", tool="shell", ok=True, output="\ud800" + "o" * size))
        runner.emit(ModelUpdate(text="still here"))

    session = Session(StepRunner(hostile), TaskState(task="t"), journal=JsonlEventJournal(path))
    state = run(session.run())
    assert state.status == "completed" and session.journal_error is None
    on_disk = list(read_journal(path))  # strict: raises on any bad line
    assert [e.model_dump() for e in on_disk] == [e.model_dump() for e in session.history]
    assert b"nested too deep" in path.read_bytes()
    assert all(len(raw) <= MAX_LINE_BYTES + 1 for raw in path.read_bytes().splitlines(True))


def test_the_journal_caps_an_event_written_to_it_directly(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    with JsonlEventJournal(path) as journal:
        journal.write(ToolStart(call_id="c", tool="t", tool_input={"x": nest(500)}))
    (event,) = read_journal(path)
    assert "nested too deep" in json.dumps(event.tool_input)
