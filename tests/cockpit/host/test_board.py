"""The fleet's board from the rows hosts push: any JSON a host sends (a broken or hostile one
included) makes a board, never an exception; the inbox is every open ask of every run, oldest
first; and the view shows every text of a run as written, never as markup or escapes."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from support.event_loop import run
from support.fleet import screen_text
from support.pilot import until_shown

from cockpit.host.fleet.board import board
from cockpit.host.fleet.fleet_app import FleetApp

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                     | st.text(max_size=20),
                     lambda children: st.lists(children, max_size=4)
                     | st.dictionaries(st.text(max_size=8), children, max_size=5),
                     max_leaves=20)
_field = st.sampled_from(["id", "task", "engine", "status", "waiting", "activity", "tokens",
                          "cost", "asks", "tasks", "kind", "tool", "command", "asked", "tier"])
_rowish = st.dictionaries(_field, _json, max_size=10)


@given(st.dictionaries(st.text(min_size=1, max_size=6),
                       st.lists(_rowish | _json, max_size=4) | st.text(max_size=20),
                       max_size=3))
@settings(max_examples=300, deadline=None)
def test_any_rows_make_a_board(hosts) -> None:
    made = board(hosts)
    assert [ask.asked for ask in made.inbox] == sorted(ask.asked for ask in made.inbox)
    assert {host for host, _ in made.unreachable} == {h for h, v in hosts.items()
                                                    if isinstance(v, str)}


def _ask(approval_id: str, asked: float, command: str = "$ ls") -> dict:
    return {"kind": "approval", "id": approval_id, "tool": "shell", "command": command,
            "asked": asked}


def test_the_inbox_is_every_ask_of_every_host_oldest_first() -> None:
    made = board({"a": [{"id": "r1", "asks": [_ask("T1", 30.0), _ask("T2", 10.0)]}],
                  "b": [{"id": "r2", "asks": [_ask("T1", 20.0)]}], "c": "unreachable: no"})
    assert [(ask.host, ask.run, ask.id) for ask in made.inbox] == \
        [("a", "r1", "T2"), ("b", "r2", "T1"), ("a", "r1", "T1")]
    assert len({ask.key for ask in made.inbox}) == 3  # the same id in two runs: two asks
    assert made.unreachable == [("c", "unreachable: no")]


HOSTILE = ["[bold red]pwned[/]", "\x1b[2J\x1b[H", "\x1b]0;title\x07", "[link=file:///etc]x[/link]",
           "line\nbreak", "zero\u200bwidth", "\u202eevil"]


def test_a_runs_text_is_shown_as_written_never_as_markup_or_escapes() -> None:
    async def body() -> None:
        rows = [{"id": f"r{n}", "task": text, "engine": text, "status": "running",
                 "asks": [_ask(f"T{n}", float(n), command=text)]}
                for n, text in enumerate(HOSTILE)]
        app = FleetApp(remember_theme=False, arm_seconds=0)
        async with app.run_test(size=(200, 40)) as pilot:
            app.show(board({"h[b]x": rows}))
            await until_shown(pilot, lambda: "pwned" in screen_text(app))
            text = screen_text(app)
            assert "[bold red]pwned[/]" in text  # markup stays the characters it is
            assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
            assert "␛[2J" in text or "␛" in text  # an escape is shown as its marker
            assert "h[b]x:r0" in text
    run(body())


def test_a_hostile_host_cannot_break_the_wire_rows() -> None:
    made = board({"h": [{"id": 5, "waiting": "x", "asks": "nope", "tokens": "1e9",
                         "cost": True, "activity": "now"}]})
    [row] = made.runs
    assert (row.id, row.approvals, row.tokens, row.cost) == ("5", 0, 0, 0.0)
    assert json.dumps(made.inbox) == "[]"
