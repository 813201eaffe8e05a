"""`CellTable`: a changed cell redraws its row only — the frame after it renders that one
cell again, not every cell of the table as Textual's own `update_cell` makes it — and the
table shows exactly what a `DataTable` given the same cells shows."""

from __future__ import annotations

from typing import Any

import pytest
from rich.text import Text
from support.event_loop import run
from textual.app import App, ComposeResult
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist

from cockpit.widgets.cell_table import CellTable

ROWS, COLUMNS = 16, 6


class Tables(App[None]):
    def compose(self) -> ComposeResult:
        for table in (CellTable(id="cells", cursor_type="row"),
                      DataTable(id="plain", cursor_type="row")):
            table.add_columns(*(f"c{n}" for n in range(COLUMNS)))
            for row in range(ROWS):
                table.add_row(*(Text(f"r{row} c{n}") for n in range(COLUMNS)), key=f"r{row}")
            yield table


def _lines(table: DataTable[Any]) -> list[str]:
    return [strip.text for strip in table.render_lines(table.region.reset_offset)]


class Rendered:
    """The cells `table` renders anew from now on (not drawn from its cache): the entries of
    its cell cache that are new, as (row, column) positions."""

    def __init__(self, table: DataTable[Any]) -> None:
        self.table = table
        self.before = self._entries()

    def _entries(self) -> dict[Any, Any]:
        cache = self.table._cell_render_cache
        return {key: cache.get(key) for key in list(cache.keys())}

    def cells(self) -> set[tuple[int, int]]:
        table = self.table
        rows = {key: n for n, key in enumerate(table.rows)}
        columns = {key: n for n, key in enumerate(table.columns)}
        return {(rows[key[0]], columns[key[1]]) for key, lines in self._entries().items()
                if self.before.get(key) is not lines and key[0] in rows}


def test_a_changed_cell_renders_only_itself_again_and_shows_as_a_datatable_does() -> None:
    async def main() -> None:
        app = Tables()
        async with app.run_test(size=(100, 2 * ROWS + 6)) as pilot:
            cells, plain = app.query_one("#cells", CellTable), app.query_one("#plain")
            await pilot.pause()
            cells.refresh()  # (all drawn once more as laid out: every cell is in the cache)
            await pilot.pause()
            assert _lines(cells) == _lines(plain)
            columns = list(cells.columns), list(plain.columns)
            for n, (row, column) in enumerate([(3, 2), (3, 4), (11, 0), (0, 5)]):
                rendered = Rendered(cells)
                cells.update_cell(f"r{row}", columns[0][column], Text(f"new {n}"))
                plain.update_cell(f"r{row}", columns[1][column], Text(f"new {n}"))
                await pilot.pause()
                shown = _lines(cells)
                assert shown == _lines(plain)
                assert any(f"new {n}" in line for line in shown)
                assert rendered.cells() == {(row, column)}  # that cell alone, not the table
            # The cursor still moves and draws (its row's cells are rendered in its style).
            cells.move_cursor(row=5)
            plain.move_cursor(row=5)
            await pilot.pause()
            assert _lines(cells) == _lines(plain)
            with pytest.raises(CellDoesNotExist):
                cells.update_cell("no such row", columns[0][0], "x")

    run(main())


def test_a_plain_datatable_renders_every_cell_again_after_one_change() -> None:
    """What `CellTable` avoids (if Textual stops doing this, `CellTable` can go)."""
    async def main() -> None:
        app = Tables()
        async with app.run_test(size=(100, 2 * ROWS + 6)) as pilot:
            plain = app.query_one("#plain", DataTable)
            await pilot.pause()
            plain.refresh()
            await pilot.pause()
            rendered = Rendered(plain)
            plain.update_cell("r3", list(plain.columns)[2], Text("new"))
            await pilot.pause()
            assert len(rendered.cells()) == ROWS * COLUMNS

    run(main())
