"""What a journal says of its run, read from its lines alone (`cockpit.journals`): the agent, its
session and workspace, the title, token totals and cost; values of the wrong type ignored, any
bytes read without raising, and a big journal read in chunks as if at once."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.journals import read_facts, runs_an_agent_session, scan_facts
from engine_adapter.events import (
    AgentReady,
    AgentStart,
    ModelUpdate,
    ModelUsage,
    SessionInfoChanged,
    ToolEnd,
    dump_event,
)


def _journal(*events) -> bytes:
    return b"".join(dump_event(e) + b"\n" for e in events)


def test_facts_are_read_from_their_lines_only():
    data = _journal(
        AgentStart(task="t", engine="acp:codex", cwd="/w", acp_session_id="s-1"),
        ModelUsage(input_tokens=10, output_tokens=2, cost_usd=0.5),
        # A forged usage inside a tool's output is text, not a line of its own: not counted.
        ToolEnd(call_id="c", tool="x", ok=True,
                output='{"type":"model_usage","input_tokens":99999}\n'),
        SessionInfoChanged(title="First"), SessionInfoChanged(title="Second"),
        ModelUsage(input_tokens=5, output_tokens=1))
    facts = scan_facts(data)
    assert (facts.agent, facts.acp_session_id, facts.cwd) == ("acp:codex", "s-1", "/w")
    assert (facts.input_tokens, facts.output_tokens, facts.cost_usd) == (15, 3, 0.5)
    assert facts.title == "Second"


def test_an_agent_run_names_its_session_and_agent_on_agent_ready(tmp_path):
    """The start comes before the agent answered; its session id and own name come after."""
    data = _journal(AgentStart(task="t", engine="acp:python3", cwd="/w", ready=False),
                    AgentReady(engine="acp:my-agent", acp_session_id="s-2"),
                    ModelUsage(input_tokens=1, output_tokens=1))
    facts = scan_facts(data)
    assert (facts.agent, facts.acp_session_id, facts.cwd) == ("acp:my-agent", "s-2", "/w")
    path = tmp_path / "run.jsonl"
    path.write_bytes(data)
    assert runs_an_agent_session(path)
    old = tmp_path / "old.jsonl"  # an older journal: it all came on the start
    old.write_bytes(_journal(AgentStart(task="t", engine="acp:codex", acp_session_id="s-1")))
    assert runs_an_agent_session(old)
    builtin = tmp_path / "builtin.jsonl"
    builtin.write_bytes(_journal(AgentStart(task="t", engine="builtin"),
                                 AgentReady(acp_session_id="forged")))
    assert not runs_an_agent_session(builtin)  # not an agent's engine
    late = tmp_path / "late.jsonl"  # a session id in a later line's text is not a fact
    late.write_bytes(_journal(AgentStart(task="t", engine="acp:codex", ready=False),
                              ToolEnd(call_id="c", tool="x", ok=True,
                                      output='{"type":"agent_ready","acp_session_id":"x"}\n')))
    assert not runs_an_agent_session(late)


def test_facts_ignore_values_of_the_wrong_type():
    data = (b'{"type":"model_usage","input_tokens":true,"output_tokens":-5,"cost_usd":1e300}\n'
            b'{"type":"session_info","title":{"x":1}}\n{"type":"agent_start","engine":7}\n'
            b'{"type":"model_usage" torn')
    facts = scan_facts(data)
    assert (facts.input_tokens, facts.output_tokens, facts.cost_usd, facts.title,
            facts.agent) == (0, 0, None, None, None)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=30),
       st.binary(max_size=200))
def test_token_totals_are_the_sum_whatever_lies_between(usages, noise):
    events = []
    for tokens_in, tokens_out in usages:
        events.append(ModelUpdate(text=noise.decode("latin-1")))
        events.append(ModelUsage(input_tokens=tokens_in, output_tokens=tokens_out))
    facts = scan_facts(_journal(*events))
    assert facts.input_tokens == sum(i for i, _ in usages)
    assert facts.output_tokens == sum(o for _, o in usages)


@settings(max_examples=60)
@given(st.binary(max_size=500))
def test_facts_of_any_bytes_never_raise(data):
    scan_facts(data)


def test_read_facts_in_chunks_equals_reading_at_once(tmp_path, monkeypatch):
    import cockpit.journals as facts_module

    events = [ModelUsage(input_tokens=i, output_tokens=1) for i in range(200)]
    path = tmp_path / "j.jsonl"
    path.write_bytes(_journal(AgentStart(task="t", engine="acp:x"), *events))
    monkeypatch.setattr(facts_module, "_CHUNK", 97)  # lines cut across chunks
    chunked = read_facts(path)
    assert chunked.input_tokens == sum(range(200)) and chunked.output_tokens == 200
    assert chunked.complete
    monkeypatch.setattr(facts_module, "SCAN_LIMIT", 1000)
    assert not read_facts(path).complete
