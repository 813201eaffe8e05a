"""An agent's questions at the Session: asked, answered by a human (checked against the fields),
declined when nobody is present or nobody answers, cancelled with the run; a denial's reason
journaled and kept for the engine."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.event_loop import run
from support.steps import StepRunner

from engine_adapter import (
    JsonlEventJournal,
    QuestionField,
    QuestionOption,
    Session,
    TaskState,
    read_journal,
)
from engine_adapter.context import RunContext
from engine_adapter.events import Answer, AnswerError, answer_text, check_answer, fields_text
from engine_adapter.session.approvals import REASON_LIMIT

FIELDS = [
    QuestionField(name="name", kind="text", title="Your name", required=True, minimum=1),
    QuestionField(name="budget", kind="number", minimum=0, maximum=100),
    QuestionField(name="retries", kind="integer", maximum=5),
    QuestionField(name="tests", kind="boolean", title="Run the tests"),
    QuestionField(name="db", kind="choice", required=True,
                  options=[QuestionOption(value="dev", label="Development"),
                           QuestionOption(value="staging")]),
    QuestionField(name="targets", kind="multi", maximum=2,
                  options=[QuestionOption(value="linux"), QuestionOption(value="mac"),
                           QuestionOption(value="win")]),
]


# -- checking an answer ---------------------------------------------------------------------

def test_a_full_answer_is_checked_and_numbers_given_as_text_are_read():
    values = check_answer(FIELDS, {"name": "Ada", "budget": "12.5", "retries": "3",
                                   "tests": False, "db": "staging",
                                   "targets": ["mac", "linux", "mac"]})
    assert values == {"name": "Ada", "budget": 12.5, "retries": 3, "tests": False,
                      "db": "staging", "targets": ["mac", "linux"]}


def test_empty_optional_fields_are_left_out():
    assert check_answer(FIELDS, {"name": "Ada", "db": "dev", "budget": "", "targets": []}) == {
        "name": "Ada", "db": "dev"}


@pytest.mark.parametrize(("values", "says"), [
    ({"db": "dev"}, "Your name: an answer is required"),
    ({"name": "  ", "db": "dev"}, "Your name: an answer is required"),
    ({"name": "Ada"}, "db: an answer is required"),
    ({"name": "Ada", "db": "prod"}, "db: choose one of the options offered"),
    ({"name": "Ada", "db": "dev", "budget": "lots"}, "budget: a number is needed"),
    ({"name": "Ada", "db": "dev", "budget": 101}, "budget: at most 100"),
    ({"name": "Ada", "db": "dev", "budget": -1}, "budget: at least 0"),
    ({"name": "Ada", "db": "dev", "budget": float("nan")}, "budget: a number is needed"),
    ({"name": "Ada", "db": "dev", "budget": True}, "budget: a number is needed, not yes/no"),
    ({"name": "Ada", "db": "dev", "retries": 2.5}, "retries: a whole number is needed"),
    ({"name": "Ada", "db": "dev", "retries": 9}, "retries: at most 5"),
    ({"name": "Ada", "db": "dev", "tests": "maybe"}, "Run the tests: yes or no is needed"),
    ({"name": "Ada", "db": "dev", "targets": ["bsd"]}, "targets: choose only among"),
    ({"name": "Ada", "db": "dev", "targets": "mac"}, "targets: a list of the options"),
    ({"name": "Ada", "db": "dev", "targets": ["linux", "mac", "win"]}, "choose at most 2"),
    ({"name": "Ada", "db": "dev", "extra": 1}, "extra: the question has no such field"),
    ({"name": 7, "db": "dev"}, "Your name: text is needed"),
])
def test_an_answer_that_does_not_fit_is_refused_naming_the_field(values, says):
    with pytest.raises(AnswerError, match=says):
        check_answer(FIELDS, values)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from([f.name for f in FIELDS] + ["x"]),
                       st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                                 st.text(max_size=20), st.lists(st.text(max_size=5),
                                                                max_size=4))))
def test_any_answer_is_either_refused_or_fits_its_fields(values):
    try:
        checked = check_answer(FIELDS, values)
    except AnswerError as exc:
        assert str(exc)
        return
    by_name = {f.name: f for f in FIELDS}
    for name, value in checked.items():
        field = by_name[name]
        if field.kind == "choice":
            assert value in {o.value for o in field.options}
        elif field.kind == "multi":
            assert set(value) <= {o.value for o in field.options}
        elif field.kind == "boolean":
            assert isinstance(value, bool)
        elif field.kind in ("number", "integer"):
            assert not isinstance(value, bool)
    assert {"name", "db"} <= set(checked)  # required: never answered without them


def test_how_an_answer_and_a_form_read():
    assert answer_text(FIELDS, "accept", {"tests": True, "db": "dev", "targets": ["mac"]}) == (
        "answered by you: Run the tests: yes · db: Development · targets: mac")
    assert answer_text(FIELDS, "decline", None, via="auto", reason="nobody here") == (
        "declined automatically (nobody here)")
    assert fields_text(FIELDS[3:5]) == "Run the tests (yes/no) · db (one of: Development, " \
                                      "staging, required)"


# -- the Session's control plane --------------------------------------------------------------

def _asker(fields=FIELDS, answers=None, call_id=None):
    async def step(r: StepRunner) -> None:
        answer = await RunContext.of(r).ask_question("q-1", "Which database?", fields,
                                                     call_id=call_id)
        answers.append(answer)
    return step


def _run(session, answer=None):
    async def main():
        async def watch():
            async for event in session.events():
                if answer is not None:
                    answer(session, event)
        watcher = asyncio.ensure_future(watch())
        await session.run()
        await watcher
    run(main())


def test_a_human_answers_and_the_answer_is_journaled_before_the_engine_sees_it(tmp_path):
    answers: list[Answer] = []
    path = tmp_path / "run.jsonl"
    session = Session(StepRunner(_asker(answers=answers, call_id="c9")), TaskState(task="t"),
                      journal=JsonlEventJournal(path))

    def answer(s, event):
        if event.type == "question_asked":
            assert [q.question_id for q in s.pending_questions] == ["q-1"]
            with pytest.raises(AnswerError):
                s.answer_question("q-1", "accept", {"name": "Ada"})  # db is required
            assert s.answer_question("q-1", "accept", {"name": "Ada", "db": "dev"})
            assert not s.answer_question("q-1", "decline")  # a stale second answer: nothing

    _run(session, answer)
    assert answers == [Answer("accept", {"name": "Ada", "db": "dev"})]
    events = list(read_journal(path))
    asked = next(e for e in events if e.type == "question_asked")
    assert asked.fields == FIELDS and asked.call_id == "c9"
    answered = [e for e in events if e.type == "question_answered"]
    assert len(answered) == 1 and answered[0].via == "human"
    assert answered[0].values == {"name": "Ada", "db": "dev"}


def test_unattended_declines_at_once_and_journals_it(tmp_path):
    answers: list[Answer] = []
    session = Session(StepRunner(_asker(answers=answers)), TaskState(task="t"), unattended=True,
                      auto_approve=True)
    _run(session)
    assert answers == [Answer("decline")]
    answered = next(e for e in session.history if e.type == "question_answered")
    assert (answered.action, answered.via) == ("decline", "auto")
    assert "no human" in answered.reason


def test_nobody_answering_in_time_declines():
    answers: list[Answer] = []
    session = Session(StepRunner(_asker(answers=answers)), TaskState(task="t"),
                      approval_timeout=0)
    _run(session)
    assert answers == [Answer("decline")]
    assert next(e for e in session.history if e.type == "question_answered").reason == \
        "nobody answered in time"


def test_cancel_answers_an_open_question_cancel():
    answers: list[Answer] = []
    session = Session(StepRunner(_asker(answers=answers)), TaskState(task="t"))

    def answer(s, event):
        if event.type == "question_asked":
            s.cancel("stop")
    _run(session, answer)
    assert answers == [Answer("cancel")]
    assert session.state.status == "cancelled"
    assert [e.action for e in session.history if e.type == "question_answered"] == ["cancel"]


def test_a_controller_that_cannot_ask_declines_and_still_journals():
    class Minimal:
        async def request_approval(self, *args, **kwargs):
            return False

    events = []

    class Sink:
        def emit(self, event):
            events.append(event)

    class Token:
        cancelled, reason = False, None

    context = RunContext(Sink(), Minimal(), Token())
    assert run(context.ask_question("q", "why?", FIELDS)) == Answer("decline")
    assert [e.type for e in events] == ["question_asked", "question_answered"]
    assert context.denial_reason("anything") is None


def test_a_reused_question_id_gets_a_suffix():
    answers: list[Answer] = []
    session = Session(StepRunner(_asker(answers=answers), _asker(answers=answers)),
                      TaskState(task="t"), unattended=True)
    _run(session)
    assert [e.question_id for e in session.history if e.type == "question_asked"] == [
        "q-1", "q-1~2"]


# -- a denial's reason ------------------------------------------------------------------------

def test_a_deny_reason_is_journaled_capped_and_kept_for_the_engine(tmp_path):
    seen = []

    async def step(r: StepRunner) -> None:
        allowed = await r.ask("c1", "shell", {"command": "git push"})
        seen.append((allowed, RunContext.of(r).denial_reason("c1")))

    path = tmp_path / "run.jsonl"
    session = Session(StepRunner(step), TaskState(task="t"), journal=JsonlEventJournal(path))
    words = "  use the staging database " + "x" * (REASON_LIMIT + 100)

    def answer(s, event):
        if event.type == "approval_requested":
            s.resolve_approval("c1", allow=False, reason=words)
    _run(session, answer)
    resolved = next(e for e in read_journal(path) if e.type == "approval_resolved")
    assert resolved.reason.startswith("use the staging database")
    assert len(resolved.reason) <= REASON_LIMIT and "dropped" in resolved.reason
    assert seen == [(False, resolved.reason)]


@pytest.mark.parametrize("reason", [None, "", "   \n "])
def test_no_reason_is_journaled_as_none(reason):
    async def step(r: StepRunner) -> None:
        await r.ask("c1", "shell", {"command": "git push"})

    session = Session(StepRunner(step), TaskState(task="t"))

    def answer(s, event):
        if event.type == "approval_requested":
            s.resolve_approval("c1", allow=False, reason=reason)
    _run(session, answer)
    assert next(e for e in session.history if e.type == "approval_resolved").reason is None
    assert session.denial_reason("c1") is None


class _FailsAt(JsonlEventJournal):
    """A journal whose disk gives out at the first event of `kind`."""

    def __init__(self, path, kind: str) -> None:
        super().__init__(path)
        self.kind = kind

    def write(self, event, *, line=None) -> None:
        if event.type == self.kind:
            raise OSError("No space left on device")
        super().write(event, line=line)


@pytest.mark.parametrize("kind", ["question_asked", "question_answered"])
def test_a_journal_that_fails_at_a_question_fails_the_run_and_answers_nothing(tmp_path, kind):
    answers: list[Answer] = []
    session = Session(StepRunner(_asker(answers=answers)), TaskState(task="t"),
                      journal=_FailsAt(tmp_path / "run.jsonl", kind), approval_timeout=None)

    def answer(s, event):
        if event.type == "question_asked" and kind == "question_answered":
            s.answer_question("q-1", "accept", {"name": "Ada", "db": "dev"})

    # No human answers when the question itself could not be journaled: the run must not wait.
    run(asyncio.wait_for(_run_async(session, answer), 30))
    assert session.state.status == "failed"
    assert "journal write failed" in (session.state.error or "")
    # Never put to anyone, or answered but not recorded: the engine hears `cancel` either way.
    assert answers == [Answer("cancel")]
    kinds = [e.type for e in read_journal(tmp_path / "run.jsonl")]
    assert kind not in kinds and "agent_end" not in kinds  # nothing after the failure


async def _run_async(session, answer):
    async def watch():
        async for event in session.events():
            answer(session, event)
    watcher = asyncio.ensure_future(watch())
    await session.run()
    await watcher
