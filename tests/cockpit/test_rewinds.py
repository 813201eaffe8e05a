"""The rewind preview (`cockpit.rewinds.preview`) over what a run left: file names and contents
are untrusted (control characters escaped), a link is never followed to show its target's
content, a big file is named, not read whole, and the diffs are capped in all."""

from __future__ import annotations

from pathlib import Path

from support.event_loop import run
from support.steps import StepRunner
from support.workspaces import git_repo, shell_turn

from cockpit.rewinds import (
    PREVIEW_DIFF_CHARS,
    PREVIEW_FILE_BYTES,
    JournalRewinder,
    RewindPreview,
)
from engine_adapter import JsonlEventJournal, Session, TaskState
from engine_adapter.checkpoints import Checkpointer, CheckpointStore


def _preview_after(tmp_path: Path, script: str, files: dict[str, str] | None = None
                   ) -> RewindPreview:
    """What a rewind to turn 1 would show after a real run whose turn 1 ran `script`."""
    ws = git_repo(tmp_path / "ws", files)
    store = CheckpointStore(tmp_path / "store")
    journal = tmp_path / "run.jsonl"
    session = Session(StepRunner(shell_turn(1, script), cwd=str(ws)), TaskState(task="t"),
                      journal=JsonlEventJournal(journal), unattended=True,
                      checkpoints=Checkpointer(store, ws, run="run"))
    run(session.run())
    return JournalRewinder(journal, store=lambda: store).preview(1, 1)


def test_control_characters_in_names_and_contents_are_escaped(tmp_path):
    shown = _preview_after(tmp_path, "printf 'hi \\033]52;c;aGk=\\007 \\033[2J\\n' > "
                                     "\"$(printf 'ev\\033il.txt')\" && "
                                     "printf '\\033[31mred\\n' > README.md")
    assert "\x1b" not in shown.text and "\x07" not in shown.text
    assert "would remove ev\\x1bil.txt" in shown.text
    assert "-\\x1b[31mred" in shown.diff and "+hello" in shown.diff


def test_a_link_is_never_followed_to_show_a_file_outside(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret\n")
    shown = _preview_after(tmp_path, f"rm README.md && ln -s {secret} README.md")
    assert "would restore README.md" in shown.text
    assert "the secret" not in shown.text
    assert "[now a link, or unreadable: its content is not shown]" in shown.text


def test_a_big_file_is_named_not_read_whole(tmp_path):
    big = PREVIEW_FILE_BYTES + 10
    shown = _preview_after(tmp_path, f"head -c {big} /dev/zero | tr '\\0' x > big.txt")
    assert "would remove big.txt" in shown.text
    assert "too big to show" in shown.diff and "x" * 1000 not in shown.text


def test_the_diffs_are_capped_in_all(tmp_path):
    lines = PREVIEW_DIFF_CHARS // 40 + 10  # changed lines of 40 characters: over the cap
    shown = _preview_after(
        tmp_path,
        f"for i in $(seq {lines}); do echo \"line $i of a long file, changed here\"; done "
        "> long.txt && for f in a b c; do echo $f > $f.txt; done",
        files={"README.md": "hello\n", "long.txt": "".join(
            f"line {i} of a long file, as it was\n" for i in range(lines))})
    assert len(shown.diff) <= PREVIEW_DIFF_CHARS + 1_000
    assert "diff cut at" in shown.diff
    assert "[3 more file(s) not shown: the preview holds this much]" in shown.diff
    assert "would remove a.txt" in shown.text  # the plan itself is whole
