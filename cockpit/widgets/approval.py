"""The approval bar: the oldest pending approval, in full, and what each key would do.

Shows the tool, its tier (coloured by tier), the reason, the whole input (a coloured diff for
edits, the command for shell, indented JSON otherwise), and exactly what `[a] always` would
allow — or why it cannot be granted. With several pending, the oldest comes first and the count
is shown. Renders from a `RunView`; the keys themselves belong to the live app.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Static

from engine_adapter.fold import RunView, ToolCallItem
from engine_adapter.grants import MAX_GRANTABLE_TIER, UNGRANTABLE_TOOLS
from engine_adapter.text import Cut, cut, line_count

from ..input_fields import input_fields
from ..keys import key_label
from .palette import Palette, palette_for
from .text import clean_line, styled, styled_line

__all__ = ["ApprovalBar", "always_text", "fit_rows", "input_body"]

VALUE_LIMIT = 200_000  # characters of one input value laid out (the bar shows a few rows)
MAX_INPUT_ROWS = 20  # rows of input the bar shows at most, however tall the terminal


def always_text(tool: str, prefix: str, tier: int,
                tool_input: dict[str, Any] | None = None) -> tuple[bool, str]:
    """What `[a] always` would do for this call: (grantable, the sentence to show)."""
    if tier > MAX_GRANTABLE_TIER:
        return False, f"cannot be granted: tier {tier} (destructive) asks every time"
    if tool in UNGRANTABLE_TOOLS:
        return False, f"cannot be granted: {tool} changes the verification plan, asks every time"
    shell_like = tool_input is None or bool({"command", "argv"} & set(tool_input))
    if not prefix.strip() and not shell_like:
        return False, ("cannot be granted: only plain shell commands can be; "
                       f"{clean_line(tool, 40)} asks every time")
    if not prefix.strip():
        return False, ("cannot be granted: not one plain command (pipes, chains, redirections, "
                       "substitutions or programs that run other code ask every time)")
    return True, (f"always allow {clean_line(tool, 40)} `{clean_line(prefix, 80)} …` "
                  "in this session")


def _diff_style(line: str, palette: Palette) -> Style:
    if line.startswith("+++") or line.startswith("---"):
        return palette.primary
    if line.startswith("+"):
        return palette.diff_add
    if line.startswith("-"):
        return palette.diff_remove
    if line.startswith("@@"):
        return palette.diff_hunk
    return palette.text


def input_body(tool_input: dict[str, Any] | None, palette: Palette) -> Text:
    """The whole input of a gated call, every key of it (see `cockpit.input_fields`): the
    command as `$ …`, other keys as `key: value`, a diff coloured. Unsafe characters show as
    markers in the warning colour, reversed."""
    warn = palette.warning + Style(reverse=True, bold=True)
    lines: list[Text] = []
    for field in input_fields(tool_input):
        value = field.value[:VALUE_LIMIT]
        if field.kind == "command":
            for i, line in enumerate(value.split("\n")):
                row = Text("$ " if i == 0 else "", palette.dim)
                row.append_text(styled(line, palette.text, marker_style=warn))
                lines.append(row)
            continue
        label = styled(field.label, palette.dim, limit=200, marker_style=warn)
        label.append(":", palette.dim)
        if field.kind == "diff":
            lines.append(label)
            lines += [styled(line, _diff_style(line, palette), marker_style=warn)
                      for line in value.split("\n")]
            continue
        parts = value.split("\n")
        if len(parts) == 1:
            label.append(" ")
            label.append_text(styled(value, palette.text, marker_style=warn))
            lines.append(label)
        else:
            lines.append(label)
            lines += [Text("  ").append_text(styled(part, palette.text, marker_style=warn))
                      for part in parts]
    text = Text("\n").join(lines)
    text.rstrip()
    return text


def _fitting(line: str, cells: int) -> int:
    """How many characters of `line` fit in `cells` cells (wide characters take two)."""
    low, high = 0, min(len(line), max(0, cells))
    while low < high:
        mid = (low + high + 1) // 2
        if cell_len(line[:mid]) <= cells:
            low = mid
        else:
            high = mid - 1
    return low


def fit_rows(body: Text, *, rows: int, width: int, hint: str, palette: Palette) -> Text:
    """`body` cut to what `rows` rows of `width` cells show, the last rows saying exactly how
    much is left and how to see it (`… 3 more lines · press i to see the whole input`)."""
    width = max(1, width)
    plain = body.plain
    longest = Cut("", len(plain), line_count(plain), whole_lines=False).note(gone=False,
                                                                               hint=hint)
    room = max(1, rows - -(-cell_len(longest) // width))  # rows left once the note has its own
    used = shown = 0  # rows filled; characters of `plain` they show
    lines = plain.split("\n")
    if sum(max(1, -(-cell_len(line) // width)) for line in lines) <= rows:
        return body  # everything fits
    for line in lines:
        need = max(1, -(-cell_len(line) // width))
        if used + need > room:
            shown += _fitting(line, (room - used) * width)
            break
        used += need
        shown += len(line) + 1
    piece = cut(plain, chars=shown)
    kept = body[: len(piece.kept)]
    kept.rstrip()
    kept.append("\n")
    kept.append(piece.note(gone=False, hint=hint), palette.warning)
    return kept


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
        scrollbar-gutter: stable;
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

    class Resized(Message):
        """The bar's height on screen changed (what it covers of the transcript)."""

        def __init__(self, height: int) -> None:
            super().__init__()
            self.height = height

    def on_resize(self, event: Resize) -> None:
        if self.approval_id is not None and self._last_view is not None \
                and self.app.size != self._app_size:
            self.show(self._last_view)  # a new terminal size: cut the input to the new room
        if self.approval_id is not None and self.outer_size.height != self.estimated_height:
            self.estimated_height = self.outer_size.height
            self.post_message(self.Resized(self.estimated_height))

    def input_rows(self, other_rows: int) -> int:
        """Rows the input may take: the bar stays within 60% of the screen with its head and
        keys (`other_rows`) and its border, and never over `MAX_INPUT_ROWS`."""
        return max(1, min(MAX_INPUT_ROWS, self.app.size.height * 6 // 10 - 1 - other_rows))

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
        body = input_body(approval.tool_input or row.tool_input, palette)
        shown = fit_rows(body, rows=rows, width=width, hint=hint, palette=palette)
        self.input_cut = shown is not body
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
        grantable, sentence = always_text(approval.tool, approval.prefix, approval.tier,
                                          approval.tool_input)
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
        wrapped = sum(len(line) // width + 1 for line in (head.plain + "\n" + keys.plain)
                      .split("\n"))
        self._show_input(row, width, wrapped, palette, changed)
        self.estimated_height = 1 + wrapped + self._body_lines
        self.set_class(approval.tier >= 4, "-tier-4")
        self.add_class("-pending")
