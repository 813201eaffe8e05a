"""The fields every event carries (`BaseEvent`): the `type` tag and the Session's stamp."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from engine_adapter.events.timestamps import Timestamp

__all__ = ["BaseEvent"]


class BaseEvent(BaseModel):
    """Fields every event carries. `seq`, `ts` and `session_id` are stamped by the Session."""

    model_config = ConfigDict(frozen=True, extra="allow")

    type: str
    session_id: str = ""
    seq: int = -1
    ts: Timestamp = 0.0  # finite, 0 <= ts < year 10000: anything else is a bad line
