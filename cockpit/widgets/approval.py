"""The approval bar: the oldest pending approval, in full, and what each key would do.

Shows the tool, its tier (coloured by tier), the reason, the whole input (a coloured diff for
edits, the command for shell, indented JSON otherwise), and exactly what `[a] always` would
allow — or why it cannot be granted, as the Session's verdict in the request said (this module
holds no grant rules). With several pending, the oldest comes first and the count is shown.
Renders from a `RunView`; the keys themselves belong to the live app.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from engine_adapter.fold import RunView, ToolCallItem

from ..keys import key_label
from ..styles import Palette, palette_for
from .approval_input import fit_input, input_blocks
from .grant_scope import ScopeChoice, always_text, scope_hint, scope_keys
from .text import styled_line

__all__ = ["ApprovalBar", "always_text"]

MAX_INPUT_ROWS = 20  # rows of input the bar shows at most, however tall the terminal


class ApprovalBar(Vertical):
    """Shown only while an approval is pending; `show(view)` updates or hides it."""

    DEFAULT_CSS = """
    ApprovalBar {
        display: none;
        height: auto;
        max-height: 60%;
        background: $panel;
        border-top: thick $warning;
        padding: 0 1;
    }
    ApprovalBar.-pending { display: block; }
    ApprovalBar.-tier-4 { border-top: thick $error; }
    ApprovalBar #approval-head { height: auto; }
    ApprovalBar #approval-input-scroll {
        height: auto;
        max-height: 20;
        background: $surface;
    }
    ApprovalBar #approval-input { width: 100%; }
    ApprovalBar #approval-keys { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.approval_id: str | None = None  # the one `y`/`a`/`n` answer
        self.estimated_height = 0  # rows it covers when shown (see `RunDisplay`)
        self.input_cut = False  # the input shown was cut to the bar's rows (the bar says so)
        self._input_shape: tuple[str, int, int, str] | None = None
        self._body_lines = 1
        self._last_view: RunView | None = None
        self._app_size = Size(0, 0)
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

    def input_rows(self, other_rows: int) -> int:
        """Rows the input may take: the bar stays within 60% of the screen with its head and
        keys (`other_rows`) and its border, and never over `MAX_INPUT_ROWS`."""
        parent = self.parent
        height = parent.size.height if isinstance(parent, Widget) and parent.size.height \
            else self.app.size.height
        return max(1, min(MAX_INPUT_ROWS, height * 6 // 10 - 1 - other_rows))

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
        self.query_one("#approval-input-scroll", VerticalScroll).scroll_home(animate=False)

    def compose(self) -> ComposeResult:
        yield Static("", id="approval-head")
        with VerticalScroll(id="approval-input-scroll"):
            yield Static("", id="approval-input")
        yield Static("", id="approval-keys")

    def show(self, view: RunView) -> None:
        """Show the oldest pending approval of `view`, or hide."""
        self._last_view, self._app_size = view, self.app.size
        pending = view.pending
        row: ToolCallItem | None = next(iter(pending.values()), None) if pending else None
        if row is None or row.approval is None:
            self.approval_id = None
            self.remove_class("-pending", "-tier-4")
            return
        approval = row.approval
        changed = approval.approval_id != self.approval_id
        self.approval_id = approval.approval_id
        palette = palette_for(self.app)
        head = Text(no_wrap=False)
        head.append("⚠ approval needed", palette.warning)
        if len(pending) > 1:
            head.append(f"  (1 of {len(pending)} pending, oldest first)", palette.dim)
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
        self.query_one("#approval-head", Static).update(head)
        grantable = approval.grantable
        sentence = f"{always_text(approval, where=None)} {scope_hint(self.app)}" \
            if grantable else always_text(approval)
        choice = self.scope_choice
        if grantable and choice is not None and choice.approval_id == approval.approval_id:
            keys = scope_keys(approval, choice, self.app, palette)  # after `a`: the scopes
        else:
            keys = Text()
            keys.append("[y]", palette.success)
            keys.append(" allow once   ")
            if grantable:
                keys.append("[a]", palette.success)
                keys.append(f" {sentence}   ")
            keys.append("[n]", palette.error)
            keys.append(" deny")
            if not grantable:
                keys.append(f"\n[a] {sentence}", palette.dim)
        self.query_one("#approval-keys", Static).update(keys)
        width = max(20, (self.size.width or self.app.size.width) - 2)
        wrapped = sum(len(part.wrap(self.app.console, width)) for part in (head, keys))
        self._show_input(row, width, wrapped, palette, changed)
        self.estimated_height = 1 + wrapped + self._body_lines
        self.set_class(approval.tier >= 4, "-tier-4")
        self.add_class("-pending")
