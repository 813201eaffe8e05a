"""The stable ACP v1 surface against the SDK test agent (real processes): a login asked for on a
prompt, the agent's stderr on a cancel, `usage_update`, `plan`, `session/close`, URL-mode
elicitation and boolean config options — each with hostile variants."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log, drive, group_gone

from cockpit.live.agent_settings import setting_commands
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.acp.agent import SettingError
from engine_adapter.events import ModelDecisionEvent, ModelUsage
from engine_adapter.view import describe, fold_events


def _runner(tmp_path: Path, *args: str, **kwargs) -> AcpRunner:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return AcpRunner(agent_argv("--log", tmp_path / "agent.jsonl", *args), cwd=workspace,
                     **kwargs)


def _once(tmp_path: Path, task: str, *args: str, **kwargs):
    async def main():
        async with _runner(tmp_path, *args, **kwargs) as runner:
            return await drive(runner, task, tmp_path / "j.jsonl")
    return asyncio.run(main())


# 1. a login asked for on a prompt --------------------------------------------------------------
def test_a_prompt_that_needs_a_login_shows_the_login_help(tmp_path, monkeypatch):
    """claude-agent-acp opens a session without a login, then fails the prompt: the failure
    names the agent's ways to log in, as a failed session open does."""
    monkeypatch.delenv("TEST_AGENT_KEY", raising=False)
    state, events = _once(tmp_path, "hello", "--mode", "auth-prompt")
    assert state.status == "failed"
    error = state.error or ""
    assert "Authentication required" in error
    assert "the agent offers these ways to log in" in error
    assert "log in in a terminal with:" in error and "--login" in error  # the terminal method
    assert "TEST_AGENT_KEY" in error and "--pass-env TEST_AGENT_KEY" in error
    assert events[-1].type == "agent_end" and events[-1].error == error


@pytest.mark.parametrize(("code", "message", "hinted"), [
    (-32000, "Authentication required", True),
    (-32000, "Not logged in: run the login first", True),
    (-32000, "Please sign in to continue", True),
    (-32000, "Invalid API key", True),
    (-32000, "authorization header missing", True),
    (-32000, "AUTH_REQUIRED", True),
    (-32000, "model overloaded, try later", False),  # the generic server error: no login help
    (-32000, "rate limited", False),
    (-32603, "Authentication service is down", False),  # another code: not a login request
    (-32602, "login field is invalid", False),
])
def test_login_help_only_when_the_agent_asks_for_a_login(tmp_path, code, message, hinted):
    state, _ = _once(tmp_path, f"fail {code} {message}")
    assert state.status == "failed" and message in (state.error or "")
    assert ("log in" in (state.error or "")) is hinted


def test_login_help_for_an_agent_that_declares_no_method(tmp_path):
    """No method declared: still say what to do, not nothing."""
    state, _ = _once(tmp_path, "fail -32000 Authentication required")
    assert "declares no way to log in" in (state.error or "")


# 7. boolean config options -----------------------------------------------------------------
def _settings_of(tmp_path: Path, *args: str, change: tuple[str, object] | None = None):
    async def main():
        async with _runner(tmp_path, *args) as runner:
            state, events = await drive(runner, "hello", tmp_path / "j.jsonl")
            if change is not None:
                await runner.set_option(change[0], change[1])  # type: ignore[arg-type]
            return state, events, runner.settings[0], setting_commands(runner)
    return asyncio.run(main())


def test_boolean_options_are_opted_in_shown_and_switched(tmp_path):
    """ACP v1 makes boolean options opt-in: the client says it takes them, the agent then
    offers its `verbose` flag; it is in the session's settings, has a palette entry, and a
    switch reaches the agent as a JSON boolean."""
    state, events, options, commands = _settings_of(tmp_path, change=("verbose", True))
    assert state.status == "completed"
    log = agent_log(tmp_path / "agent.jsonl")
    assert next(e for e in log if e["event"] == "initialize")["boolean_options"] is True
    config = next(e for e in events if e.type == "agent_config")
    assert ("verbose", "boolean", False) in [(o.id, o.kind, o.value) for o in config.options]
    assert [e["value"] for e in log if e["event"] == "set_config_option"] == [True]
    verbose = next(o for o in options if o.id == "verbose")
    assert verbose.value is True  # the agent's answer, as it now stands
    assert "Agent Verbose: off" in [c.title for c in commands]  # the switch back


@pytest.mark.parametrize("text", ["on", "true", "YES", "1", "off", "False", "no", "0"])
def test_boolean_option_words(tmp_path, text):
    """`--option verbose=WORD`: the words for on and off, sent as a boolean."""
    _settings_of(tmp_path, change=("verbose", text))
    sent = [e["value"] for e in agent_log(tmp_path / "agent.jsonl")
            if e["event"] == "set_config_option"]
    assert sent == [text.lower() in ("on", "true", "yes", "1")]


@pytest.mark.parametrize("text", ["maybe", "", "2", "onn", "true\n1"])
def test_boolean_option_rejects_other_words(tmp_path, text):
    with pytest.raises(SettingError, match="verbose is on or off; valid values: true, false"):
        _settings_of(tmp_path, change=("verbose", text))
    assert not [e for e in agent_log(tmp_path / "agent.jsonl")
                if e["event"] == "set_config_option"]


def test_options_of_unknown_kinds_and_hostile_ones(tmp_path):
    """Kinds no client knows (a slider, a number), a flag whose value is not one, one without a
    name, one with no type: left out, the session opens. Names with control characters and a
    10,000-character name are shown escaped and cut, in the settings and the palette."""
    state, _events, options, commands = _settings_of(tmp_path, "--mode", "odd-options")
    assert state.status == "completed"
    ids = [o.id for o in options]
    assert ids[:3] == ["model", "effort", "verbose"]
    assert not {"speed", "temperature", "maybe", "nameless", "untyped"} & set(ids)
    for option in options:
        assert len(option.name) <= 200 and len(option.id) <= 200
        assert not any(ord(ch) < 32 or ch in "\x7f\u202e" for ch in option.name + option.id)
    for command in commands:
        assert len(command.title) <= 80
        assert not any(ord(ch) < 32 or ch in "\x7f\u202e" for ch in command.title)


# 5. session/close ------------------------------------------------------------------------------
@pytest.mark.parametrize(("flags", "closed"), [((), True), (("--no-close",), False)])
def test_the_conversation_ends_with_session_close_when_offered(tmp_path, flags, closed):
    """Closing the runner (the conversation ends) sends `session/close` for the open session,
    only to an agent that offers it; the agent then exits as before."""
    async def main():
        async with _runner(tmp_path, *flags) as runner:
            await drive(runner, "hello", tmp_path / "j.jsonl")
            await drive(runner, "hello", tmp_path / "k.jsonl")  # one conversation, two tasks
            return runner.connection.session_id
    session_id = asyncio.run(main())
    log = agent_log(tmp_path / "agent.jsonl")
    closes = [e for e in log if e["event"] == "close"]
    assert closes == ([{"event": "close", "session": session_id, "known": True}] if closed
                      else [])
    assert log[-1]["event"] == "stdin closed"  # it still exited on its own


def test_no_session_close_to_an_agent_that_died_or_failed(tmp_path):
    """A crashed agent, or one stopped on a failure path, is not asked anything."""
    state, _ = _once(tmp_path, "crash")
    assert state.status == "failed"
    assert not [e for e in agent_log(tmp_path / "agent.jsonl") if e["event"] == "close"]


def test_an_agent_that_hangs_on_session_close_is_stopped_all_the_same(tmp_path):
    """`--mode close-hangs`: it never answers `session/close`; closing still ends within the
    stop grace and leaves no process."""
    async def main():
        async with _runner(tmp_path, "--mode", "close-hangs", stop_grace=0.3) as runner:
            await drive(runner, "hello", tmp_path / "j.jsonl")
            pgid = runner.connection.process.pgid
        return pgid
    pgid = asyncio.run(main())
    assert group_gone(pgid)
    assert [e["event"] for e in agent_log(tmp_path / "agent.jsonl")].count("close") == 1


# 3. usage_update -------------------------------------------------------------------------------
def _usage(used: object, size: object, amount: object = None, currency: object = "USD"):
    update: dict[str, object] = {"sessionUpdate": "usage_update", "used": used, "size": size}
    if amount is not None:
        update["cost"] = {"amount": amount, "currency": currency}
    return {"raw": update}


def _scripted(tmp_path: Path, steps: list[dict], *args: str):
    return _once(tmp_path, "script " + json.dumps(steps), *args)


def _session_usage(events):
    return [(e.context_used, e.context_size, e.cost, e.currency) for e in events
            if e.type == "model_usage" and e.scope == "session"]


def test_usage_updates_are_journaled_when_they_change_and_fold_into_the_status(tmp_path):
    """Levels from the agent, journaled as they change: the context's fill, and the cost
    added since the last report; the fold keeps the latest fill and sums the cost."""
    state, events = _scripted(tmp_path, [
        _usage(1000, 200_000, 0.01), _usage(1000, 200_000, 0.01),  # the same twice: once
        _usage(5000, 200_000), _usage(5000, 200_000, 0.04),  # context only; then cost only
        _usage(6000, 200_000, 0.02)])  # the cost fell (the agent reset it): nothing added
    assert state.status == "completed"
    assert _session_usage(events) == [(1000, 200_000, 0.01, "USD"),
                                      (5000, 200_000, None, None),
                                      (5000, 200_000, 0.03, "USD"),
                                      (6000, 200_000, None, None)]
    view = fold_events(events)
    assert view.context == (6000, 200_000)
    assert view.cost_usd == pytest.approx(0.04)
    assert view.model_calls == 0  # an agent's report is not a model call
    lines = [describe(e).text for e in events if e.type == "model_usage"]
    assert lines[0] == "context 0% of 200,000 tokens · +$0.0100"


@pytest.mark.parametrize(("update", "context", "cost"), [
    (_usage(10, 100, "NaN"), (10, 100), None),
    (_usage(10, 100, "Infinity"), (10, 100), None),
    (_usage(10, 100, "-Infinity"), (10, 100), None),
    (_usage(10, 100, -5), (10, 100), None),
    (_usage(10, 100, 1e300), (10, 100), None),
    (_usage(10, 100, 0.5, None), (10, 100), None),  # a cost without a currency
    (_usage(10, 100, "a lot"), (10, 100), None),
    (_usage(-5, 100, 0.5), None, None),  # refused whole by the SDK's schema
    (_usage(10, -100), None, None),
    (_usage(10, 0, 0.5), None, 0.5),  # a window of no size tells nothing; the cost stands
    (_usage(10**15, 10**16), None, None),  # no context window is that big
    (_usage(300, 100), (300, 100), None),  # over full: shown as it is (capped at 999 %)
    (_usage(10, 100, 0.25, "eur"), (10, 100), None),
])
def test_hostile_usage_numbers_are_left_out(tmp_path, update, context, cost):
    state, events = _scripted(tmp_path, [update])
    assert state.status == "completed"
    view = fold_events(events)
    assert view.context == context
    assert view.cost_usd == cost
    for event in events:
        if event.type == "model_usage":
            assert math.isfinite(event.cost or 0.0)


def test_costs_in_other_currencies_are_kept_apart(tmp_path):
    _state, events = _scripted(tmp_path, [_usage(1, 100, 0.25, "eur"), _usage(1, 100, 0.5, "EUR"),
                                          _usage(2, 100, 0.1, "\x1b[31mGBP")])
    view = fold_events(events)
    assert view.cost_usd is None
    assert view.other_costs == {"EUR": pytest.approx(0.5), "XBMGBP": pytest.approx(0.1)}


def test_a_journal_with_hostile_usage_folds_to_believable_totals():
    """The fold reads journals, which are untrusted: negative tokens and costs, NaN, a
    context of negative size are left out of the totals."""
    events = [ModelUsage(seq=0, input_tokens=-100, output_tokens=5, cost_usd=float("nan")),
              ModelUsage(seq=1, input_tokens=10, output_tokens=-7, cost_usd=-3.0),
              ModelUsage(seq=2, context_used=5, context_size=-10, cost_usd=0.5),
              ModelUsage(seq=3, context_used=-5, context_size=10, scope="session")]
    view = fold_events(events)
    assert (view.input_tokens, view.output_tokens) == (10, 5)
    assert view.cost_usd == 0.5 and view.context is None and view.model_calls == 3


# 2. the agent's stderr on a cancel; a hurried cancel ----------------------------------------
def _cancel_after(runner: AcpRunner, text: str, *, hurry: bool = False):
    """An `answer` that cancels once the agent said `text` (hurrying the runner first)."""
    def answer(session, event):
        if event.type == "model_update" and event.text.startswith(text):
            if hurry:
                runner.hurry()
            session.cancel("escape escape")
    return answer


def _cancelled(tmp_path: Path, task: str, said: str, *, hurry: bool = False,
               **kwargs) -> tuple[object, list, int]:
    async def main():
        runner = _runner(tmp_path, **kwargs)
        # A first task, so what the agent wrote before this turn is there to be left out.
        await drive(runner, "hello", tmp_path / "first.jsonl")
        pgid = runner.connection.process.pgid
        state, events = await drive(runner, task, tmp_path / "j.jsonl",
                                    answer=_cancel_after(runner, said, hurry=hurry))
        await runner.close()
        return state, events, pgid
    return asyncio.run(main())


def test_a_cancel_the_agent_answers_keeps_what_it_wrote_to_stderr(tmp_path):
    state, events, pgid = _cancelled(tmp_path, "slow 1000 0.05", "chunk 0")
    assert state.status == "cancelled"
    end = events[-1]
    assert end.type == "agent_end" and end.status == "cancelled"
    assert end.stderr == ["test agent: cancel received (prompt 2)"]  # this turn's only
    assert group_gone(pgid)


def test_a_cancel_the_agent_ignores_ends_in_a_kill_that_keeps_its_stderr(tmp_path):
    """Gemini CLI ignores `session/cancel`: after `cancel_grace` it is killed, and the end
    says so and keeps what it wrote this turn, to its last words."""
    state, events, pgid = _cancelled(tmp_path, "deaf", "thinking", cancel_grace=0.3,
                                     stop_grace=0.3)
    assert state.status == "cancelled"
    end = events[-1]
    assert end.stderr[:3] == ["test agent: thinking hard",
                              "test agent: cancel received (prompt 2)",
                              "test agent: cancel ignored, still busy"]
    observed = next(e for e in events if e.type == "cancellation_observed")
    assert "did not stop within 0.3 s, so its processes were killed" in observed.reason
    lines = describe(end).details
    assert "  test agent: cancel ignored, still busy" in lines  # headless and replay show it
    assert group_gone(pgid)


@pytest.mark.parametrize("task,said", [("deaf", "thinking"), ("hang", "hanging")])
def test_a_hurried_cancel_kills_at_once(tmp_path, task, said):
    """The terminal closed: the runner is hurried and does not give the agent its
    `cancel_grace` (an hour here: a run that waited it would hang the test)."""
    state, events, pgid = _cancelled(tmp_path, task, said, hurry=True, cancel_grace=3600,
                                     stop_grace=3600)
    assert state.status == "cancelled"
    observed = next(e for e in events if e.type == "cancellation_observed")
    assert "did not stop at once and no one is left to wait for it" in observed.reason
    assert group_gone(pgid)


def test_hurry_while_waiting_for_a_cancel_cuts_the_wait(tmp_path):
    """Escape first (the agent ignores it), then the terminal closes: the wait ends then."""
    async def main():
        runner = _runner(tmp_path, cancel_grace=3600, stop_grace=3600)

        def answer(session, event):
            if event.type == "model_update" and event.text == "thinking":
                session.cancel("escape escape")
                asyncio.get_running_loop().call_soon(runner.hurry)  # later, mid-wait
        state, events = await drive(runner, "deaf", tmp_path / "j.jsonl", answer=answer)
        await runner.close()
        return state, events
    state, events = asyncio.run(main())
    assert state.status == "cancelled" and events[-1].stderr


# 4. plan -----------------------------------------------------------------------------------
def _plan(*entries: dict) -> dict:
    return {"raw": {"sessionUpdate": "plan", "entries": list(entries)}}


def _entry(content: object, status: object = "pending", priority: object = "medium") -> dict:
    return {"content": content, "status": status, "priority": priority}


def test_plan_updates_are_journaled_whole_and_fold_into_the_pinned_plan(tmp_path):
    _state, events = _scripted(tmp_path, [
        _plan(_entry("read", "in_progress", "high"), _entry("edit")),
        _plan(_entry("read", "completed", "high"), _entry("edit", "in_progress"),
              _entry("test", "pending", "low"))])
    plans = [e for e in events if e.type == "agent_plan"]
    assert [len(p.entries) for p in plans] == [2, 3]  # each one the whole list
    view = fold_events(events)
    assert [(r.content, r.status, r.priority) for r in view.plan] == [
        ("read", "completed", "high"), ("edit", "in_progress", "medium"),
        ("test", "pending", "low")]
    assert describe(plans[1]).text == "1 of 3 done · now: edit"
    # The transcript says so once per update, in one line.
    assert [i.text for i in view.items if getattr(i, "kind", "") == "plan"] == [
        "≡ the agent's plan: 0 of 2 done · now: read",
        "≡ the agent's plan: 1 of 3 done · now: edit"]


@pytest.mark.parametrize(("entries", "plan", "dropped"), [
    ([_entry("x" * 5000)], "cut", 0),  # cut to 1,000 characters, saying so
    ([_entry("a\x1b[2Jb\x07")], [("a\\x1b[2Jb\\x07", "pending", "medium")], 0),
    # The SDK leaves out an entry it cannot read (a status or priority ACP has not, content
    # that is not text) and keeps the rest.
    ([_entry("ok"), _entry("bad", "blocked")], [("ok", "pending", "medium")], 0),
    ([_entry("ok", priority="urgent"), _entry("fine")], [("fine", "pending", "medium")], 0),
    ([_entry(17)], [], 0),
    ([_entry(None), "text", 5], [], 0),
    ([], [], 0),  # the agent cleared its plan
    ([_entry(f"s{i}") for i in range(5000)], 200, 4800),  # huge: 200 kept, the rest counted
])
def test_hostile_plans(tmp_path, entries, plan, dropped):
    state, events = _scripted(tmp_path, [_plan(_entry("first")), _plan(*entries)])
    assert state.status == "completed"
    view = fold_events(events)
    if plan == "cut":
        (row,) = view.plan
        assert row.content.startswith("x" * 900) and len(row.content) <= 1000
        assert "4," in row.content  # how much was cut
    elif isinstance(plan, int):
        assert len(view.plan) == plan and view.plan_dropped == dropped
    else:
        assert [tuple(r) for r in view.plan] == plan and view.plan_dropped == dropped


def test_a_journal_before_agent_plan_still_pins_its_plan():
    """Journals written before `agent_plan` carry the plan as a `model_decision`."""
    entries = [{"content": "read", "status": "completed", "priority": "high"},
               {"content": 5}, "not an entry", {"status": "in_progress"}]
    view = fold_events([ModelDecisionEvent(seq=0, action="plan", tool_input={
        "entries": entries}, rationale="[x] read")])
    assert [tuple(r) for r in view.plan] == [("read", "completed", "high"),
                                             ("", "pending", "medium"),
                                             ("", "in_progress", "medium")]
    assert len(view.items) == 1  # its transcript row as before
