"""Steering an ACP agent: its commands, its questions and a denial's reason, against the SDK test
agent, through a Session (as the live cockpit drives it), headless and on the command line; and
what replay and export show of them."""

from __future__ import annotations

import json
import shlex

import pytest
from acp.schema import ElicitationSchema
from fakes.acp_agent.helpers import agent_argv, agent_log, drive
from support.event_loop import run
from typer.testing import CliRunner

from cockpit.cli.main import app
from engine_adapter import read_journal
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.acp.client.questions import UnsupportedForm, fields_from_schema

ALL_VALUES = {"text": "Ada", "number": "2.5", "integer": 4, "boolean": False,
              "choice": "staging", "enum": "green", "multi": ["mac", "linux"]}


def _tasks(tmp_path, tasks, *, answer=None, agent_args=(), **session_kwargs):
    """Run `tasks` one after another on one agent; returns (states, journals, agent log)."""
    log = tmp_path / "agent.jsonl"
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)

    async def main():
        runner = AcpRunner(agent_argv("--log", log, *agent_args), cwd=workspace)
        results = []
        try:
            for i, task in enumerate(tasks):
                results.append(await drive(runner, task, tmp_path / f"run-{i}.jsonl",
                                           answer=answer, **session_kwargs))
        finally:
            await runner.close()
        return results

    results = run(main())
    return [r[0] for r in results], [r[1] for r in results], agent_log(log)


def _one(events, kind):
    found = [e for e in events if e.type == kind]
    assert len(found) == 1, [e.type for e in events]
    return found[0]


# -- commands -----------------------------------------------------------------------------------

def test_the_agents_commands_are_journaled_in_every_task_and_a_command_runs(tmp_path):
    states, journals, logged = _tasks(tmp_path, ["hello", "/review the tests"])
    for events in journals:
        offered = _one(events, "commands_available").commands
        assert [(c.name, c.hint) for c in offered] == [
            ("review", "what to focus on"), ("compact", None), ("memory show", None)]
    assert states[1].result == "ran /review with 'the tests'"
    assert {"event": "command", "name": "review", "args": "the tests"} in logged


def test_cockpit_run_with_a_slash_command_headless(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    log, journal = tmp_path / "agent.jsonl", tmp_path / "run.jsonl"
    result = CliRunner().invoke(app, [
        "run", "/memory show", "--agent", shlex.join(agent_argv("--log", log)), "--cwd",
        str(tmp_path), "--headless", "--journal", str(journal)])
    assert result.exit_code == 0, result.output
    assert "ran /memory show" in result.output
    assert "commands  /review, /compact, /memory show" in result.output
    assert {"event": "command", "name": "memory show", "args": ""} in agent_log(log)
    assert _one(list(read_journal(journal)), "commands_available").commands[0].name == "review"


# -- questions ----------------------------------------------------------------------------------

def _answer_with(action, values=None):
    def answer(session, event):
        if event.type == "question_asked":
            session.answer_question(event.question_id, action, values)
    return answer


def test_a_question_with_every_field_kind_is_answered_by_the_human(tmp_path):
    states, journals, logged = _tasks(tmp_path, ["ask"], answer=_answer_with("accept",
                                                                             ALL_VALUES))
    asked = _one(journals[0], "question_asked")
    assert asked.call_id == "ask-1" and asked.message == "A few questions before I start"
    assert [(f.name, f.kind, f.required) for f in asked.fields] == [
        ("text", "text", True), ("number", "number", False), ("integer", "integer", False),
        ("boolean", "boolean", False), ("choice", "choice", True), ("enum", "choice", False),
        ("multi", "multi", False)]
    by_name = {f.name: f for f in asked.fields}
    assert [(o.value, o.label) for o in by_name["choice"].options] == [
        ("dev", "Development"), ("staging", "Staging")]
    assert by_name["integer"].default == 2 and by_name["boolean"].default is True
    sent = {"text": "Ada", "number": 2.5, "integer": 4, "boolean": False, "choice": "staging",
            "enum": "green", "multi": ["mac", "linux"]}
    assert _one(journals[0], "question_answered").values == sent
    elicited = next(e for e in logged if e["event"] == "elicitation")
    assert elicited == {"event": "elicitation", "action": "accept", "content": sent}
    assert states[0].result.startswith("accept ")


def test_a_declined_question_reaches_the_agent_as_declined(tmp_path):
    states, journals, _ = _tasks(tmp_path, ["ask text"], answer=_answer_with("decline"))
    answered = _one(journals[0], "question_answered")
    assert (answered.action, answered.via) == ("decline", "human")
    assert states[0].result == "decline null"


def test_unattended_questions_are_declined_and_journaled(tmp_path):
    _, journals, logged = _tasks(tmp_path, ["ask boolean"], unattended=True)
    answered = _one(journals[0], "question_answered")
    assert (answered.action, answered.via) == ("decline", "auto")
    assert {"event": "elicitation", "action": "decline", "content": None} in logged


@pytest.mark.parametrize(("task", "why"), [
    ("ask-bad", "the cockpit cannot show this form: the required field 'odd'"),
])  # link questions: tests/engine_adapter/engines/acp/client/test_acp_link_questions.py
def test_questions_the_cockpit_cannot_take_are_declined_at_once(tmp_path, task, why):
    asked_human = []

    def answer(session, event):
        if event.type == "question_asked":
            asked_human.append(event)

    states, journals, _ = _tasks(tmp_path, [task], answer=answer)
    answered = _one(journals[0], "question_answered")
    assert answered.via == "auto" and answered.reason.startswith(why)
    assert states[0].result == "decline null"
    assert asked_human and not asked_human[0].fields  # shown, with nothing to fill in


def test_headless_cli_declines_a_question_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, [
        "run", "ask choice", "--agent", shlex.join(agent_argv()), "--cwd", str(tmp_path),
        "--headless"])
    assert result.exit_code == 0, result.output
    assert "question  q-1 A few questions before I start — Database (one of: " \
           "Development, Staging, required)" in result.output
    assert "declined  q-1 declined automatically (no human is present to answer)" in \
        result.output


def _schema(properties, required=()):
    return ElicitationSchema.model_validate({"type": "object", "properties": properties,
                                             "required": list(required)})


@pytest.mark.parametrize("where", ["title", "description"])
@pytest.mark.parametrize("hostile", ["\x1b[2J\x1b]0;owned\x07", "a\u202eb", "x\x00y", "\r\x08"])
def test_an_agents_words_in_a_form_are_cleaned(where, hostile):
    fields, _ = fields_from_schema(_schema({"f": {"type": "string", where: hostile}}))
    shown = getattr(fields[0], where)
    assert not any(ch in shown for ch in "\x1b\x07\u202e\x00\r\x08")


def test_hostile_option_labels_are_cleaned_and_values_kept():
    fields, _ = fields_from_schema(_schema({"f": {"type": "string", "oneOf": [
        {"const": "v\x1b", "title": "\x1b[31mred\x1b[0m " + "x" * 5000}]}}))
    option = fields[0].options[0]
    assert option.value == "v\x1b"  # goes back to the agent as it sent it
    assert "\x1b" not in option.label and "dropped" in option.label
    assert len(option.label) < 400  # capped (counted before the escapes that show it)


@pytest.mark.parametrize(("properties", "required", "says"), [
    ({f"f{i}": {"type": "string"} for i in range(41)}, (), "41 fields"),
    ({"x" * 201: {"type": "string"}}, (), "longer than 200"),
    ({"f": {"type": "string", "enum": [str(i) for i in range(201)]}}, (), "201 options"),
    ({"f": {"type": "array", "items": {"anyOf": [{"const": str(i), "title": "t"}
                                                 for i in range(300)]}}}, (), "300 options"),
    ({"f": {"type": "_colour"}}, ("f",), "cannot take"),
])
def test_forms_that_cannot_be_shown_truthfully_are_refused(properties, required, says):
    with pytest.raises(UnsupportedForm, match=says):
        fields_from_schema(_schema(properties, required))


def test_an_optional_field_of_an_unknown_kind_is_left_out_and_named():
    fields, left_out = fields_from_schema(_schema({"a": {"type": "_colour"},
                                                   "b": {"type": "boolean"}}))
    assert [f.name for f in fields] == ["b"] and left_out == ["a"]


def test_defaults_outside_the_options_are_dropped():
    fields, _ = fields_from_schema(_schema({
        "c": {"type": "string", "enum": ["a", "b"], "default": "z"},
        "m": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["a", "q"]},
    }))
    assert fields[0].default is None and fields[1].default == ["a"]


# -- a denial's reason --------------------------------------------------------------------------

def _deny(reason):
    def answer(session, event):
        if event.type == "approval_requested":
            session.resolve_approval(event.approval_id, allow=False, reason=reason)
    return answer


def test_a_deny_reason_goes_with_the_next_prompt(tmp_path):
    states, journals, logged = _tasks(tmp_path, ["deny-wait git push", "hello"],
                                      answer=_deny("use the staging remote"))
    assert states[0].result == "reject_once; note: (none)"
    assert _one(journals[0], "approval_resolved").reason == "use the staging remote"
    note = _one(journals[1], "prompt_note")
    assert note.delivery == "with_prompt" and note.approval_id == "deny-1"
    assert note.text.endswith("My reason: use the staging remote")
    prompts = [e for e in logged if e["event"] == "prompt"]
    assert prompts[1]["blocks"] == [note.text, "hello"]  # the note first, then the task
    assert prompts[0]["blocks"] == ["deny-wait git push"]
    types = [e.type for e in journals[1]]
    assert types.index("prompt_note") > types.index("turn_start")


def test_a_deny_reason_reaches_a_steering_agent_inside_the_turn(tmp_path):
    states, journals, logged = _tasks(tmp_path, ["deny-wait git push", "hello"],
                                      answer=_deny("not on Fridays"),
                                      agent_args=("--mode", "steering"))
    assert states[0].result.endswith("My reason: not on Fridays")
    note = _one(journals[0], "prompt_note")
    assert note.delivery == "in_turn"
    steered = next(e for e in logged if e["event"] == "steering")
    assert steered["in_turn"] is True and steered["idle"] == "promptRequired"
    assert not [e for e in journals[1] if e.type == "prompt_note"]  # not sent twice
    assert [e for e in logged if e["event"] == "prompt"][1]["blocks"] == ["hello"]


def test_a_denied_write_tells_the_agent_the_reason_in_its_error(tmp_path):
    states, journals, _ = _tasks(tmp_path, ["write out.txt"], mode="ask",  # a write that asks
                                 answer=_deny("write it under build/ instead"))
    assert "The user's reason: write it under build/ instead" in states[0].result
    assert _one(journals[0], "approval_resolved").reason == "write it under build/ instead"


def test_no_reason_no_note(tmp_path):
    _, journals, logged = _tasks(tmp_path, ["deny-wait git push", "hello"],
                                 answer=_deny(None))
    assert not [e for j in journals for e in j if e.type == "prompt_note"]
    assert [e for e in logged if e["event"] == "prompt"][1]["blocks"] == ["hello"]


def test_json_of_the_form_round_trips_through_the_journal(tmp_path):
    _, journals, _ = _tasks(tmp_path, ["ask"], answer=_answer_with("accept", ALL_VALUES))
    asked = _one(journals[0], "question_asked")
    assert json.loads(asked.model_dump_json())["fields"][4]["options"][0] == {
        "value": "dev", "label": "Development"}



# -- replay and export ----------------------------------------------------------------------------

def test_questions_and_reasons_replay_and_export(tmp_path):
    from support.pilot import until_shown
    from support.replay_app import opened

    from cockpit.export import export_journal
    from cockpit.replay import ReplayApp

    def answer(session, event):
        if event.type == "question_asked":
            session.answer_question(event.question_id, "accept", {"choice": "dev"})
        if event.type == "approval_requested":
            session.resolve_approval(event.approval_id, allow=False, reason="not today")

    _tasks(tmp_path, ["ask choice", "deny-wait git push", "hello"], answer=answer)
    report = export_journal(tmp_path / "run-0.jsonl", "markdown").text
    assert ("**Question:** the agent asks: A few questions before I start (Database (one of: "
            "Development, Staging, required)) → answered by a human: Database: Development"
            ) in report
    assert "Approval: denied by a human (reason: not today)" in \
        export_journal(tmp_path / "run-1.jsonl", "markdown").text
    assert "passed on to the agent with the task" in \
        export_journal(tmp_path / "run-2.jsonl", "html").text

    path = tmp_path / "run-0.jsonl"
    events = list(read_journal(path))
    asked_at = next(i for i, e in enumerate(events) if e.type == "question_asked")

    async def main():
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await until_shown(pilot, lambda: opened(app))
            app.replay_screen.seek(asked_at)
            await until_shown(pilot, lambda: app.position_shown == asked_at)
            form = app.replay_screen.query_one("#question")
            await until_shown(pilot, lambda: form.has_class("-open"))
            assert not form.answerable and not form.check_action("send_answer", ())
            assert all(w.disabled for w in form.query("#qf-0"))
            await pilot.press("end")
            await until_shown(pilot, lambda: not form.has_class("-open"))
            row = next(i for i in app.replay_screen.view.items if i.kind == "question")
            assert row.state == "accept" and row.values == {"choice": "dev"}

    run(main())


# -- an agent's commands, hostile -----------------------------------------------------------------

def _offered(*commands):
    from acp.schema import AvailableCommand

    from engine_adapter.engines.acp.client.commands import agent_commands
    return agent_commands([AvailableCommand.model_validate(c) for c in commands])


@pytest.mark.parametrize("name", ["\x1b[31mreview", "re\u202eview", "re\x00view", "re\nview",
                                  "re\x07view"])
def test_a_commands_unsafe_characters_are_shown_not_obeyed(name):
    command, = _offered({"name": name, "description": "\x1b]0;owned\x07 \x1b[2J d"})
    assert not any(ch in command.name + command.description for ch in "\x1b\x07\x00\u202e")


def test_commands_are_capped_named_once_and_without_a_leading_slash():
    offered = _offered(*({"name": f"c{i}", "description": "x" * 5000} for i in range(600)),
                       {"name": "c1", "description": "again"})
    assert len(offered) == 500 and len({c.name for c in offered}) == 500
    assert len(offered[0].description) < 1_100
    assert [c.name for c in _offered({"name": "/review", "description": ""},
                                     {"name": "  ", "description": "blank"})] == ["review"]
