"""The files a task mentions (`@path`) as ACP content blocks after the task's text.

Every agent takes a `resource_link` (the spec's baseline); an agent whose `initialize` answer
says `promptCapabilities.embeddedContext` gets the file's text itself, as an embedded
`resource` (preferred by the spec: no round trip, and the agent need not be able to read the
file). Only files `read_mentions` let through become blocks; a refused one stays text.
"""

from __future__ import annotations

import mimetypes
import posixpath

import acp
from acp.schema import (
    EmbeddedResourceContentBlock,
    InitializeResponse,
    ResourceContentBlock,
    TextResourceContents,
)

from engine_adapter.files.mentions import MentionRead

__all__ = ["MentionBlock", "mention_blocks", "takes_embedded"]

MentionBlock = ResourceContentBlock | EmbeddedResourceContentBlock


def takes_embedded(init: InitializeResponse | None) -> bool:
    """Whether the agent said it takes embedded resources in a prompt."""
    caps = init.agent_capabilities if init is not None else None
    prompt = caps.prompt_capabilities if caps is not None else None
    return bool(prompt is not None and prompt.embedded_context)


def _mime(path: str) -> str:
    return mimetypes.guess_type(path, strict=False)[0] or "text/plain"


def mention_blocks(reads: list[MentionRead], *, embedded: bool) -> list[MentionBlock]:
    """One block per file that was read: its contents (`embedded`) or a link to it."""
    blocks: list[MentionBlock] = []
    for read in reads:
        if read.text is None or read.uri is None:
            continue
        if embedded:
            blocks.append(acp.resource_block(TextResourceContents(
                uri=read.uri, text=read.text, mime_type=_mime(read.path))))
        else:
            blocks.append(acp.resource_link_block(
                posixpath.basename(read.path.rstrip("/")) or read.path, read.uri,
                mime_type=_mime(read.path), size=read.size, title=read.path))
    return blocks
