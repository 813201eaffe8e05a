"""`AgentFailure`: the agent cannot go on, in words the human reads (the agent's own)."""

from __future__ import annotations

__all__ = ["AgentFailure"]


class AgentFailure(Exception):
    """The agent cannot go on; the message is what the human reads (the agent's own words)."""
