"""`FleetApp`: `cockpit attach` with no run — every run of every host the user has (this
machine's, and `[hosts]` in config.toml), and the `needs you` inbox of their open asks, oldest
first, updated as the hosts push (`watch`: nothing is polled).

The approval keys answer the inbox's selected ask in its host (`y` once, `a` always for this
session where it can be granted, `n` deny), which closes it in every client. They answer the
ask the screen showed: a newly selected one ignores keys for `ARM_SECONDS` (one that moved under
the cursor because another was answered elsewhere cannot be answered by a key meant for that
one). `enter` opens the selected run (at its ask): the app exits with a `FleetChoice`, and the
command line runs the live cockpit over it, then comes back here. A host that cannot be reached
is said under the runs, since when and when it is tried again (`watch`: the pause doubles);
`r` tries every such host again now. Every text of a run is
untrusted: cleaned, cut, shown without markup.

The only Textual module of `cockpit.host`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any, ClassVar, NamedTuple

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from cockpit.base_app import ThemedApp
from cockpit.host.fleet.board import Board, FleetAsk, FleetRun, board
from cockpit.host.fleet.watch import NO_HOST, HostWatch
from cockpit.keys import bindings, key_label
from cockpit.widgets import clean_line
from cockpit.widgets.approval import ARM_SECONDS, KeyArming
from cockpit.widgets.cell_table import CellTable

__all__ = ["INBOX_TITLE", "KEY_SECONDS", "KEY_WAIT", "ROWS_PER_KEY", "FleetApp", "FleetChoice"]

INBOX_TITLE = "needs you"
"""The inbox's title (the issue fixes it)."""
NOTHING_WAITING = "nothing waiting: no run asks for you"
COMMAND_LIMIT = 200  # characters of an ask's command in its row (the run's bar shows it whole)
TASK_LIMIT = 120
SHORT = 20  # rows: below it, the detail and the hosts' problems take one row each
KEY_WAIT = 0.05
"""The longest a key holds the hosts' pushes back while it goes to its action."""
KEY_SECONDS = 0.1
"""After a key's answer, how long a push waits for the next key (drawn in that key's frame)."""
ROWS_PER_KEY = 2
"""While keys come, the most changed rows of the runs table one key's frame carries (the rest
go with the next keys, or all once keys stop): a row drawn again costs a frame about what a
key's own cursor move does (its two rows), and a busy fleet's push changes a row a run (each
streaming run's last activity, all at the same second)."""


class FleetChoice(NamedTuple):
    """The run the human chose to open: its host's name and its id."""

    host: str
    run: str


def _cell(text: str, limit: int, style: str = "") -> Text:
    """An untrusted text as one table cell: cleaned, on one line, cut, no markup."""
    return Text(clean_line(text, limit), style=style, no_wrap=True)


def _when(ts: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts)) if ts else "-"


def _cost(cost: float | None) -> str:
    if cost is None:
        return "-"
    return f"${cost:.2f}" if cost >= 0.01 or cost == 0 else f"${cost:.4f}"


def _waiting(run: FleetRun) -> str:
    parts = [f"{run.approvals} approval" + ("s" if run.approvals != 1 else "")] \
        if run.approvals else []
    if run.questions:
        parts.append(f"{run.questions} question" + ("s" if run.questions != 1 else ""))
    return ", ".join(parts) or "none"


_STATUS_STYLE = {"running": "bold", "completed": "green", "failed": "red", "lost": "red",
                 "cancelled": "yellow"}


class FleetApp(ThemedApp):
    """The fleet view over `watches` (one a host); exits with a `FleetChoice` or None.

    Args:
        watches: The hosts to show, in order (`HostWatch`; their `run()` is started here).
        theme, remember_theme: As `ThemedApp` takes them.
        arm_seconds, arm_clock: How long a newly selected ask ignores its keys, and the clock
            that is timed by (`KeyArming`).
        note: A line to show once mounted (why the run chosen last could not be opened).
    """

    CSS = """
    #fleet-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    .fleet-label { height: 1; padding: 0 1; color: $text-muted; text-style: bold; }
    #inbox-label { color: $warning; }
    #inbox { height: auto; max-height: 40%; scrollbar-size-horizontal: 0; }
    #inbox-empty { height: 1; padding: 0 1; color: $text-muted; }
    #ask-detail { height: auto; max-height: 2; padding: 0 1; }
    #runs { height: 1fr; min-height: 3; }
    #fleet-hosts { height: auto; max-height: 3; padding: 0 1; text-wrap: nowrap;
                   text-overflow: ellipsis; }
    Screen { overflow: hidden; }
    FleetApp.-short #ask-detail { max-height: 1; }
    FleetApp.-short #runs-label { display: none; }
    FleetApp.-short #fleet-hosts { max-height: 1; }
    FleetApp.-short #runs { scrollbar-size-horizontal: 0; }
    #fleet-keys { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[Any]] = [
        *bindings("app", ids=("approve", "approve-always", "deny")),
        *bindings("fleet"),
        Binding("ctrl+q", "leave", "leave (runs go on)", priority=True, id="quit"),
    ]
    TITLE = "cockpit fleet"

    def __init__(self, watches: Sequence[HostWatch] = (), *, theme: str | None = None,
                 remember_theme: bool = True, arm_seconds: float = ARM_SECONDS,
                 arm_clock: Callable[[], float] = time.monotonic,
                 note: str | None = None) -> None:
        super().__init__(theme=theme, remember_theme=remember_theme)
        self.note = note
        self.watches = list(watches)
        for watch in self.watches:
            watch.on_change = self.watched
        self.board = Board([], [], [])
        self.arming = KeyArming(seconds=arm_seconds, clock=arm_clock)
        self._answered: set[str] = set()  # ask keys answered here (until the host drops them)
        self._redraw_due = False
        self._redraw_at: asyncio.TimerHandle | None = None  # a redraw waits for a key's frame
        self._held_until = 0.0  # loop time: no redraw before it (a key is being answered)
        self._keys_until = 0.0  # loop time: until then a push waits for the next key
        self._inbox_was_empty = True
        # Each table's rows shown: key, what the cells were built from, the cells.
        self._shown: dict[str, list[tuple[str, Hashable, list[Text]]]] = {}
        self._said: dict[str, Text] = {}  # each line's text shown

    # Building ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("", id="fleet-title")
        yield Static(INBOX_TITLE, id="inbox-label", classes="fleet-label")
        inbox: DataTable[Any] = CellTable(id="inbox", cursor_type="row", zebra_stripes=False)
        inbox.add_columns("since", "run", "tool", "command")
        yield inbox
        yield Static(NOTHING_WAITING, id="inbox-empty")
        yield Static("", id="ask-detail")
        yield Static("runs", id="runs-label", classes="fleet-label")
        # (a busy fleet changes a few of its cells a push: only their rows are drawn again)
        runs: DataTable[Any] = CellTable(id="runs", cursor_type="row")
        runs.add_columns("host", "run", "status", "waiting", "last activity", "tokens", "cost",
                         "engine", "task")
        yield runs
        yield Static("", id="fleet-hosts")
        yield Static("", id="fleet-keys")

    def on_mount(self) -> None:
        super().on_mount()
        for watch in self.watches:
            self.run_worker(watch.run(), group="watch", exit_on_error=False)
        self.show(self.board)
        # The hosts' line counts down to their next try (a second a step, while one is down).
        self.set_interval(1.0, self._hosts_line)
        if self.note:
            self.notify(clean_line(self.note, 500), severity="error", markup=False)

    def _keys_line(self) -> None:
        keys = Text(no_wrap=True, overflow="ellipsis")
        if self.board.unreachable:  # (first: a narrow terminal cuts the end of the line)
            keys.append(key_label(self, "fleet-retry"), "bold")
            keys.append(" retry hosts  ")
        for binding_id, what in (("approve", "allow once"), ("approve-always", "always"),
                                 ("deny", "deny")):
            keys.append(key_label(self, binding_id), "bold")
            keys.append(f" {what}  ")
        keys.append("enter", "bold")
        keys.append(" open  ")
        keys.append("tab", "bold")
        keys.append(" inbox/runs  ")
        keys.append("^q", "bold")
        keys.append(" leave (runs go on)")
        self._say("#fleet-keys", keys)

    def _hosts_line(self) -> None:
        """Under the runs: each host that cannot be reached, why, since when, and when it is
        tried again (shown, never hidden: its runs are not in the table)."""
        problems = Text(no_wrap=True, overflow="ellipsis")
        watches = {watch.name: watch for watch in self.watches}
        for host, why in self.board.unreachable:
            problems.append("\n" if problems else "")
            problems.append(clean_line(host, 32), "bold")
            problems.append(f" {self._host_problem(why, watches.get(host))}", "red")
        self.query_one("#fleet-hosts", Static).display = bool(self.board.unreachable)
        self._say("#fleet-hosts", problems)

    @staticmethod
    def _host_problem(why: str, watch: HostWatch | None) -> str:
        """`unreachable since 08:31, retrying in 16s: why` (or why alone, before a try)."""
        why = clean_line(why, 300)
        if watch is None or watch.down_since is None:
            return why
        wait = watch.retry_in()
        when = "trying again…" if wait is None else f"retrying in {math.ceil(wait)}s"
        if why == NO_HOST:
            return f"{why} · {when}"
        reason = why.removeprefix("unreachable: ")
        since = time.strftime("%H:%M", time.localtime(watch.down_since))
        return f"unreachable since {since}, {when}: {reason}"

    # The hosts' pushes ---------------------------------------------------------------------
    def watched(self) -> None:
        """A host pushed (or was lost): redraw once, at the next idle moment (many pushes
        together make one redraw), or, while keys come, in the next key's frame."""
        if self._redraw_due:
            return
        self._redraw_due = True
        if asyncio.get_running_loop().time() < self._keys_until:
            self._redraw_later(self._keys_until)
        else:
            self.call_later(self._redraw)

    def _redraw_later(self, when: float) -> None:
        """Redraw at loop time `when` (instead of any redraw planned), behind the keys queued
        by then."""
        if self._redraw_at is not None:
            self._redraw_at.cancel()
        self._redraw_at = asyncio.get_running_loop().call_at(when, self.call_later,
                                                             self._redraw)

    def _redraw(self) -> None:
        self._redraw_at = None
        if not self._redraw_due:
            return
        if asyncio.get_running_loop().time() < self._held_until:  # a key is on its way
            self._redraw_later(self._held_until)
            return
        self._draw_pushed()

    def _draw_pushed(self, rows: int | None = None) -> None:
        """Draw what the hosts pushed, now (any redraw planned is dropped); with `rows`, at most
        that many changed rows of the runs table, the others with the next key (or once keys
        stop)."""
        if self._redraw_at is not None:
            self._redraw_at.cancel()
            self._redraw_at = None
        left = self.show(board({watch.name: watch.state for watch in self.watches}), rows=rows)
        self._redraw_due = left > 0
        if left:
            self._redraw_later(self._keys_until)

    async def on_event(self, event: events.Event) -> None:
        """Keys first: a host's push is drawn after the key that came with it, in that key's
        frame. A frame of a push's own keeps the next frame back one to two periods of the
        frame cap (Textual's grid), so a key pressed just after it waited that long for its
        own (`bench_fleet.py --trace`: every busy key slower than the idle ones' slowest,
        less the waits for a CPU, was sent within two periods of a push's frame; drawn just
        after the previous key's frame, the push's frame lands one to two periods later,
        where the next key comes when keys repeat). While a key goes to its action (at most
        `KEY_WAIT`) no push is drawn; what came meanwhile is drawn once the action ran, and
        a push in the next `KEY_SECONDS` waits for the next key the same way: while keys
        come, pushes are drawn in keys' frames, never in one of their own, at most
        `ROWS_PER_KEY` changed rows a key (the push's work, in the key's frame, stays about
        the key's own). (The key comes back here, forwarded, for the app to run its
        binding.)"""
        key = isinstance(event, events.Key)
        returned = key and event.is_forwarded
        if key and not returned:
            now = asyncio.get_running_loop().time()
            self._held_until = max(self._held_until, now + KEY_WAIT)
        await super().on_event(event)
        if returned:
            self._keys_until = asyncio.get_running_loop().time() + KEY_SECONDS
            if self._redraw_due:
                self._draw_pushed(ROWS_PER_KEY)

    def show(self, shown: Board, *, rows: int | None = None) -> int:
        """Draw `shown`, the cursor kept on the ask (and the run) it was on; with `rows`, at
        most that many of the runs' rows that changed (same runs, in the same order: the
        others keep what they showed). Returns how many changed rows were left so."""
        self.board = shown
        live_keys = {ask.key for ask in shown.inbox}
        self._answered &= live_keys
        inbox = self.query_one("#inbox", DataTable)
        selected = self._selected_ask()
        inbox.display = bool(shown.inbox)
        self.query_one("#inbox-empty").display = not shown.inbox
        self._say("#inbox-label",
                  Text(f"{INBOX_TITLE} ({len(shown.inbox)})" if shown.inbox else INBOX_TITLE))
        room = max(16, self.size.width - 44)  # (the other columns: the command fits, mostly)
        self._fill(inbox, [(ask.key, (ask, room)) for ask in shown.inbox],
                   lambda source: self._ask_cells(*source),
                   selected.key if selected is not None else None)
        runs = self.query_one("#runs", DataTable)
        self._hosts_line()
        self._keys_line()
        current = runs.coordinate_to_cell_key(runs.cursor_coordinate).row_key.value \
            if runs.row_count else None
        # (a run's row from its last activity as shown, to the second: a streaming run's moves
        # with every push, its row a second)
        left = self._fill(runs, [(run.key, (run._replace(activity=None), _when(run.activity)))
                                 for run in shown.runs],
                          lambda source: self._run_cells(*source), current, rows)
        hosts = len({run.host for run in shown.runs} | {h for h, _ in shown.unreachable})
        title = f"cockpit fleet · {len(shown.runs)} run" + ("s" if len(shown.runs) != 1 else "")
        title += f" on {hosts} host" + ("s" if hosts != 1 else "") if hosts else ""
        self._say("#fleet-title", Text(title, no_wrap=True))
        if not shown.inbox:
            self.arming.hidden()
        # The inbox has the focus whenever it has asks, once it gets them (tab moves it on).
        if shown.inbox and (self._inbox_was_empty or self.focused is None):
            inbox.focus()
        elif not shown.inbox and self.focused is not runs:
            runs.focus()
        self._inbox_was_empty = not shown.inbox
        self._detail()
        return left

    def _say(self, selector: str, text: Text) -> None:
        """Put `text` in a line of the view, only if it changed (an update lays the screen out
        again: five pushes a second must not cost five layouts when nothing they show moved)."""
        if self._said.get(selector) != text:
            self._said[selector] = text
            self.query_one(selector, Static).update(text)

    def _fill(self, table: DataTable[Any], rows: Sequence[tuple[str, Hashable]],
              build: Callable[[Any], list[Text]], keep: str | None,
              budget: int | None = None) -> int:
        """Show `rows` (each a key and what its cells are built from, by `build`): a row whose
        source equals the one shown keeps its cells, unbuilt and uncompared (a busy fleet
        changes a few runs a push). When they are the same rows as shown (by key, in order),
        only the cells that changed are updated (a whole table redrawn five times a second
        would cost every key its frame), and, with a `budget`, only that many changed rows:
        the others keep what they show (and their source as shown, so the next fill takes
        them). Else the table is refilled, the cursor kept on the row `keep` names (else at
        its place). Returns how many changed rows were left as they were."""
        shown = self._shown.get(str(table.id))
        keys = [key for key, _ in rows]
        same = shown is not None and [key for key, _, _ in shown] == keys
        before = {key: (source, cells) for key, source, cells in shown or ()}
        built: list[tuple[str, Hashable, list[Text]]] = []
        left = 0
        for key, source in rows:
            was = before.get(key)
            if was is not None and was[0] == source:
                built.append((key, source, was[1]))
            elif was is not None and same and budget is not None and budget <= 0:
                built.append((key, *was))  # (left for a later fill)
                left += 1
            else:
                if was is not None and same and budget is not None:
                    budget -= 1
                built.append((key, source, build(source)))
        self._shown[str(table.id)] = built
        if same:
            assert shown is not None
            columns = list(table.columns)
            for (key, _, cells), (_, _, old_cells) in zip(built, shown, strict=True):
                if cells is old_cells:
                    continue
                for column, cell, old in zip(columns, cells, old_cells, strict=True):
                    if cell != old:
                        table.update_cell(key, column, cell)
            return left
        at = table.cursor_row
        table.clear()
        for key, _, cells in built:
            table.add_row(*cells, key=key)
        if built:
            row = keys.index(keep) if keep in keys else min(at, len(built) - 1)
            table.move_cursor(row=max(0, row), animate=False)
        return 0

    @staticmethod
    def _ask_cells(ask: FleetAsk, room: int) -> list[Text]:
        command = clean_line(ask.command, COMMAND_LIMIT)
        command = command if len(command) <= room else command[:room - 1] + "…"
        return [Text(_when(ask.asked)), _cell(f"{ask.host}:{ask.run}", 60),
                _cell(ask.tool, 40, "bold"), Text(command, no_wrap=True)]

    @staticmethod
    def _run_cells(run: FleetRun, when: str) -> list[Text]:
        """The cells of `run`'s row, its last activity shown as `when`."""
        task = run.task if run.tasks <= 1 else f"{run.task} (+{run.tasks - 1} tasks)"
        return [_cell(run.host, 32), _cell(run.id, 40),
                _cell(run.status, 20, _STATUS_STYLE.get(run.status, "")),
                Text(_waiting(run), style="bold" if run.approvals or run.questions else ""),
                Text(when), Text(f"{run.tokens:,}"), Text(_cost(run.cost)),
                _cell(run.engine, 40), _cell(task, TASK_LIMIT)]

    # Selection -----------------------------------------------------------------------------
    def _selected_ask(self) -> FleetAsk | None:
        inbox = self.query_one("#inbox", DataTable)
        if not inbox.row_count:
            return None
        key = inbox.coordinate_to_cell_key(inbox.cursor_coordinate).row_key.value
        return next((ask for ask in self.board.inbox if ask.key == key), None)

    def _selected_run(self, table: DataTable[Any]) -> FleetChoice | None:
        if table.id == "inbox":
            ask = self._selected_ask()
            return FleetChoice(ask.host, ask.run) if ask is not None else None
        runs = self.query_one("#runs", DataTable)
        if not runs.row_count:
            return None
        key = str(runs.coordinate_to_cell_key(runs.cursor_coordinate).row_key.value)
        run = next((run for run in self.board.runs if run.key == key), None)
        return FleetChoice(run.host, run.id) if run is not None else None

    def _detail(self) -> None:
        """Under the inbox: the selected ask's reason and what `[a]` would grant."""
        ask = self._selected_ask()
        detail = self.query_one("#ask-detail", Static)
        detail.display = ask is not None
        if ask is None:
            return
        line = Text(no_wrap=False, overflow="ellipsis")
        if ask.kind == "question":
            line.append("a question: ")
            line.append("enter", "bold")
            line.append(" opens its run to answer it")
        else:
            if ask.reason:
                line.append(clean_line(ask.reason, 200))
                line.append(" · ")
            line.append(f"[{key_label(self, 'approve-always')}] ", "bold")
            if ask.prefix:
                line.append("always allows ")
                line.append(clean_line(ask.prefix, 200), "bold")
                line.append(" (this session)")
            else:
                line.append("cannot be granted" + (f": {clean_line(ask.why, 200)}"
                                                   if ask.why else ""))
        self._say("#ask-detail", line)
        self.call_after_refresh(self._drawn, ask.key)

    def _drawn(self, key: str) -> None:
        """The ask `key` is on screen: its keys arm (unless it was answered here already)."""
        ask = self._selected_ask()
        if ask is not None and ask.key == key and key not in self._answered:
            self.arming.drawn(key)

    def on_resize(self) -> None:
        self.set_class(self.size.height < SHORT, "-short")
        self.show(self.board)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "inbox":
            self._detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """enter: open the run (at its ask)."""
        chosen = self._selected_run(event.data_table)
        if chosen is not None:
            self.exit(chosen)

    # Answers -------------------------------------------------------------------------------
    def _target(self) -> FleetAsk | None:
        """The ask a key pressed now answers, or None (and why is said)."""
        ask = self._selected_ask()
        if ask is None:
            self.notify("nothing waiting in the inbox", severity="information")
            return None
        if ask.kind != "approval":
            self.notify("a question: enter opens its run to answer it", severity="information")
            return None
        target = self.arming.target()
        if target.approval_id != ask.key:
            self.notify(target.why or "the ask is not on screen yet", severity="warning",
                        markup=False)
            return None
        return ask

    def _answer(self, ask: FleetAsk, *, allow: bool, remember: bool = False,
                reason: str | None = None) -> None:
        watch = next((w for w in self.watches if w.name == ask.host), None)
        sent = watch is not None and watch.send(
            "resolve_approval", run=ask.run, approval_id=ask.id, allow=allow,
            remember=remember, scope="session", reason=reason)
        if not sent:
            self.notify(f"{clean_line(ask.host, 32)} cannot be reached: nothing was answered",
                        severity="error", markup=False)
            return
        self._answered.add(ask.key)
        self.arming.answered(ask.key)

    def action_approve(self) -> None:
        """y: allow the selected ask once."""
        ask = self._target()
        if ask is not None:
            self._answer(ask, allow=True)

    def action_deny(self) -> None:
        """n: ask why (optional; the agent is told), then deny the selected ask; escape goes
        back. What is typed goes to the reason, never to the inbox (its `y` and `a`)."""
        ask = self._target()
        if ask is None:
            return

        def denied(reason: str | None) -> None:
            if reason is None:
                return
            if ask.key not in {a.key for a in self.board.inbox}:
                self.notify("the call was answered before the reason was sent", timeout=4)
                return
            self._answer(ask, allow=False, reason=reason or None)

        from cockpit.screens import DenyReasonScreen

        self.push_screen(DenyReasonScreen(f"{ask.host}:{ask.run} · {ask.tool}: {ask.command}"),
                         denied)

    def action_approve_always(self) -> None:
        """a: allow it and grant its prefix for this session (the line under the inbox says
        what that allows), where it can be granted."""
        ask = self._target()
        if ask is None:
            return
        if not ask.prefix:
            why = f": {clean_line(ask.why, 200)}" if ask.why else ""
            self.notify(f"this call cannot be granted{why}; y allows it once", markup=False,
                        severity="warning")
            return
        self._answer(ask, allow=True, remember=True)

    def action_retry_hosts(self) -> None:
        """r: try every host that cannot be reached again now."""
        tried = [watch.name for watch in self.watches if watch.retry_now()]
        if not tried:
            self.notify("no host waits to be tried again", severity="information")
            return
        names = ", ".join(clean_line(name, 32) for name in tried)
        self.notify(f"trying {names} again…", timeout=3, markup=False)

    def action_leave(self) -> None:
        """ctrl+q: leave the fleet view (every run goes on in its host)."""
        self.exit(None)
