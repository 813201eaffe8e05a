"""The approval bar: the oldest pending approval, in full, and what each key would do.

Top to bottom: one line with the tool and its tier (coloured by tier); a warning naming any
look-alike characters of the input (`gіt (і is Cyrillic U+0456)`); the whole input — what
runs — (the command for shell, a coloured diff for edits, every other key); the model's reason,
in what room is left; and exactly what `[a] always` would allow — or why it cannot be granted,
as the Session's verdict in the request said (this module holds no grant rules). With several
pending, the oldest comes first and the count is shown. Renders from a `RunView`; the keys
themselves belong to the live app.

The command comes first because it is what a key allows: a 2,000-character reason once came
before it, and at 80x24 the bar showed only the reason beside `[y] allow once`. Now the start of
what runs is always next to the keys, and the reason gets the rows the input leaves, cut with a
note (`i` shows all of it, with the whole input). Everything but the keys line sits in a
`ScrollBox` of limited height (the bar covers at most 60% of the screen); the rows are shared
out so that nothing scrolls on any terminal of at least 80x24 — only a tiny one scrolls, with a
marker saying so. The input, when cut to its rows, says how much is left and which key shows
all of it.

The keys line is one line, named from the active bindings (a remapped `approve = "Y"` shows
`[Y]`), shows `[a]` only when the call can be granted, and, with an approval timeout, counts
down. A newly shown request's keys are dimmed until they arm (`KeyArming`: a key answers the
request drawn on screen, after `ARM_SECONDS`); a key that answered nothing says why there. In
replay (`answerable=False`) the keys are left out: they do nothing there.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static

from cockpit.keys import key_label
from cockpit.styles import Palette, palette_for
from cockpit.widgets.approval.arming import ARM_SECONDS, KeyArming
from cockpit.widgets.approval.input import fit_input, hard_wrap, input_blocks
from cockpit.widgets.approval.scope import ScopeChoice, always_text, scope_hint, scope_keys
from cockpit.widgets.safe_text import styled_line
from cockpit.widgets.scroll_box import ScrollBox
from engine_adapter.view import ApprovalView, RunView, ToolCallItem

__all__ = ["ApprovalBar"]

MAX_INPUT_ROWS = 20  # rows of input the bar shows at most, however tall the terminal
MIN_INPUT_ROWS = 8  # ... on a terminal too small for 3 (the box scrolls)
REASON_LIMIT = 2_000  # characters of the model's reason laid out (the bar shows a few rows)
ROWS_ABOVE = 3  # rows of the run's area the bar leaves above it: the status line, a transcript row


class ApprovalBar(Vertical):
    """Shown only while an approval is pending; `show(view)` updates or hides it.

    `answerable`: whether `y`/`a`/`n` answer it here (the live cockpit) or not (replay).
    `timeout`: the Session's approval timeout in seconds, counted down in the keys line from
    when the request is first shown (by `clock`; without one, the timeout is stated).
    `arm_seconds`, `arm_clock`: how long a newly drawn request ignores its keys, by which
    clock (see `KeyArming`; the live app asks `arming` what a key answers).
    """

    DEFAULT_CSS = """
    ApprovalBar {
        display: none;
        height: auto;
        background: $panel;
        border-top: thick $warning;
        padding: 0 1;
    }
    ApprovalBar.-tier-4 { border-top: thick $error; }
    ApprovalBar #approval-head { height: auto; }
    ApprovalBar #approval-input { width: 100%; background: $surface; }
    ApprovalBar #approval-why { height: auto; }
    ApprovalBar #approval-always { height: auto; }
    ApprovalBar #approval-keys { height: 1; }
    """

    def __init__(self, *, answerable: bool = True, timeout: float | None = None,
                 clock: Callable[[], float] | None = None, arm_seconds: float = ARM_SECONDS,
                 arm_clock: Callable[[], float] = time.monotonic, id: str | None = None) -> None:
        super().__init__(id=id)
        self.arming = KeyArming(seconds=arm_seconds, clock=arm_clock)
        self._arm_timer: Timer | None = None
        self._note = ""  # why the last key answered nothing (until the keys arm)
        self.answerable = answerable
        self.timeout = timeout
        self.clock = clock
        self.approval_id: str | None = None  # the one `y`/`a`/`n` answer
        self.grantable = False  # whether `[a]` can grant the call shown
        self.always_sentence = ""  # what `[a]` would allow, or why it cannot
        self.choosing = False  # the scope step (after `a`) is shown for this approval
        self.estimated_height = 0  # rows it covers when shown (see `RunDisplay`)
        self.input_cut = False  # the input shown was cut to the bar's rows (the bar says so)
        self.deadline: float | None = None  # when the request shown is denied (clock time)
        self._input_shape: tuple[str, int, int, str] | None = None
        self._body_lines = 1
        self._last_view: RunView | None = None
        self._fitted = (Size(0, 0), 0)  # the terminal and the rows it was last fitted to
        self._ticker: Timer | None = None
        self.scope_choice: ScopeChoice | None = None  # set by the live app after `a`
        self._put_last: dict[str, tuple[object, ...]] = {}  # what each part last showed

    class Resized(Message):
        """The bar's height on screen changed (what it covers of the transcript)."""

        def __init__(self, height: int) -> None:
            super().__init__()
            self.height = height

    def on_resize(self, event: Resize) -> None:
        if self.approval_id is not None and self.app.size != self._fitted[0]:
            self.call_after_refresh(self._refit)  # a new terminal: cut the input to its room
        if self.approval_id is not None and self.outer_size.height != self.estimated_height:
            self.estimated_height = self.outer_size.height
            self.post_message(self.Resized(self.estimated_height))

    def room_changed(self) -> None:
        """The parent's height changed (e.g. the message box below it came or went): fit the
        bar to the rows it has now, so that its keys line stays in sight. The bar cannot know
        this from its own size: capped, it shrinks with its parent and cuts its keys."""
        if self.approval_id is not None and self._screen_rows() != self._fitted[1]:
            self._refit()

    def _refit(self) -> None:
        if self.approval_id is not None and self._last_view is not None:
            self.show(self._last_view)
            self.post_message(self.Resized(self.estimated_height))

    def _screen_rows(self) -> int:
        parent = self.parent
        height = getattr(parent, "size", Size(0, 0)).height if parent is not None else 0
        return height or self.app.size.height

    def bar_rows(self) -> int:
        """Rows the bar may cover: 60% of the screen — of the terminal, not of the run's area,
        which the message box below it shares (standing by, it takes rows from the run's
        area, and the bar keeps its own) — and never the status line and a row of the
        transcript above it."""
        return max(3, min(self.app.size.height * 6 // 10, self._screen_rows() - ROWS_ABOVE))

    def body_rows(self) -> int:
        """Rows the scrolling part may take: the bar's rows less its border and the keys line
        (and, when it scrolls, the "more below" marker: a row less)."""
        return max(1, self.bar_rows() - 2)

    def input_rows(self, other_rows: int) -> int:
        """Rows the input may take: what the box has beside the head, the `[a]` line and a
        row of the reason (`other_rows`), never over `MAX_INPUT_ROWS`; when that is under 3
        rows (a tiny terminal), `MIN_INPUT_ROWS` and the box scrolls."""
        room = self.body_rows() - other_rows
        return min(MAX_INPUT_ROWS, room if room >= 3 else MIN_INPUT_ROWS)

    def _show_input(self, row: ToolCallItem, width: int, other_rows: int, palette: Palette,
                    changed: bool) -> None:
        """The whole input, cut to the rows the bar has, saying so (and which key shows all)."""
        approval = row.approval
        assert approval is not None
        rows = self.input_rows(other_rows)
        hint = f"press {key_label(self.app, 'inspect')} to see the whole input"
        shape = (approval.approval_id, width, rows, hint)
        if not changed and shape == self._input_shape:
            return
        self._input_shape = shape
        blocks = input_blocks(approval.tool_input or row.tool_input, palette)
        shown, self.input_cut = fit_input(blocks, rows=rows, width=width, hint=hint,
                                          palette=palette)
        shown = hard_wrap(shown, width)
        self._body_lines = shown.plain.count("\n") + 1
        self.query_one("#approval-input", Static).update(shown)

    def _put(self, part: str, text: Text, *, layout: bool = True) -> None:
        """Show `text` in the part `#part`, unless it shows just that already: an update
        re-measures the part and lays out the bar and the screen around it (a key's frame,
        issue 29: `a` changes two of the bar's five parts, and redrew all of them)."""
        shape = (text.plain, tuple(text.spans), text.style, text.no_wrap, text.overflow,
                 text.justify, text.end)
        if self._put_last.get(part) == shape:
            return
        self._put_last[part] = shape
        self.query_one(f"#{part}", Static).update(text, layout=layout)

    def compose(self) -> ComposeResult:
        yield ScrollBox(Static("", id="approval-head"), Static("", id="approval-input"),
                        Static("", id="approval-why"), Static("", id="approval-always"),
                        id="approval-body")
        yield Static("", id="approval-keys")

    @property
    def box(self) -> ScrollBox:
        """The scrolling part (head, input, what `[a]` would do)."""
        return self.query_one("#approval-body", ScrollBox)

    def show(self, view: RunView) -> None:
        """Show the oldest pending approval of `view`, or hide."""
        self._last_view, self._fitted = view, (self.app.size, self._screen_rows())
        self.styles.max_height = self.bar_rows()
        pending = view.pending
        row: ToolCallItem | None = next(iter(pending.values()), None) if pending else None
        if row is None or row.approval is None:
            self.approval_id = None
            self.deadline = None
            self.arming.hidden()
            self._stop_ticking()
            self._shown(False)
            self.remove_class("-tier-4")
            return
        approval = row.approval
        changed = approval.approval_id != self.approval_id
        self.approval_id = approval.approval_id
        if changed:
            self.arming.hidden()  # what is on screen is about to change: no key answers yet
            self._note = ""
            self._start_countdown()
        palette = palette_for(self.app)
        head = self._head(approval, len(pending), palette)
        self._put("approval-head", head)
        self.grantable = approval.grantable
        self.always_sentence = always_text(approval)
        if self.answerable and self.grantable:  # `a`, then the scope: the keys that choose it
            self.always_sentence = (f"{always_text(approval, where=None)} "
                                    f"{scope_hint(self.app)}")
        choice = self.scope_choice
        self.choosing = (self.answerable and self.grantable and choice is not None
                         and choice.approval_id == approval.approval_id)
        always = Text(no_wrap=False)
        if self.choosing and choice is not None:  # after `a`: one line a scope
            lines = scope_keys(approval, choice, self.app, palette).split("\n")
            always = Text("\n").join(lines[:-1])  # (its last line is the keys line's)
        else:
            if self.answerable:
                always.append(f"[{key_label(self.app, 'approve-always')}] ",
                              palette.success if self.grantable else palette.dim)
            elif self.grantable:  # a recording: what a grant could have been, not one in force
                always.append("could be granted: ", palette.dim)
            always.append(self.always_sentence,
                          palette.text if self.grantable else palette.dim)
        self._put("approval-always", always)
        # The padding and the box's scrollbar column take three cells.
        width = max(20, (self.size.width or self.app.size.width) - 3)
        wrapped = sum(len(part.wrap(self.app.console, width)) for part in (head, always))
        reason = approval.reason.strip()
        # The input first: it gets its rows before the reason, which keeps two at least (its
        # start and the note saying how much is left) — one, when it fits in one.
        keep = 0 if not reason else 1 if cell_len(reason) + 5 <= width else 2
        self._show_input(row, width, wrapped + keep, palette, changed)
        if keep == 2 and self.input_cut:  # the input needs the row more than the reason does
            self._show_input(row, width, wrapped + 1, palette, changed)
        limit = self.body_rows()
        why_rows = self._show_reason(reason, max(1, limit - wrapped - self._body_lines), width,
                                     palette)
        body = wrapped + self._body_lines + why_rows
        overflow = body > limit
        box = self.box
        box.max_rows = limit - 1 if overflow and limit > 1 else limit  # (the marker's row)
        box.content_changed(to_top=changed)
        self.estimated_height = 1 + min(body, box.max_rows) + int(overflow) + 1
        self._show_keys()
        self.set_class(approval.tier >= 4, "-tier-4")
        self._shown(True)
        if self.display:  # armed from the frame that shows it, not from now
            self.call_after_refresh(self._drawn, approval.approval_id)
        else:  # behind a question: shown again later, and new then
            self.arming.hidden()

    def _show_reason(self, reason: str, rows: int, width: int, palette: Palette) -> int:
        """The model's reason in at most `rows` rows as the terminal wraps it (words, not
        cells: a cell count would under-count and push the `[a]` line out of sight), cut
        saying how much is left and that `i` shows it whole; the rows it takes."""
        why = self.query_one("#approval-why", Static)
        if not reason:
            why.display = False
            return 0
        warn = palette.warning + Style(reverse=True, bold=True)
        text = Text("why: ", palette.dim)
        text.append_text(styled_line(reason, palette.text, limit=REASON_LIMIT,
                                     marker_style=warn))
        lines = text.wrap(self.app.console, width)
        if len(lines) > rows == 1:  # one row: its start, and how much is left
            key = key_label(self.app, "inspect")
            whole = len(text.plain)
            longest = f" … ({whole:,} more characters · {key} shows all)"
            text.truncate(max(5, width - cell_len(longest)))
            text.rstrip()
            left = whole - len(text.plain)
            text.append(f" … ({left:,} more characters · {key} shows all)", palette.warning)
            lines = text.wrap(self.app.console, width)
        elif len(lines) > rows:
            kept = max(0, rows - 1)
            shown_chars = sum(len(line.plain) for line in lines[:kept])
            left = len(text.plain) - shown_chars
            text = Text("\n").join(lines[:kept]) if kept else Text()
            if kept:
                text.rstrip()
                text.append("\n")
            text.append(f"… {left:,} more characters of the reason · press "
                        f"{key_label(self.app, 'inspect')} to read it whole", palette.warning)
            lines = text.wrap(self.app.console, width)
        self._put("approval-why", text)
        why.display = True
        return len(lines)

    def _drawn(self, approval_id: str) -> None:
        """A frame showing `approval_id` was drawn: its keys arm `ARM_SECONDS` from now."""
        if approval_id != self.approval_id or not self.display or not self.is_mounted:
            return
        if self.arming.drawn(approval_id) and self.answerable:
            if self._arm_timer is not None:
                self._arm_timer.stop()
                self._arm_timer = None
            if self.arming.seconds <= 0:
                self._armed()
            else:
                self._arm_timer = self.set_timer(self.arming.seconds, self._armed)

    def _armed(self) -> None:
        self._arm_timer = None
        self.redraw_keys()

    def redraw_keys(self) -> None:
        """Redraw the keys line as the arming now says (the timer does it when they arm);
        a note about an ignored key goes once they answer."""
        if self.approval_id is not None:
            if self.arming.armed():
                self._note = ""
            self._show_keys()

    def ignored(self, note: str) -> None:
        """A key answered nothing: say why on the keys line (until the keys arm)."""
        self._note = note
        if self.approval_id is not None:
            self._show_keys()

    def _shown(self, shown: bool) -> None:
        """Show or hide the bar. `display` is set on the bar itself, not by a class: a class
        change restyles the bar and everything in it (~5 ms, twice an approval — a fifth of a
        busy loop when approvals come every 50 ms). `-pending` still marks it, for queries;
        `-behind-question` (set by the run display) keeps it hidden behind a question."""
        self.display = shown and not self.has_class("-behind-question")
        if shown:
            self.add_class("-pending", update=False)
        else:
            self.remove_class("-pending", update=False)

    def _head(self, approval: ApprovalView, count: int, palette: Palette) -> Text:
        """`⚠ approval needed · shell  tier 3` (and the count), then the look-alike warning."""
        warn = palette.warning + Style(reverse=True, bold=True)
        badge = palette.tier_style(approval.tier) + Style(reverse=True)
        width = max(20, (self.size.width or self.app.size.width) - 3)
        head = Text(no_wrap=False)
        for compact in (False, True):
            # A narrow terminal: the short form keeps the head on one row, so the input (what
            # a key allows) gets the next one.
            head = Text(no_wrap=False)
            head.append("⚠ " if compact else "⚠ approval needed · ", palette.warning)
            head.append_text(styled_line(approval.tool, palette.primary, limit=80,
                                         marker_style=warn))
            head.append(" " if compact else "  ")
            head.append(f" T{approval.tier} " if compact else f" tier {approval.tier} ", badge)
            if count > 1:
                head.append(f" (1 of {count})" if compact
                            else f"  (1 of {count} pending, oldest first)", palette.dim)
            if head.cell_len <= width:
                break
        if approval.lookalikes:
            head.append("\n")
            head.append_text(self._warning(approval.lookalikes, warn))
        return head

    def _warning(self, line: str, style: Style) -> Text:
        """The look-alike warning in its rows (one on a short terminal, three at most), cut
        saying so: the input beside it shows each hidden character as a marker, and `i` shows
        the whole warning."""
        text = styled_line(f"⚠ {line}", style, limit=1_000, marker_style=style)
        width = max(20, (self.size.width or self.app.size.width) - 3)
        rows = 1 if self.body_rows() < 16 else 3
        lines = text.wrap(self.app.console, width)
        if len(lines) <= rows:
            return text
        more = f" … ({key_label(self.app, 'inspect')} shows all)"
        last = lines[rows - 1]
        last.truncate(max(1, width - cell_len(more)))
        last.rstrip()
        last.append(more, style)
        return Text("\n").join([*lines[:rows - 1], last])

    # The keys line ---------------------------------------------------------------------------
    def _show_keys(self) -> None:
        """One line: the keys that answer (as bound), and the countdown; cut, never wrapped."""
        palette = palette_for(self.app)
        width = max(20, (self.size.width or self.app.size.width) - 2)
        left = self.seconds_left()
        armed = self.arming.armed()
        for level in (0, 1, 2):  # the words, shorter, and (the scope step) the scope keys only
            compact = level > 0
            keys = Text(no_wrap=True, overflow="ellipsis")
            if self.answerable and not armed:  # a new request: keys dimmed until they arm
                self._dim_keys(keys, compact, palette)
            elif self.answerable and self.choosing:  # the scope step: the keys that choose
                self._scope_keys(keys, level, palette)
            elif self.answerable:
                gap = " " if compact else "   "
                keys.append(f"[{key_label(self.app, 'approve')}]", palette.success)
                keys.append(" once" if compact else " allow once")
                if self.grantable and not self.choosing:
                    keys.append(gap)
                    keys.append(f"[{key_label(self.app, 'approve-always')}]", palette.success)
                    keys.append(" always" if compact else " always allow")
                keys.append(gap)
                keys.append(f"[{key_label(self.app, 'deny')}]", palette.error)
                keys.append(" deny")
            else:
                keys.append("recorded request: its answer is in the events that follow",
                            palette.dim)
            if left is not None:
                keys.append(" · " if compact else "   ", palette.dim)
                style = palette.error if left <= 10 else palette.warning
                minutes, seconds = divmod(left, 60)
                keys.append(f"{'' if compact else 'auto-deny in '}{minutes}:{seconds:02d}",
                            style)
            if keys.cell_len <= width:
                break
        # One row whatever it says (`height: 1`): no layout.
        self._put("approval-keys", keys, layout=False)

    def _scope_keys(self, keys: Text, level: int, palette: Palette) -> None:
        """After `a`: the scope keys first (an unavailable scope dimmed), then back; the lines
        above say what each would allow, and may be out of sight on a small terminal, so the
        keys that choose are on this line (at 40x12 too)."""
        choice = self.scope_choice
        unavailable = choice.unavailable if choice is not None else {}
        compact = level > 0
        names = {"session": "session", "project": "project",
                 "user": "all" if compact else "every project"}
        gap = " " if compact else "   "
        for scope in ("session", "project", "user"):
            if keys:
                keys.append(gap)
            available = scope not in unavailable
            keys.append(f"[{key_label(self.app, f'grant-{scope}')}]",
                        palette.success if available else palette.dim)
            keys.append(f" {names[scope]}", palette.text if available else palette.dim)
        if not compact:
            keys.append(gap)
            keys.append(f"[{key_label(self.app, 'approve')}]", palette.success)
            keys.append(" once")
            keys.append(gap)
            keys.append(f"[{key_label(self.app, 'deny')}]", palette.error)
            keys.append(" deny")
        if level < 2:  # (the tightest: the footer still names the way back)
            keys.append(gap)
            keys.append(f"[{key_label(self.app, 'grant-back')}]", palette.accent)
            keys.append(" back")

    def _dim_keys(self, keys: Text, compact: bool, palette: Palette) -> None:
        """The keys while they do not answer yet, and why (or what the last key did)."""
        gap = " " if compact else "   "
        keys.append(f"[{key_label(self.app, 'approve')}]{' once' if compact else ' allow once'}",
                    palette.dim)
        if self.grantable and not self.choosing:
            keys.append(gap)
            keys.append(f"[{key_label(self.app, 'approve-always')}]"
                        f"{' always' if compact else ' always allow'}", palette.dim)
        keys.append(gap)
        keys.append(f"[{key_label(self.app, 'deny')}] deny", palette.dim)
        keys.append(gap)
        if self._note:
            keys.append(f"⊘ {self._note}", palette.warning)
        else:
            keys.append("(keys arm in a moment: read the request)", palette.dim)

    def _start_countdown(self) -> None:
        self._stop_ticking()
        self.deadline = None
        if self.timeout is None or not self.answerable:
            return
        if self.clock is None:  # no clock (a snapshot): the whole timeout, standing still
            return
        self.deadline = self.clock() + self.timeout
        self._ticker = self.set_interval(1.0, self._tick)

    def seconds_left(self) -> int | None:
        """Whole seconds until the request shown is denied by the timeout (None: no timeout)."""
        if self.timeout is None or not self.answerable or self.approval_id is None:
            return None
        if self.deadline is None or self.clock is None:
            return int(self.timeout)
        return max(0, int(self.deadline - self.clock() + 0.999))

    def _tick(self) -> None:
        if self.approval_id is not None:
            self._show_keys()

    def _stop_ticking(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
