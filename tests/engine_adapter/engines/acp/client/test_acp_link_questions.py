"""URL-mode elicitation against the SDK test agent: the client advertises it, the link is asked
with its URL (journaled as the SDK read it), and the human's accept, decline or cancel reaches the
agent as the spec's answer; with no human present it is declined. Hostile links are asked all the
same (the views escape them and refuse to open them); a link too long to read is declined."""

from __future__ import annotations

import json
import shlex

import pytest
from fakes.acp_agent.helpers import agent_argv, agent_log, drive
from support.event_loop import run
from typer.testing import CliRunner

from cockpit.cli.main import app
from engine_adapter.engines.acp import AcpRunner
from engine_adapter.engines.acp.client.elicitation import URL_LIMIT
from engine_adapter.events import link_refusal


def _task(tmp_path, task, *, answer=None, **session_kwargs):
    """Run one task on the test agent; returns (state, journal, agent log)."""
    log, workspace = tmp_path / "agent.jsonl", tmp_path / "ws"
    workspace.mkdir(exist_ok=True)

    async def main():
        runner = AcpRunner(agent_argv("--log", log), cwd=workspace)
        try:
            return await drive(runner, task, tmp_path / "run.jsonl", answer=answer,
                               **session_kwargs)
        finally:
            await runner.close()

    state, journal = run(main())
    return state, journal, agent_log(log)


def _one(events, kind):
    found = [e for e in events if e.type == kind]
    assert len(found) == 1, [e.type for e in events]
    return found[0]


def _answer_with(action, seen=None):
    def answer(session, event):
        if event.type == "question_asked":
            if seen is not None:
                seen.append(event)
            session.answer_question(event.question_id, action, {})
    return answer


def _ask_url(url: str) -> str:
    return "ask-url " + json.dumps(url)


def test_the_client_advertises_form_and_link_questions(tmp_path):
    _, _, logged = _task(tmp_path, "hello")
    assert logged[0]["elicitation_form"] is True and logged[0]["elicitation_url"] is True


@pytest.mark.parametrize(("action", "agent_gets"), [
    ("accept", "accept null"),  # URL mode: an accept carries no content
    ("decline", "decline null"),
    ("cancel", "cancel null"),
])
def test_the_humans_answer_to_a_link_reaches_the_agent(tmp_path, action, agent_gets):
    seen = []
    state, journal, logged = _task(tmp_path, "ask-url", answer=_answer_with(action, seen))
    asked = _one(journal, "question_asked")
    assert (asked.message, asked.url, asked.fields) == ("Log in, please",
                                                        "https://example.com/login", [])
    assert seen and seen[0].url == asked.url  # asked while live, not after
    answered = _one(journal, "question_answered")
    assert (answered.action, answered.via) == (action, "human")
    assert state.result == agent_gets
    assert {"event": "elicitation", "action": action, "content": None} in logged


def test_unattended_a_link_is_declined_and_journaled_with_its_url(tmp_path):
    _, journal, logged = _task(tmp_path, "ask-url", unattended=True)
    assert _one(journal, "question_asked").url == "https://example.com/login"
    answered = _one(journal, "question_answered")
    assert (answered.action, answered.via) == ("decline", "auto")
    assert {"event": "elicitation", "action": "decline", "content": None} in logged


@pytest.mark.parametrize(("sent", "journaled", "openable"), [
    ("javascript:alert(document.cookie)", "javascript:alert(document.cookie)", False),
    ("file:///etc/passwd", "file:///etc/passwd", False),
    ("data:text/html,<script>x</script>", "data:text/html,<script>x</script>", False),
    ("https://bank.example@evil.example/", "https://bank.example@evil.example/", False),
    ("https://example.com/\u001b[2J\u0007", "https://example.com/%1B[2J", True),  # encoded
    ("https://example.com/\u202etxt.exe", "https://example.com/%E2%80%AEtxt.exe", True),
    ("https://exa\u200bmple.com/", "https://example.com/", True),  # the SDK drops it (IDNA)
    ("https://\u0430pple.com/", "https://xn--pple-43d.com/", True),  # a look-alike: punycode
])
def test_hostile_links_are_asked_as_the_sdk_read_them(tmp_path, sent, journaled, openable):
    state, journal, _ = _task(tmp_path, _ask_url(sent), answer=_answer_with("decline"))
    asked = _one(journal, "question_asked")
    assert asked.url == journaled
    assert (link_refusal(asked.url) is None) is openable
    assert state.result == "decline null"


def test_a_link_too_long_to_read_is_declined_at_once(tmp_path):
    asked_human = []
    url = "https://example.com/" + "x" * URL_LIMIT
    state, journal, _ = _task(tmp_path, _ask_url(url), answer=_answer_with("accept",
                                                                           asked_human))
    answered = _one(journal, "question_answered")
    assert answered.via == "auto" and "characters long" in answered.reason
    assert len(_one(journal, "question_asked").url) == URL_LIMIT
    assert state.result == "decline null"


def test_a_ten_thousand_character_link_is_asked(tmp_path):
    url = "https://example.com/" + "y" * 10_000
    state, journal, _ = _task(tmp_path, _ask_url(url), answer=_answer_with("accept"))
    assert _one(journal, "question_asked").url == url
    assert state.result == "accept null"


def test_headless_declines_a_link_and_shows_it_escaped_and_cut(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    url = "javascript:alert(1)//" + "z" * 2_000
    result = CliRunner().invoke(app, [
        "run", _ask_url(url), "--agent", shlex.join(agent_argv()), "--cwd", str(tmp_path),
        "--headless"])
    assert result.exit_code == 0, result.output
    line = next(li for li in result.output.splitlines() if li.lstrip().startswith("question"))
    assert "q-1 Log in, please — link: javascript:alert(1)//zzz" in line
    assert "more characters" in line and "z" * 600 not in line
    assert "declined  q-1 declined automatically (no human is present to answer)" in \
        result.output
