"""The step both engines take before a task's first prompt: the files the task mentions
(`@path`) read off the event loop, and what went with the prompt journaled (`files_mentioned`).

How each file goes is the engine's to say (`delivery`): the built-in engine appends the text to
the task; an ACP agent gets an embedded resource or a link, as its prompt capabilities allow.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from engine_adapter.context import RunContext
from engine_adapter.events import AgentNotice, FilesMentioned, MentionDelivery, MentionedFile
from engine_adapter.files import FileRefused, off_loop
from engine_adapter.files.mentions import MentionRead, find_mentions, read_mentions

__all__ = ["MENTIONS_SECONDS", "attach_mentions"]

MENTIONS_SECONDS = 20.0
"""How long reading a task's mentioned files may take (a hung disk) before none is sent."""


async def attach_mentions(ctx: RunContext, root: str | os.PathLike[str], task: str,
                          delivery: Callable[[MentionRead], MentionDelivery]) \
        -> list[MentionRead]:
    """The files `task` mentions, read from the workspace at `root` (those refused too, with
    their reasons), journaled with how each goes (`delivery` of a file that was read). Nothing
    when the task mentions none."""
    paths = find_mentions(task)
    if not paths:
        return []
    try:
        reads = await off_loop(lambda: read_mentions(root, paths), seconds=MENTIONS_SECONDS,
                               what="reading the mentioned files")
    except FileRefused as exc:
        ctx.emit(AgentNotice(level="warning", text=f"the mentioned files were not sent: {exc}"))
        return []
    ctx.emit(FilesMentioned(files=[
        MentionedFile(path=read.path, size=read.size,
                      delivery=delivery(read) if read.sent else "not_sent", reason=read.reason)
        for read in reads]))
    return reads
