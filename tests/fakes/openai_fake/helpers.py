"""Helpers for the real-model tests: a run of the built-in engine against the fake server."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

from engine_adapter import Session, TaskState
from engine_adapter.engines.builtin import BuiltinRunner
from engine_adapter.engines.builtin.models.openai import OpenAIModel
from fakes.openai_fake.server import FakeOpenAI, Reply

NO_WAIT = (0.0, 0.0, 0.0)  # retries without pauses


def model_for(url: str, **options: Any) -> OpenAIModel:
    """An `OpenAIModel` of the fake server, retrying without pauses."""
    options.setdefault("retry_delays", NO_WAIT)
    return OpenAIModel(options.pop("model", "fake-model"), base_url=url, **options)


def run_against(workspace: Path, replies: list[Reply], *, task: str = "t",
                model: dict[str, Any] | None = None, engine: dict[str, Any] | None = None,
                fake: dict[str, Any] | None = None, earlier: tuple[TaskState, ...] = (),
                **session: Any) -> tuple[Session, FakeOpenAI]:
    """Run one task against a fake server playing `replies` (asks auto-approved unless the
    session options say otherwise), after the conversation's `earlier` tasks; returns the
    Session and the server (stopped)."""
    session.setdefault("unattended", True)
    session.setdefault("auto_approve", True)
    with FakeOpenAI(replies, **(fake or {})) as server:
        built = Session(BuiltinRunner(model_for(server.url, **(model or {})), cwd=workspace,
                                      **(engine or {})), TaskState(task=task, earlier=earlier),
                        **session)
        asyncio.run(asyncio.wait_for(built.run(), 60))
    return built, server


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
