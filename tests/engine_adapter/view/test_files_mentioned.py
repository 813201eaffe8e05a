"""How the files a task mentions read (`files_mentioned`): sent ones with their size and how
they went, refused ones with why, a warning when any was refused; sizes as people read them."""

from __future__ import annotations

import pytest

from engine_adapter import FilesMentioned
from engine_adapter.events import MentionedFile
from engine_adapter.view import fold_events
from engine_adapter.view.describe import byte_size, describe


@pytest.mark.parametrize(("size", "shown"), [
    (0, "0 B"), (999, "999 B"), (1000, "1.0 KB"), (1234, "1.2 KB"), (99_999, "100.0 KB"),
    (2_500_000, "2.5 MB"), (3 << 30, "3.2 GB")])
def test_byte_size(size, shown):
    assert byte_size(size) == shown


def test_sent_and_refused_files_in_one_line():
    said = describe(FilesMentioned(files=[
        MentionedFile(path="src/app.py", size=1234, delivery="embedded"),
        MentionedFile(path="notes.md", size=10, delivery="context"),
        MentionedFile(path="x.bin", size=3, reason="x.bin is not text (a binary file)")]))
    assert said.line == ("@ files sent with the task: @src/app.py (1.2 KB, its contents) · "
                         "@notes.md (10 B, its text) · not sent: @x.bin: x.bin is not text "
                         "(a binary file)")
    assert said.level == "warning"


def test_all_sent_is_info_and_none_sent_says_mentioned():
    sent = describe(FilesMentioned(files=[MentionedFile(path="a", size=1, delivery="link")]))
    assert sent.level == "info" and sent.line == "@ files sent with the task: @a (1 B, as a link)"
    refused = describe(FilesMentioned(files=[MentionedFile(path="b", reason="b does not exist")]))
    assert refused.line == "@ files mentioned: not sent: @b: b does not exist"


def test_more_than_twenty_are_counted_and_the_row_sits_under_the_task():
    files = [MentionedFile(path=f"f{i}", size=1, delivery="link") for i in range(25)]
    assert describe(FilesMentioned(files=files)).line.endswith("@f19 (1 B, as a link) · 5 more")
    from engine_adapter import AgentStart
    view = fold_events([AgentStart(task="t @f0", engine="e", seq=0),
                        FilesMentioned(files=files[:1], seq=1)])
    assert [item.kind for item in view.items] == ["task", "mentions"]
