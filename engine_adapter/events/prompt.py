"""What went to the agent with the human's prompt besides its words: the files it mentioned."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from engine_adapter.events.base import BaseEvent

MentionDelivery = Literal["embedded", "link", "context", "not_sent"]


class MentionedFile(BaseModel):
    """One `@path` of the task: the `path` as written, the file's `size` in bytes (None when it
    could not be read), and how it went: "embedded" (an ACP agent got its contents as an
    embedded resource), "link" (an ACP agent got a `resource_link` to it), "context" (the
    built-in engine appended its text to the task), or "not_sent", with `reason` saying why."""

    model_config = ConfigDict(frozen=True, extra="allow")

    path: str
    size: int | None = None
    delivery: MentionDelivery = "not_sent"
    reason: str | None = None

    @property
    def sent(self) -> bool:
        """Whether the file went with the prompt."""
        return self.delivery != "not_sent"


class FilesMentioned(BaseEvent):
    """The task mentioned files (`@path`): each, and how it went with the prompt (the files'
    contents are not journaled, only their names and sizes)."""

    type: Literal["files_mentioned"] = "files_mentioned"
    files: list[MentionedFile] = Field(default_factory=list)
