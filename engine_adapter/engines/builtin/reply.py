"""One model reply, read and sorted: its stream turned into events, its decisions into the calls
the loop runs or the errors the model is told about.

`read_reply` drives `Model.respond` for one turn: text deltas become `model_update` (those read
in one burst joined into one), retries `model_retry`, usage one `model_usage` at the end (even
when the reply is cut short). The read
races the cancel token, so a cancel closes the stream at once even while the server is silent.
`sort_decisions` validates every decision of the reply before any runs: one bad call and none
run (the model is told which was wrong, and that the others did not run either).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from engine_adapter.context import wait_cancelled
from engine_adapter.engines.builtin.models import (
    Decision,
    DecisionFeedback,
    DecisionParseError,
    Model,
    ModelReply,
    ModelRequest,
    RawDecision,
    Retrying,
    TextDelta,
    ToolSpec,
    Usage,
    parse_decision,
)
from engine_adapter.events import ModelRetry, ModelUpdate, ModelUsage
from engine_adapter.runner import CancelToken, EventSink

__all__ = ["Reply", "Sorted", "read_reply", "sort_decisions"]

_SHARE = 0.002  # seconds of reading before the event loop gets a turn


@dataclass(frozen=True)
class Reply:
    """What one model call said (message channel only) and the decisions it made."""

    text: str
    raws: tuple[RawDecision, ...]

    def entry(self) -> ModelReply:
        """The reply as the transcript keeps it."""
        raws = self.raws
        value = raws[0].value if len(raws) == 1 else [r.value for r in raws] if raws else None
        return ModelReply(self.text, value, raws)


async def read_reply(model: Model, request: ModelRequest, sink: EventSink,
                     token: CancelToken | None) -> Reply:
    """Stream one reply of `model` into events; returns it. A cancel stops the read at once
    (the model's stream is closed) and returns what came so far. Errors of the model propagate,
    after the call's `model_usage` is emitted."""
    turn = request.turn
    texts: list[str] = []
    raws: list[RawDecision] = []
    usage = [0, 0]
    cost: list[float] = []
    stream = model.respond(request)
    deltas = _Coalescer(sink, turn)

    async def consume() -> None:
        emit = sink.emit
        clock = asyncio.get_running_loop().time
        since = clock()
        async for out in stream:
            # A stream that is already buffered never suspends: hand the loop back now and then,
            # so the screen (and a cancel) keep their turn while a long reply is read.
            if clock() - since > _SHARE:
                await asyncio.sleep(0)
                since = clock()
            if type(out) is TextDelta:
                if out.text:
                    deltas.add(out.text, out.channel)
                    if out.channel == "message":
                        texts.append(out.text)
                continue
            deltas.flush()  # whatever comes next follows the text in order
            if isinstance(out, RawDecision):
                raws.append(out)
            elif isinstance(out, Usage):
                usage[0] += out.input_tokens
                usage[1] += out.output_tokens
                if out.cost_usd is not None:
                    cost.append(out.cost_usd)
            elif isinstance(out, Retrying):  # the abandoned attempt's words are not the reply
                texts.clear()
                raws.clear()
                emit(ModelRetry(turn=turn, attempt=out.attempt, max_attempts=out.max_attempts,
                                delay_s=out.delay_s, error=out.error))
            if token is not None and token.cancelled:
                return

    reading = asyncio.ensure_future(consume())
    watching = asyncio.ensure_future(wait_cancelled(token)) if token is not None else None
    try:
        if watching is None:
            await reading
        else:
            await asyncio.wait({reading, watching}, return_when=asyncio.FIRST_COMPLETED)
            if reading.done():
                reading.result()  # the model's own error, if it raised
    finally:
        if watching is not None:
            watching.cancel()
        if not reading.done():  # cancelled mid-read: stop it where it waits (closing the stream)
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reading
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(RuntimeError):
                await aclose()
        deltas.flush()
        sink.emit(ModelUsage(model=model.name, input_tokens=usage[0], output_tokens=usage[1],
                             cost_usd=sum(cost) if cost else None))
    return Reply("".join(texts), tuple(raws))


class _Coalescer:
    """Text deltas read in one stretch without a pause become one `model_update`: they wait
    only until the reader next yields to the event loop (a `call_soon` flush). A slow stream
    still shows each delta at once; a buffered burst costs one event, not hundreds."""

    def __init__(self, sink: EventSink, turn: int) -> None:
        self.sink, self.turn = sink, turn
        self.parts: list[str] = []
        self.channel: Literal["message", "thought"] = "message"
        self.scheduled = False

    def add(self, text: str, channel: Literal["message", "thought"]) -> None:
        if self.parts and channel != self.channel:
            self.flush()
        self.channel = channel
        self.parts.append(text)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self.scheduled = False
        if self.parts:
            text, self.parts = "".join(self.parts), []
            self.sink.emit(ModelUpdate(turn=self.turn, text=text, channel=self.channel))


@dataclass(frozen=True)
class Sorted:
    """A reply's decisions, validated: `decisions` to act on (in order), or `errors` to report
    (`(raw, message)`: raw is None for the reply as a whole) and `feedback` for the model."""

    decisions: tuple[Decision, ...] = ()
    errors: tuple[tuple[RawDecision | None, str], ...] = ()
    feedback: tuple[DecisionFeedback, ...] = ()


def sort_decisions(raws: Sequence[RawDecision], tools: Mapping[str, ToolSpec]) -> Sorted:
    """Validate every decision of one reply. Valid only if each is, and a finish comes alone."""
    if not raws:
        message = "the reply ended without a decision"
        return Sorted(errors=((None, message),), feedback=(DecisionFeedback(message),))
    decisions: list[Decision] = []
    errors: list[tuple[RawDecision | None, str]] = []
    problems: dict[int, str] = {}
    for index, raw in enumerate(raws):
        try:
            if raw.error is not None:
                raise DecisionParseError(raw.error)
            decisions.append(parse_decision(raw.value, tools))
        except DecisionParseError as exc:
            problems[index] = str(exc)
            errors.append((raw, str(exc)))
    if not problems and len(raws) > 1 and any(d.action == "finish" for d in decisions):
        message = (f"one decision a turn when you finish, and the reply made {len(raws)}: call "
                   "finish alone, once you have seen your other calls' results")
        errors.append((None, message))
        problems = dict.fromkeys(range(len(raws)), message)
    if not problems:
        return Sorted(decisions=tuple(decisions))
    skipped = "not run: another call of the same reply was invalid; send the calls again"
    feedback = tuple(DecisionFeedback(problems.get(i, skipped), raw.call_id)
                     for i, raw in enumerate(raws))
    return Sorted(errors=tuple(errors), feedback=feedback)


def raw_text(raws: Sequence[RawDecision]) -> str | None:
    """Decisions as the model wrote them, as text for a `decision_error`."""
    if not raws:
        return None
    raw = raws[0].value if len(raws) == 1 else [r.value for r in raws]
    if raw is None:
        return None
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("input"), str):  # arguments not parsed
        return f"{raw.get('tool')} {raw['input']}"
    try:
        return json.dumps(raw, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(raw)
