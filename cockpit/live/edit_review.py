"""An edit under review, opened in the human's editor: `$VISUAL`, else `$EDITOR`.

The proposed text goes into a private temporary file (its folder only the user's, named like
the file so the editor highlights it), the app suspends (Textual `App.suspend()`), the editor
runs in the terminal, and what it leaves is read back. Every way it can go wrong is one clear
line and nothing accepted: no editor set, an editor that cannot be started, a non-zero exit, the
text left unchanged, a file that is no longer UTF-8 text or too big. File I/O runs in a worker
thread; only the editor itself holds the loop (the app is suspended then, and the run waits for
this very answer).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from textual.app import App, SuspendNotSupported

__all__ = ["MAX_EDITED_BYTES", "EditOutcome", "editor_command", "proposal_name",
           "review_in_editor"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

MAX_EDITED_BYTES = 16 * 1024 * 1024
"""The largest edited text taken back (as for a file an agent may write)."""


@dataclass(frozen=True)
class EditOutcome:
    """What the editor gave: the edited text (None: nothing to accept) and, when nothing is
    accepted, why in one line."""

    text: str | None
    problem: str | None = None


def editor_command(environ: dict[str, str] | None = None) -> list[str] | None:
    """The editor's command line: `$VISUAL`, else `$EDITOR` (split as a shell would, so
    `code --wait` works), or None when neither is set."""
    env = os.environ if environ is None else environ
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if value:
            try:
                words = shlex.split(value)
            except ValueError:
                words = [value]
            if words:
                return words
    return None


def proposal_name(path: str) -> str:
    """The temporary file's name for an edit of `path` (an agent's words): its base name in
    safe characters (so the editor highlights it), never `..`, a hidden or an empty name."""
    name = _UNSAFE.sub("_", os.path.basename(path.rstrip("/")))[:100].lstrip(".")
    return name or "proposed.txt"


def _write_proposal(path: str, proposed: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="cockpit-edit-"))  # 0700: only the user's
    target = folder / proposal_name(path)
    target.write_text(proposed, encoding="utf-8")
    return target


def _read_back(target: Path) -> str | bytes:
    """The edited file's text, or its size in bytes (as bytes) when it is too big."""
    with open(target, "rb") as handle:
        data = handle.read(MAX_EDITED_BYTES + 1)
    if len(data) > MAX_EDITED_BYTES:
        return b"too big"
    return data.decode("utf-8")


def _run_editor(app: App[object], argv: list[str]) -> int:
    """Run the editor in the terminal, the app suspended; headless (no terminal to give up,
    e.g. under test) it runs as it is."""
    try:
        with app.suspend():
            return subprocess.call(argv)
    except SuspendNotSupported:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, check=False).returncode


async def review_in_editor(app: App[object], path: str, proposed: str, *,
                           environ: dict[str, str] | None = None) -> EditOutcome:
    """Open `proposed` (the new text of `path`) in the human's editor; the text they saved, or
    why there is none to accept."""
    argv = editor_command(environ)
    if argv is None:
        return EditOutcome(None, "no editor: set $VISUAL or $EDITOR (e.g. export EDITOR=nano) "
                           "to edit a proposed change; y accepts it as proposed")
    if shutil.which(argv[0]) is None:
        return EditOutcome(None, f"the editor {argv[0]!r} ($VISUAL/$EDITOR) was not found; "
                           "nothing was accepted")
    try:
        target = await asyncio.to_thread(_write_proposal, path, proposed)
    except OSError as exc:
        return EditOutcome(None, f"cannot write the proposal for the editor: {exc}")
    try:
        try:
            code = _run_editor(app, [*argv, str(target)])
        except OSError as exc:
            return EditOutcome(None, f"the editor {argv[0]!r} could not start: "
                               f"{exc.strerror or exc}; nothing was accepted")
        if code != 0:
            return EditOutcome(None, f"the editor exited with {code}: nothing was accepted "
                               "(the request still waits)")
        try:
            edited = await asyncio.to_thread(_read_back, target)
        except UnicodeDecodeError:
            return EditOutcome(None, "the edited file is not UTF-8 text: nothing was accepted")
        except OSError as exc:
            return EditOutcome(None, f"the edited file cannot be read ({exc.strerror or exc}): "
                               "nothing was accepted")
        if isinstance(edited, bytes):
            return EditOutcome(None, f"the edited file is over {MAX_EDITED_BYTES // 2**20} MB: "
                               "nothing was accepted")
        if edited == proposed:
            return EditOutcome(None, "unchanged in the editor: nothing was accepted (y accepts "
                               "the proposal as it is)")
        return EditOutcome(edited)
    finally:
        await asyncio.to_thread(shutil.rmtree, target.parent, True)
