"""Secrets by shape (`engine_adapter.redact`): every kind, embedded anywhere, never survives;
text without a shape is unchanged; the cheap pre-check never hides one. And the Session: a
secret in any field of any event is redacted in the journal, the history and every stream."""

from __future__ import annotations

import asyncio
import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_adapter import (
    AgentEnd,
    AgentStart,
    JsonlEventJournal,
    ModelDecisionEvent,
    Session,
    TaskState,
    ToolEnd,
    ToolStart,
    VerificationPlanFrozen,
    read_journal,
)
from engine_adapter.events import VerificationCheck
from engine_adapter.redact import MARK, find_secrets, may_hold_secret, redact

ALNUM = string.ascii_letters + string.digits


def chars(alphabet: str, low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=low, max_size=high)


def with_digit_and_capital(body: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(body, st.sampled_from(string.digits),
                     st.sampled_from(string.ascii_uppercase)).map(lambda t: t[0] + t[1] + t[2])


KEYS: dict[str, st.SearchStrategy[str]] = {
    "openai key": st.one_of(
        with_digit_and_capital(chars(ALNUM, 46, 60)).map(lambda b: "sk-" + b),
        st.tuples(st.sampled_from(["proj-", "svcacct-", "admin-"]),
                  chars(ALNUM + "_-", 20, 160)).map(lambda t: "sk-" + t[0] + t[1])),
    "anthropic key": chars(ALNUM + "_-", 20, 100).map(lambda b: "sk-ant-api03-" + b),
    "github token": st.one_of(
        st.tuples(st.sampled_from("pousr"), chars(ALNUM, 36, 40)).map(
            lambda t: f"gh{t[0]}_{t[1]}"),
        chars(ALNUM + "_", 60, 82).map(lambda b: "github_pat_" + b)),
    "gitlab token": chars(ALNUM + "_-", 20, 20).map(lambda b: "glpat-" + b),
    "aws access key id": st.tuples(st.sampled_from(["AKIA", "ASIA"]),
                                   chars(string.ascii_uppercase + string.digits, 16, 16)).map(
        "".join),
    "google api key": chars(ALNUM + "_-", 35, 35).map(lambda b: "AIza" + b),
    "slack token": st.tuples(st.sampled_from("abpr"), chars(string.digits, 12, 12),
                             chars(ALNUM, 24, 24)).map(lambda t: f"xox{t[0]}-{t[1]}-{t[2]}"),
    "stripe key": st.tuples(st.sampled_from(["sk", "rk"]), st.sampled_from(["live", "test"]),
                            chars(ALNUM, 24, 99)).map(lambda t: f"{t[0]}_{t[1]}_{t[2]}"),
    "hugging face token": chars(ALNUM, 34, 34).map(lambda b: "hf_" + b),
    "npm token": chars(ALNUM, 36, 36).map(lambda b: "npm_" + b),
    "json web token": st.tuples(chars(ALNUM + "_-", 20, 40), chars(ALNUM + "_-", 20, 80),
                                chars(ALNUM + "_-", 43, 43)).map(
        lambda t: f"eyJ{t[0]}.eyJ{t[1]}.{t[2]}"),
    "private key": st.tuples(st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]),
                             st.lists(chars(ALNUM + "+/=", 64, 64), min_size=1, max_size=4)).map(
        lambda t: f"-----BEGIN {t[0]}PRIVATE KEY-----\n" + "\n".join(t[1])
        + f"\n-----END {t[0]}PRIVATE KEY-----"),
}
KEY = st.one_of(*KEYS.values())
ANYTHING = st.text(max_size=60)


@settings(max_examples=300)
@given(KEY, ANYTHING, ANYTHING)
def test_a_key_anywhere_in_a_text_never_reaches_the_output(key, before, after) -> None:
    out = redact(before + key + after)
    assert key not in out and "«redacted:" in out


@pytest.mark.parametrize("kind", sorted(KEYS))
@settings(max_examples=40)
@given(data=st.data())
def test_each_kind_is_named(kind, data) -> None:
    key = data.draw(KEYS[kind])
    assert redact(f"here: {key} .") == f"here: {MARK.format(kind)} ."
    assert find_secrets(key) == [kind]


@settings(max_examples=300)
@given(KEY, ANYTHING, ANYTHING)
def test_the_pre_check_never_hides_a_secret(key, before, after) -> None:
    assert may_hold_secret(before + key + after) and may_hold_secret(
        (before + key + after).encode("utf-8", "surrogatepass"))


# Words too short to be any shape (the shortest needs 16 characters in one run), joined by
# anything that breaks a run: what text without a key looks like, in every script.
WORD = st.text(st.characters(blacklist_characters=" \n\t.,\"'!?"), max_size=12)
PLAIN = st.lists(st.tuples(WORD, st.sampled_from([" ", "\n", ". ", ", ", "\t", '"', "!"])),
                 max_size=30).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=300)
@given(PLAIN)
def test_text_without_a_key_shape_is_unchanged(text) -> None:
    assert redact(text) is text


@pytest.mark.parametrize("text", [
    "risk-assessment-framework-version-two", "desk-organizer-with-many-parts",
    "pytest tests/engine_adapter/test_redact.py -q", "MAX_TOKENS=4096",
    "https://example.com/a/b/c?x=1", "sk-learn", "the AKIA prefix", "Bearer token here",
    "ghp_short", "eyJhbGciOiJIUzI1NiJ9", "git@github.com:user/repo.git",
    "-----BEGIN CERTIFICATE-----",
    "a/very/long/path/to/some/file_name_that_is_long.py", "session_id=abc",
])
def test_look_alikes_stay(text) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "shown"), [
    ("OPENAI_API_KEY=sk-abcDEF1234567890abcdefghij", "OPENAI_API_KEY=«redacted: openai key»"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "AWS_SECRET_ACCESS_KEY=«redacted: secret value»"),
    ("export GITHUB_TOKEN='abcdefghijklmnopqrstuv'",
     "export GITHUB_TOKEN='«redacted: secret value»'"),
    ("PGPASSWORD=correcthorsebattery", "PGPASSWORD=«redacted: secret value»"),
    ("DATABASE_URL=postgres://app:s3cretpassw0rd@db:5432/x",
     "DATABASE_URL=postgres://app:«redacted: secret value»@db:5432/x"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n(cut)",
     "«redacted: private key»(cut)"),
])
def test_assignments_urls_and_cut_blocks(text, shown) -> None:
    assert redact(text) == shown


def test_the_pre_check_needs_a_long_run() -> None:
    assert not may_hold_secret(b'{"type":"model_update","text":"token 5 ","channel":"message"}')
    assert re.fullmatch(r"«redacted: [a-z ]+»", MARK.format("openai key"))


# -- the Session: redacted before the journal and before anyone sees it ----------------------

OPENAI = "sk-proj-" + "Ab3" * 20
GITHUB = "ghp_" + "x1Y2" * 9
AWS = "AKIA" + "Q7" * 8


class Leaky:
    """An engine whose every kind of field carries a key."""

    event_sink = approval_controller = cancel_token = None

    async def run(self, state: TaskState) -> TaskState:
        emit = self.event_sink.emit  # type: ignore[attr-defined]  # wired by the Session
        emit(AgentStart(task=state.task, engine="leaky"))
        emit(ModelDecisionEvent(turn=1, action="tool", tool="shell",
                                tool_input={"command": f"curl -H 'Authorization: {GITHUB}'",
                                            GITHUB: [AWS, {"deep": OPENAI}]},
                                rationale=f"use {OPENAI}"))
        emit(ToolStart(call_id="c1", tool="shell", tool_input={"command": "printenv"}, tier=3,
                       title=f"run with {AWS}", extra_field=OPENAI))
        emit(ToolEnd(call_id="c1", tool="shell", ok=True, output=f"OPENAI_API_KEY={OPENAI}\n"))
        emit(VerificationPlanFrozen(checks=[VerificationCheck(id="1", name="n",
                                                              command=f"test {GITHUB}")]))
        emit(AgentEnd(status="completed", result=f"done {AWS}"))
        return state


def test_no_event_field_keeps_a_key(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    session = Session(Leaky(), TaskState(task=f"my key is {OPENAI}"),
                      journal=JsonlEventJournal(path))

    async def main() -> list:
        stream = session.events()
        seen = []

        async def watch() -> None:
            async for event in stream:
                seen.append(event)

        watcher = asyncio.ensure_future(watch())
        await session.run()
        await watcher
        return seen

    seen = asyncio.run(main())
    text = path.read_text()
    for key in (OPENAI, GITHUB, AWS):
        assert key not in text
        assert not any(key in e.model_dump_json() for e in seen)
        assert not any(key in e.model_dump_json() for e in session.history)
    assert "«redacted: openai key»" in text and "«redacted: github token»" in text
    events = list(read_journal(path))
    assert events[0].task == "my key is «redacted: openai key»"
    assert [json.loads(line)["seq"] for line in text.splitlines()] == list(range(len(events)))
