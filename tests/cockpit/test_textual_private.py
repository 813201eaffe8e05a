"""No widget, screen or app of the cockpit touches a Textual class's private state through
`self`: reading it ties the cockpit to internals that change without notice (Textual is not
pinned exactly), and assigning a name Textual uses clobbers its state (the pager's `_odd` once
overwrote `Widget._odd`, which Textual's `:odd` selector reads).

A private name of a Textual class is one that class defines (in its body) or sets on `self` in
its source; `tests/cockpit/test_package.py` checks every other object's private attributes."""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from functools import cache

from support.paths import ROOT


@cache
def _set_on_self(base: type) -> frozenset[str]:
    try:
        source = textwrap.dedent(inspect.getsource(base))
    except (OSError, TypeError):
        return frozenset()
    return frozenset(node.attr for node in ast.walk(ast.parse(source))
                     if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                     and node.value.id == "self" and _private(node.attr))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def textual_private_names(cls: type) -> set[str]:
    """Every private name the Textual classes among `cls`'s bases define or set on `self`."""
    names: set[str] = set()
    for base in cls.__mro__:
        if (base.__module__ or "").split(".")[0] != "textual":
            continue
        names |= {name for name in vars(base) if _private(name)}
        names |= _set_on_self(base)
    return names


def _reaches() -> list[str]:
    found = []
    for path in sorted((ROOT / "cockpit").rglob("*.py")):
        if path.name == "__main__.py":  # runs the command line when imported
            continue
        relative = path.relative_to(ROOT).with_suffix("")
        module = importlib.import_module(".".join(p for p in relative.parts if p != "__init__"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            cls = getattr(module, node.name, None) if isinstance(node, ast.ClassDef) else None
            if not isinstance(cls, type):
                continue
            private = textual_private_names(cls)
            found += [f"{relative}.py:{use.lineno} {node.name} self.{use.attr}"
                      for use in ast.walk(node)
                      if isinstance(use, ast.Attribute) and isinstance(use.value, ast.Name)
                      and use.value.id == "self" and use.attr in private]
    return found


KNOWN = {
    # Its `_scroll_update` is Textual's without the scrollbar repaint on every layout pass
    # (issue 29); it calls what Textual's calls. Pinned below: a Textual that changes the
    # original fails `test_the_overridden_scroll_update_is_still_textuals`.
    "cockpit/widgets/transcript/transcript.py Transcript self._refresh_scrollbars",
    # Its `vertical_scrollbar` is Textual's, making a scrollbar that keeps its rows (issue 29).
    # Pinned below: `test_the_overridden_vertical_scrollbar_is_still_textuals`.
    "cockpit/widgets/transcript/transcript.py Transcript self._vertical_scrollbar",
    # `update_cell` lets go of one row's rendered forms, not of every row's (the fleet view,
    # issue 28): it writes the cell where Textual's does and drops what Textual's caches keep
    # of that row. Pinned below: `test_the_cell_tables_caches_are_still_textuals`.
    # The live cockpit's screen composes with `RowsCompositor`: Textual's compositor, whose
    # `_render_chops` renders each widget only where it meets the rows a frame repaints
    # (issue 29). Pinned below: `test_the_rows_compositor_is_still_textuals`.
    "cockpit/screens/run.py RunScreen self._compositor",
    *(f"cockpit/widgets/cell_table.py CellTable self.{name}" for name in (
        "_data", "_cell_render_cache", "_row_render_cache", "_row_renderable_cache",
        "_update_count", "_line_cache")),
}
"""Private names used knowingly, each pinned to the Textual source it copies."""


def test_no_cockpit_class_touches_a_textual_private_name_through_self() -> None:
    def known(use: str) -> bool:  # "path.py:LINE Class self.name", the line left out
        where, rest = use.split(":", 1)
        return f"{where} {rest.split(' ', 1)[1]}" in KNOWN

    assert [use for use in _reaches() if not known(use)] == []


def test_the_overridden_scroll_update_is_still_textuals() -> None:
    """`Transcript._scroll_update` copies Textual's `Widget._scroll_update` (8.x): when
    Textual changes it, compare the two again and pin the new source here."""
    import hashlib

    from textual.widget import Widget

    source = inspect.getsource(Widget._scroll_update)
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == "edb9f6257285830d", (
        "Textual's Widget._scroll_update changed: re-check Transcript._scroll_update")


def test_the_overridden_vertical_scrollbar_is_still_textuals() -> None:
    """`Transcript.vertical_scrollbar` copies Textual's `Widget.vertical_scrollbar` (8.x) with
    its own scrollbar class: when Textual changes it, compare the two again and pin it here."""
    import hashlib

    from textual.widget import Widget

    getter = Widget.vertical_scrollbar.fget
    assert getter is not None
    source = inspect.getsource(getter)
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == "6b140a728f0b50e4", (
        "Textual's Widget.vertical_scrollbar changed: re-check Transcript.vertical_scrollbar")


def test_the_rows_compositor_is_still_textuals() -> None:
    """`RowsCompositor._render_chops` copies Textual's `Compositor._render_chops` and the
    renders of its `_get_renders` (8.x), and `RunScreen` replaces the compositor `Screen`
    makes: when any of these changes, compare them again and pin the new sources here."""
    import hashlib

    from textual._compositor import Compositor
    from textual.screen import Screen

    pinned = {"_render_chops": "ca8c3359d7afd017", "_get_renders": "8ac93299aa5d3bef"}
    found = {name: hashlib.sha256(inspect.getsource(getattr(Compositor, name)).encode())
             .hexdigest()[:16] for name in pinned}
    assert found == pinned, "Textual's Compositor changed: re-check RowsCompositor"
    assert "self._compositor = Compositor()" in inspect.getsource(Screen.__init__)


def test_the_cell_tables_caches_are_still_textuals() -> None:
    """`CellTable.update_cell` relies on how Textual's `DataTable` (8.x) keys its render
    caches (row key first, then column key; the row renderables by update count and row) and
    writes a cell: when any of these changes, re-check `CellTable` and pin the new sources."""
    import hashlib

    from textual.widgets import DataTable

    pinned = {"update_cell": "117f6ee504bc006b", "_render_cell": "56c87899a3bfc4da",
              "_render_line_in_row": "669cc46a7ca119d2",
              "_get_row_renderables": "4766e26ce80d09dd", "_render_line": "a32c6991165cea90"}
    found = {name: hashlib.sha256(inspect.getsource(getattr(DataTable, name)).encode())
             .hexdigest()[:16] for name in pinned}
    assert found == pinned, "Textual's DataTable changed: re-check CellTable"


def test_the_check_sees_a_textual_private_name() -> None:
    """The check is not blind: `Widget._odd` and `RadioSet._selected` are found."""
    from textual.widget import Widget
    from textual.widgets import RadioSet

    assert "_odd" in textual_private_names(Widget)
    assert {"_selected", "_nodes"} <= textual_private_names(RadioSet)
