"""The approval bar: the oldest pending approval, in full, and what each key would do.

Shows the tool, its tier (coloured by tier), the reason, the whole input (a coloured diff for
edits, the command for shell, indented JSON otherwise), and exactly what `[a] always` would
allow — or why it cannot be granted, as the Session's verdict in the request said (this module
holds no grant rules). With several pending, the oldest comes first and the count is shown.
Renders from a `RunView`; the keys themselves belong to the live app.

Layout at any size: everything but the keys line sits in a `ScrollBox` of limited height (the
bar covers at most 60% of the screen), so however long the reason or the input, the keys stay on
screen; a marker says how much is below and which key scrolls. The keys line is one line, named
from the active bindings (a remapped `approve = "Y"` shows `[Y]`), shows `[a]` only when the call
can be granted, and, with an approval timeout, counts down. In replay (`answerable=False`) the keys
are left out: they do nothing there.
"""

from __future__ import annotations

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
from cockpit.widgets.approval.input import fit_input, input_blocks
from cockpit.widgets.approval.scope import ScopeChoice, always_text, scope_hint, scope_keys
from cockpit.widgets.safe_text import styled_line
from cockpit.widgets.scroll_box import ScrollBox
from engine_adapter.view import ApprovalView, RunView, ToolCallItem

__all__ = ["ApprovalBar"]

MAX_INPUT_ROWS = 20  # rows of input the bar shows at most, however tall the terminal
MIN_INPUT_ROWS = 8  # ... on a terminal too small for 3 (the box scrolls)


class ApprovalBar(Vertical):
    """Shown only while an approval is pending; `show(view)` updates or hides it.

    `answerable`: whether `y`/`a`/`n` answer it here (the live cockpit) or not (replay).
    `timeout`: the Session's approval timeout in seconds, counted down in the keys line from
    when the request is first shown (by `clock`; without one, the timeout is stated).
    """

    DEFAULT_CSS = """
    ApprovalBar {
        display: none;
        height: auto;
        max-height: 60%;
        background: $panel;
        border-top: thick $warning;
        padding: 0 1;
    }
    ApprovalBar.-tier-4 { border-top: thick $error; }
    ApprovalBar #approval-head { height: auto; }
    ApprovalBar #approval-input { width: 100%; background: $surface; }
    ApprovalBar #approval-always { height: auto; }
    ApprovalBar #approval-keys { height: 1; }
    """

    def __init__(self, *, answerable: bool = True, timeout: float | None = None,
                 clock: Callable[[], float] | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
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
        self._app_size = Size(0, 0)
        self._ticker: Timer | None = None
        self.scope_choice: ScopeChoice | None = None  # set by the live app after `a`

    class Resized(Message):
        """The bar's height on screen changed (what it covers of the transcript)."""

        def __init__(self, height: int) -> None:
            super().__init__()
            self.height = height

    def on_resize(self, event: Resize) -> None:
        if self.approval_id is not None and self.app.size != self._app_size:
            self.call_after_refresh(self._refit)  # a new terminal: cut the input to its room
        if self.approval_id is not None and self.outer_size.height != self.estimated_height:
            self.estimated_height = self.outer_size.height
            self.post_message(self.Resized(self.estimated_height))

    def _refit(self) -> None:
        if self.approval_id is not None and self._last_view is not None:
            self.show(self._last_view)
            self.post_message(self.Resized(self.estimated_height))

    def _screen_rows(self) -> int:
        parent = self.parent
        height = getattr(parent, "size", Size(0, 0)).height if parent is not None else 0
        return height or self.app.size.height

    def body_rows(self) -> int:
        """Rows the scrolling part may take: the bar stays within 60% of the screen with its
        border and the keys line (and, when it scrolls, the "more below" marker: a row less)."""
        return max(1, self._screen_rows() * 6 // 10 - 2)

    def input_rows(self, other_rows: int) -> int:
        """Rows the input may take: what the box has beside the head and the `[a]` line
        (`other_rows`), never over `MAX_INPUT_ROWS`; when that is under 3 rows (a tiny
        terminal), `MIN_INPUT_ROWS` and the box scrolls."""
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
        self._body_lines = min(rows, sum(max(1, -(-cell_len(line) // width))
                                         for line in shown.plain.split("\n")))
        self.query_one("#approval-input", Static).update(shown)

    def compose(self) -> ComposeResult:
        yield ScrollBox(Static("", id="approval-head"), Static("", id="approval-input"),
                        Static("", id="approval-always"), id="approval-body")
        yield Static("", id="approval-keys")

    @property
    def box(self) -> ScrollBox:
        """The scrolling part (head, input, what `[a]` would do)."""
        return self.query_one("#approval-body", ScrollBox)

    def show(self, view: RunView) -> None:
        """Show the oldest pending approval of `view`, or hide."""
        self._last_view, self._app_size = view, self.app.size
        pending = view.pending
        row: ToolCallItem | None = next(iter(pending.values()), None) if pending else None
        if row is None or row.approval is None:
            self.approval_id = None
            self.deadline = None
            self._stop_ticking()
            self._shown(False)
            self.remove_class("-tier-4")
            return
        approval = row.approval
        changed = approval.approval_id != self.approval_id
        self.approval_id = approval.approval_id
        if changed:
            self._start_countdown()
        palette = palette_for(self.app)
        head = self._head(approval, len(pending), palette)
        self.query_one("#approval-head", Static).update(head)
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
        self.query_one("#approval-always", Static).update(always)
        # The padding and the box's scrollbar column take three cells.
        width = max(20, (self.size.width or self.app.size.width) - 3)
        wrapped = sum(len(part.wrap(self.app.console, width)) for part in (head, always))
        self._show_input(row, width, wrapped, palette, changed)
        body, limit = wrapped + self._body_lines, self.body_rows()
        overflow = body > limit
        box = self.box
        box.max_rows = limit - 1 if overflow and limit > 1 else limit  # (the marker's row)
        box.content_changed(to_top=changed)
        self.estimated_height = 1 + min(body, box.max_rows) + int(overflow) + 1
        self._show_keys()
        self.set_class(approval.tier >= 4, "-tier-4")
        self._shown(True)

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
        head = Text(no_wrap=False)
        head.append("⚠ approval needed", palette.warning)
        if count > 1:
            head.append(f"  (1 of {count} pending, oldest first)", palette.dim)
        head.append("\n")
        warn = palette.warning + Style(reverse=True, bold=True)
        head.append_text(styled_line(approval.tool, palette.primary, limit=80,
                                     marker_style=warn))
        head.append("  ")
        badge = palette.tier_style(approval.tier) + Style(reverse=True)
        head.append(f" tier {approval.tier} ", badge)
        if approval.reason:
            head.append("  ")
            head.append_text(styled_line(approval.reason, palette.text, limit=2_000,
                                         marker_style=warn))
        return head

    # The keys line ---------------------------------------------------------------------------
    def _show_keys(self) -> None:
        """One line: the keys that answer (as bound), and the countdown; cut, never wrapped."""
        palette = palette_for(self.app)
        width = max(20, (self.size.width or self.app.size.width) - 2)
        left = self.seconds_left()
        for compact in (False, True):
            keys = Text(no_wrap=True, overflow="ellipsis")
            if self.answerable:
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
                if self.choosing:  # the scope step: back to the approval
                    keys.append(gap)
                    keys.append(f"[{key_label(self.app, 'grant-back')}]", palette.accent)
                    keys.append(" back")
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
        self.query_one("#approval-keys", Static).update(keys)

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
