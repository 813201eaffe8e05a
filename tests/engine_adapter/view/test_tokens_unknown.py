"""Token counts an engine never reported read "unknown", a reported 0 reads 0 (issue 25 §3): the
fold's `tokens_reported` and model calls, and the usage line of each event, for every mix of
reported counts, cost-only updates (an ACP agent's `usage_update`) and old journals' events."""

from __future__ import annotations

import pytest

from engine_adapter.events import ModelUsage, parse_event
from engine_adapter.view import RunFold, describe

COST_ONLY = ModelUsage(cost_usd=0.01, cost=0.01, currency="USD", context_used=10,
                       context_size=100, scope="session")
ZERO = ModelUsage(input_tokens=0, output_tokens=0)
SOME = ModelUsage(input_tokens=1200, output_tokens=80, cost_usd=0.002)


@pytest.mark.parametrize(("events", "reported", "calls", "tokens"), [
    ([], False, 0, (0, 0)),
    ([COST_ONLY], False, 0, (0, 0)),
    ([COST_ONLY, COST_ONLY], False, 0, (0, 0)),
    ([ZERO], True, 1, (0, 0)),  # a reported 0 is a 0
    ([COST_ONLY, ZERO], True, 1, (0, 0)),
    ([SOME, COST_ONLY], True, 1, (1200, 80)),
    ([COST_ONLY, SOME, SOME], True, 2, (2400, 160)),
    # An old journal's event (no field): it carried counts, reported.
    ([parse_event({"type": "model_usage", "session_id": "s", "seq": 0, "ts": 1.0,
                   "input_tokens": 0, "output_tokens": 0})], True, 1, (0, 0)),
    ([ModelUsage(input_tokens=5, output_tokens=1)], True, 1, (5, 1)),
])
def test_the_fold_knows_whether_any_count_was_reported(events, reported, calls, tokens):
    view = RunFold().apply_all(events)
    assert view.tokens_reported is reported
    assert view.model_calls == calls
    assert (view.input_tokens, view.output_tokens) == tokens
    if COST_ONLY in events:
        assert view.cost_usd is not None and view.context == (10, 100)


@pytest.mark.parametrize(("event", "text"), [
    (COST_ONLY, "context 10% of 100 tokens · +$0.0100"),
    (ModelUsage(scope="session", model="m"), "usage reported"),
    (ZERO, "0 in / 0 out tokens"),
    (SOME, "1,200 in / 80 out tokens, $0.0020"),
])
def test_each_usage_line_says_unknown_only_when_unreported(event, text):
    assert describe(event).text == text


def test_the_field_round_trips_and_an_old_line_reads_as_reported():
    line = COST_ONLY.model_dump_json()
    assert parse_event(line).scope == "session"
    assert parse_event(ZERO.model_dump_json()).scope is None
