"""`export_beside`: the Markdown report of a journal written next to it (`run.jsonl` ->
`run.md`), what the live cockpit's `/export` does (the CLI hands it to the app, which cannot
import `cockpit.export`: see `CockpitApp(exporter=…)`).

It never replaces a file: the first free name of `run.md`, `run-2.md`, … is created
exclusively (`O_EXCL`, so a link planted under that name is not followed either).
"""

from __future__ import annotations

import os
from pathlib import Path

from cockpit.export.markdown import export_journal

__all__ = ["MAX_TRIES", "export_beside"]

MAX_TRIES = 100
"""How many names (`run.md` … `run-100.md`) are tried before giving up."""


def export_beside(journal: str | Path) -> Path:
    """Write the Markdown report of `journal` next to it and return where.

    Raises `engine_adapter.JournalError` for a journal that cannot be read, `OSError` when no
    file could be created there (`FileExistsError` once `MAX_TRIES` names are taken).
    """
    journal = Path(journal)
    text = export_journal(journal, "markdown").text
    for number in range(1, MAX_TRIES + 1):
        suffix = "" if number == 1 else f"-{number}"
        target = journal.with_name(f"{journal.stem}{suffix}.md")
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        return target
    raise FileExistsError(f"{journal.stem}.md … {journal.stem}-{MAX_TRIES}.md all exist next "
                          f"to {str(journal)!r}; remove some, or use `cockpit export -o FILE`")
