"""`KeyArming`, by a fake clock: a key answers only the request drawn on screen, and only once
`ARM_SECONDS` have passed since it was first drawn; otherwise it answers nothing, and says why."""

from __future__ import annotations

from fakes.clock import FakeClock
from hypothesis import given
from hypothesis import strategies as st

from cockpit.widgets.approval import ARM_SECONDS, KeyArming


def test_the_delay_is_a_short_named_moment() -> None:
    assert 0.3 <= ARM_SECONDS <= 1.0  # like browsers' permission prompts


def test_a_newly_drawn_request_arms_after_the_delay() -> None:
    clock = FakeClock()
    arming = KeyArming(clock=clock)
    assert arming.target() == (None, "no request is on screen yet")
    assert arming.drawn("a1") is True
    target = arming.target()
    assert target.approval_id is None and "just shown" in target.why and "0.5 s" in target.why
    clock.advance(ARM_SECONDS - 0.01)
    assert arming.target().approval_id is None and not arming.armed()
    clock.advance(0.01)
    assert arming.target().approval_id == "a1" and arming.armed()


def test_drawing_the_same_request_again_does_not_re_arm_it() -> None:
    clock = FakeClock()
    arming = KeyArming(clock=clock)
    arming.drawn("a1")
    clock.advance(ARM_SECONDS)
    assert arming.drawn("a1") is False  # a redraw (a resize, the countdown): still armed
    assert arming.target().approval_id == "a1"


def test_an_answered_request_is_not_answered_again_and_the_next_waits_for_its_frame() -> None:
    clock = FakeClock()
    arming = KeyArming(clock=clock)
    arming.drawn("a1")
    clock.advance(ARM_SECONDS)
    arming.answered("a1")
    target = arming.target()  # the second of two presses arriving together
    assert target.approval_id is None and "already answered" in target.why
    clock.advance(60)  # however long: not until the next request is drawn
    assert arming.target().approval_id is None
    arming.drawn("a2")
    assert arming.target().approval_id is None  # new: the delay again
    clock.advance(ARM_SECONDS)
    assert arming.target().approval_id == "a2"


def test_a_request_hidden_and_shown_again_is_new_again() -> None:
    clock = FakeClock()
    arming = KeyArming(clock=clock)
    arming.drawn("a1")
    clock.advance(ARM_SECONDS)
    arming.hidden()  # behind a question, say
    assert arming.target().approval_id is None
    assert arming.drawn("a1") is True
    assert arming.target().approval_id is None
    clock.advance(ARM_SECONDS)
    assert arming.target().approval_id == "a1"


def test_no_delay_answers_as_soon_as_it_is_drawn() -> None:
    arming = KeyArming(seconds=0.0, clock=FakeClock())
    assert arming.target().approval_id is None  # never before it is drawn
    arming.drawn("a1")
    assert arming.target().approval_id == "a1"


@given(st.lists(st.one_of(
    st.tuples(st.just("draw"), st.sampled_from(["a1", "a2", "a3"])),
    st.tuples(st.just("answer"), st.sampled_from(["a1", "a2", "a3"])),
    st.tuples(st.just("hide"), st.just("")),
    st.tuples(st.just("wait"), st.floats(min_value=0, max_value=2 * ARM_SECONDS))),
    max_size=30))
def test_a_key_answers_only_what_was_drawn_and_armed(steps: list[tuple[str, object]]) -> None:
    clock = FakeClock()
    arming = KeyArming(clock=clock)
    drawn_at: dict[str, float] = {}  # when each request on screen was drawn (newly)
    on_screen: str | None = None
    for op, arg in steps:
        if op == "draw":
            assert isinstance(arg, str)
            if arg != on_screen:
                drawn_at[arg] = clock()
            on_screen = arg
            arming.drawn(arg)
        elif op == "answer":
            assert isinstance(arg, str)
            arming.answered(arg)
            if arg == on_screen:
                on_screen = None
        elif op == "hide":
            arming.hidden()
            on_screen = None
        else:
            assert isinstance(arg, float)
            clock.advance(arg)
        target = arming.target()
        if target.approval_id is None:
            assert target.why  # never silent
        else:
            assert target.approval_id == on_screen
            assert clock() - drawn_at[on_screen] >= ARM_SECONDS
