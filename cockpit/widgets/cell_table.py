"""`CellTable`: a `DataTable` whose `update_cell` re-renders only the row it changed.

Textual's `update_cell` bumps the table's update count, which is part of the key of every
render cache of the table (cells, rows, lines): one changed cell re-renders every cell of
every row on the next frame. The fleet view changes a few cells of a busy fleet several times
a second (each run's last activity), so each of those frames cost a whole table of cell
renders, and a key pressed then waited for it. Here only the changed row's cache entries go
(and the screen lines, which are only put together from the rows' entries); every other row
is drawn from its cache.

It reads Textual's private caches (their key layouts are pinned by a test of the Textual source
they come from: `tests/cockpit/test_textual_private.py`).
"""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowKey

__all__ = ["CellTable"]


class CellTable(DataTable[Any]):
    """A `DataTable` for rows whose cells change often and one at a time."""

    def update_cell(self, row_key: RowKey | str, column_key: ColumnKey | str, value: Any, *,
                    update_width: bool = False) -> None:
        """Put `value` in the cell (as `DataTable.update_cell` does), and let go of only that
        row's rendered forms. `update_width` (a column may widen: the whole table is laid out
        again) takes Textual's own way."""
        if update_width:
            super().update_cell(row_key, column_key, value, update_width=True)
            return
        row_key = RowKey(row_key) if isinstance(row_key, str) else row_key
        column_key = ColumnKey(column_key) if isinstance(column_key, str) else column_key
        if row_key not in self.rows or column_key not in self.columns:
            raise CellDoesNotExist(
                f"No cell exists for row_key={row_key!r}, column_key={column_key!r}.")
        self._data[row_key][column_key] = value
        row_index = self.get_row_index(row_key)
        # The caches hold the table's own key objects: compared by identity, as keys made
        # without a name (`add_columns`) all equal each other.
        row = self.ordered_rows[row_index].key
        column = self.ordered_columns[self.get_column_index(column_key)].key
        # (an LRUCache has `keys()` and no iterator of its own: hence `.keys()` below)
        cells = self._cell_render_cache
        for cell in [k for k in cells.keys() if k[0] is row and k[1] is column]:  # noqa: SIM118
            cells.discard(cell)
        rows = self._row_render_cache
        for line in [k for k in rows.keys() if k[0] is row]:  # noqa: SIM118
            rows.discard(line)
        self._row_renderable_cache.discard((self._update_count, row_index))
        self._line_cache.clear()  # (keyed by screen line: put together again from the rows)
        self.refresh_row(row_index)
