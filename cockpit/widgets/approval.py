"""The approval bar: the oldest pending approval, in full, and what each key would do.

Shows the tool, its tier (coloured by tier), the reason, the whole input (a coloured diff for
edits, the command for shell, indented JSON otherwise), and exactly what `[a] always` would
allow — or why it cannot be granted, as the Session's verdict in the request said (this module
holds no grant rules). With several pending, the oldest comes first and the count is shown.
Renders from a `RunView`; the keys themselves belong to the live app.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.message import Message
from textual.widgets import Static

from engine_adapter.fold import ApprovalView, RunView, ToolCallItem

from .palette import Palette, palette_for
from .text import clean, clean_line, pretty_input

__all__ = ["ApprovalBar", "always_text", "input_body"]

DIFF_LIMIT = 200_000  # characters of a diff shown in the bar (cleaned and coloured)


def always_text(approval: ApprovalView) -> str:
    """What `[a] always` would do for this call, from the verdict its request carried:
    "always allow shell `git status …` in this session" or "cannot be granted: why"."""
    if approval.grantable:
        return (f"always allow {clean_line(approval.tool, 40)} "
                f"`{clean_line(approval.prefix, 80)} …` in this session")
    why = approval.ungrantable_reason
    return "cannot be granted" + (f": {clean_line(why, 300)}" if why else "")


def _diff_text(diff: str, palette: Palette) -> Text:
    text = Text()
    more = len(diff) > DIFF_LIMIT
    for line in clean(diff, DIFF_LIMIT).split("\n"):
        if line.startswith("+++") or line.startswith("---"):
            style = palette.primary
        elif line.startswith("+"):
            style = palette.diff_add
        elif line.startswith("-"):
            style = palette.diff_remove
        elif line.startswith("@@"):
            style = palette.diff_hunk
        else:
            style = palette.text
        text.append(line + "\n", style)
    if more:
        text.append(f"… {len(diff) - DIFF_LIMIT:,} more characters", palette.dim)
    text.rstrip()
    return text


def input_body(tool_input: dict[str, Any], palette: Palette) -> Text:
    """The full input of a gated call: diff, command, or JSON."""
    diff = tool_input.get("diff")
    if isinstance(diff, str) and diff:
        text = Text()
        path = tool_input.get("path")
        if isinstance(path, str):
            text.append(f"{clean_line(path, 500)}\n", palette.accent)
        text.append_text(_diff_text(diff, palette))
        return text
    command = tool_input.get("command")
    if isinstance(command, str):
        text = Text("$ ", palette.dim)
        text.append(clean(command, DIFF_LIMIT), palette.text)
        rest = {k: v for k, v in tool_input.items() if k != "command"}
        if rest:
            text.append("\n")
            text.append_text(pretty_input(rest))
        return text
    argv = tool_input.get("argv")
    if isinstance(argv, list):
        text = Text("$ ", palette.dim)
        text.append(clean(" ".join(repr(a) if " " in str(a) else str(a) for a in argv),
                          DIFF_LIMIT), palette.text)
        return text
    return pretty_input(tool_input)


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

    class Resized(Message):
        """The bar's height on screen changed (what it covers of the transcript)."""

        def __init__(self, height: int) -> None:
            super().__init__()
            self.height = height

    def on_resize(self, event: Resize) -> None:
        if self.approval_id is not None and self.outer_size.height != self.estimated_height:
            self.estimated_height = self.outer_size.height
            self.post_message(self.Resized(self.estimated_height))

    def compose(self) -> ComposeResult:
        yield Static("", id="approval-head")
        with VerticalScroll(id="approval-input-scroll"):
            yield Static("", id="approval-input")
        yield Static("", id="approval-keys")

    def show(self, view: RunView) -> None:
        """Show the oldest pending approval of `view`, or hide."""
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
        head.append(clean_line(approval.tool, 80), palette.primary)
        head.append("  ")
        badge = palette.tier_style(approval.tier) + Style(reverse=True)
        head.append(f" tier {approval.tier} ", badge)
        if approval.reason:
            head.append("  " + clean_line(approval.reason, 2_000), palette.text)
        self.query_one("#approval-head", Static).update(head)
        if changed:
            body = input_body(approval.tool_input or row.tool_input, palette)
            self._body_lines = min(20, body.plain.count("\n") + 1)
            self.query_one("#approval-input", Static).update(body)
            self.query_one("#approval-input-scroll", VerticalScroll).scroll_home(animate=False)
        grantable, sentence = approval.grantable, always_text(approval)
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
        self.estimated_height = 2 + wrapped + getattr(self, "_body_lines", 1)
        self.set_class(approval.tier >= 4, "-tier-4")
        self.add_class("-pending")
