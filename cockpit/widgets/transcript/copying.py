"""What the copy key puts on the clipboard for a transcript item: a reply's text, a command's
command line, a change's diff, and for anything else the text the pager shows.

The text is untrusted (the agent's, a tool's): what is copied is what was shown, every unsafe
character as its marker (an ESC, a bidi override or a zero-width space pasted into a shell later
would do what the human never saw), tabs and line breaks kept. It is capped: the clipboard
travels as one OSC 52 sequence, and terminals drop long ones.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from cockpit.widgets.transcript.items import item_text
from engine_adapter.text import marked, plural
from engine_adapter.view import Item, MessageItem, ToolCallItem

__all__ = ["COPY_LIMIT", "Copied", "copy_of"]

COPY_LIMIT = 100_000
"""Characters copied at most (an OSC 52 sequence is ~4/3 of that in bytes)."""


@dataclass(frozen=True)
class Copied:
    """What is copied (`text`), what it is (`what`: "the reply", "the command", …), and how
    many characters were left out (`dropped`)."""

    text: str
    what: str
    dropped: int = 0

    def notice(self) -> str:
        """What the notification says."""
        lines = self.text.count("\n") + 1
        cut = f", the first {len(self.text):,} characters (of {len(self.text) + self.dropped:,})" \
            if self.dropped else ""
        return f"copied {self.what} ({plural(lines, 'line')}{cut}) to the clipboard (OSC 52)"


def _command(item: ToolCallItem) -> str | None:
    command = item.tool_input.get("command")
    if isinstance(command, str) and command:
        return command
    argv = item.tool_input.get("argv")
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        return shlex.join(argv)
    return None


def _raw(item: Item) -> tuple[str, str]:
    if isinstance(item, MessageItem):
        return item.text, "the thought" if item.channel == "thought" else "the reply"
    if isinstance(item, ToolCallItem):
        if item.diff:
            return item.diff, "the diff"
        command = _command(item)
        if command is not None:
            return command, "the command"
        return item_text(item), f"the {item.tool} call"
    return item_text(item), f"the {item.kind}"


def copy_of(item: Item, limit: int = COPY_LIMIT) -> Copied:
    """What copying `item` puts on the clipboard (see the module docstring)."""
    text, what = _raw(item)
    dropped = max(0, len(text) - limit)
    text = text[:limit].replace("\r\n", "\n")
    return Copied(marked(text), marked(what)[:80], dropped)
