"""The `f` filter: which event types stepping and playing visit, with how many of each."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import Checkbox, Footer, SelectionList, Static
from textual.widgets.option_list import OptionDoesNotExist

from cockpit.keys import bindings
from engine_adapter.journal import CODE_NAMES

__all__ = ["FilterScreen", "TypeList"]

TICKED, UNTICKED = "✓", " "


class TypeList(SelectionList[int]):
    """A `SelectionList` whose box says whether a type is ticked (`✓`) or not (empty): Textual
    draws an `X` in both (`Checkbox.BUTTON_INNER`), told apart by colour only, so an unticked
    type read as ticked."""

    def render_line(self, y: int) -> Strip:
        """The row, with its box's mark set from the option's state."""
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) < 2 or segments[1].text != Checkbox.BUTTON_INNER:
            return strip  # not a row with a box (past the last option)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        selected = option.value in self.selected
        mark = TICKED if selected else UNTICKED
        segments[1] = Segment(mark, segments[1].style, segments[1].control)
        return Strip(segments, strip.cell_length)


class FilterScreen(ModalScreen[set[int] | None]):
    """Tick event types (space toggles, enter applies, escape cancels); returns type codes."""

    DEFAULT_CSS = """
    FilterScreen { align: center middle; }
    FilterScreen > Vertical {
        width: 60; height: auto; max-height: 90%;
        background: $panel; border: round $primary; padding: 0 1;
    }
    FilterScreen SelectionList { height: auto; max-height: 24; }
    """

    # enter applies (a priority binding: the list would otherwise take it as "toggle").
    BINDINGS: ClassVar[list[BindingType]] = [
        *bindings("pager"), Binding("enter", "apply", "apply", priority=True)]

    def __init__(self, counts: dict[int, int], chosen: set[int] | None) -> None:
        super().__init__()
        self.counts = counts
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        options = []
        for code, name in CODE_NAMES.items():
            count = self.counts.get(code, 0)
            if count or self.chosen is None or code in self.chosen:
                selected = self.chosen is None or code in self.chosen
                options.append((f"{name}  ({count:,})", code, selected))
        with Vertical():
            yield Static("Show which event types? space toggles, enter applies")
            yield TypeList(*options, id="types")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()

    def action_apply(self) -> None:
        """Apply the ticked types."""
        selection = self.query_one(SelectionList)
        chosen = set(selection.selected)
        unlisted = {code for code in CODE_NAMES if not self.counts.get(code)}
        self.dismiss(chosen | unlisted if len(chosen) == selection.option_count else chosen)

    def action_close(self) -> None:
        """Leave the filter as it was."""
        self.dismiss(None)
