"""The append-only log: items stored compact (as bytes), decoded on read."""

from __future__ import annotations

import asyncio
import gc

from support.event_loop import run
from support.steps import StepRunner

from engine_adapter import ModelUpdate, Session, TaskState
from engine_adapter.session.history import EventLog


def test_compact_log_hands_out_the_appended_object_while_it_is_recent() -> None:
    log: EventLog[str] = EventLog(bytes.decode, window=2)
    log.append(b"a", "a-object")
    assert log[0] == "a-object"
    log.append(b"b", "b-object")
    log.append(b"c", "c-object")  # "a" falls out of the window: decoded from its stored form
    assert log[-1] == "c-object" and log[1:] == ["b-object", "c-object"]
    assert log[0] == "a" and list(log) == ["a", "b-object", "c-object"]


def test_a_reader_far_behind_the_window_still_gets_every_event() -> None:
    async def main() -> tuple[Session, list]:
        steps = [lambda r, i=i: _say(r, f"chunk {i}") for i in range(10_000)]
        session = Session(StepRunner(*steps), TaskState(task="t"))
        late = session.events()  # subscribed now, read only after the run
        await session.run()
        return session, [event async for event in late]

    session, seen = run(main())
    assert len(seen) == len(session.history) == 10_002
    assert [e.seq for e in seen] == list(range(10_002))
    assert seen[5_000].text == "chunk 4999"


async def _say(runner: StepRunner, text: str) -> None:
    runner.emit(ModelUpdate(text=text, turn=1))


def test_history_is_not_walked_by_the_garbage_collector() -> None:
    async def main() -> Session:
        session = Session(StepRunner(*[lambda r: _say(r, "x")] * 20_000), TaskState(task="t"))
        await session.run()
        return session

    session = run(main())
    tracked = sum(1 for obj in gc.get_referents(session._log._items) if gc.is_tracked(obj))
    assert tracked == 0  # bytes only: a long run's history costs a full collection nothing


def test_readers_that_keep_up_share_the_emitted_objects() -> None:
    async def main() -> bool:
        session = Session(StepRunner(lambda r: _say(r, "hi")), TaskState(task="t"))
        got = []

        async def read() -> None:
            async for event in session.events():
                got.append(event)

        task = asyncio.create_task(read())
        await session.run()
        await task
        return all(a is b for a, b in zip(got, session.history, strict=True))

    assert run(main())
