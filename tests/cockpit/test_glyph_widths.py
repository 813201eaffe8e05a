"""The cockpit's own glyphs are one cell wide both to Rich and to terminals.

Rich measures with Unicode 16's width table; most terminals (tmux, xterm, VTE) still use an
older one. A glyph the two disagree on (☰, widened in Unicode 16) shifts every cell after it on
the terminal, and the row's last cell keeps whatever was drawn there before.
"""

from __future__ import annotations

import unicodedata

from rich.cells import cell_len
from support.paths import ROOT


def _literals() -> dict[str, set[str]]:
    """Each non-ASCII character in the production sources, and the files holding it."""
    found: dict[str, set[str]] = {}
    for folder in ("cockpit", "engine_adapter", "themes"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".toml", ".tcss"):
                continue
            for ch in set(path.read_text(encoding="utf-8")):
                if ord(ch) > 127:
                    found.setdefault(ch, set()).add(str(path.relative_to(ROOT)))
    return found


def test_no_glyph_is_wider_to_rich_than_its_old_width() -> None:
    """Wide to Rich only where it was wide before Unicode 16 (East Asian W/F): emoji in the
    text policy's own examples are, ☰ was not."""
    disagree = {ch: files for ch, files in _literals().items()
                if cell_len(ch) == 2 and unicodedata.east_asian_width(ch) not in "WF"}
    assert not disagree, disagree


def test_the_plan_row_uses_a_narrow_glyph() -> None:
    from engine_adapter.events import VerificationPlanFrozen
    from engine_adapter.view import describe

    icon = describe(VerificationPlanFrozen(checks=[])).icon
    assert cell_len(icon) == 1 and unicodedata.east_asian_width(icon) not in "WF"
