"""The model's I/O thread: the stream is read and parsed off the caller's event loop, handed over
in order and in batches, its errors raised on the caller's side, and a cancel reaches it."""

from __future__ import annotations

import asyncio
import threading

import pytest
from fakes.openai_fake.helpers import run_against
from fakes.openai_fake.server import Stream, chunks

from engine_adapter.engines.builtin.models.openai import stream as openai_stream
from engine_adapter.engines.builtin.models.openai.reader import ModelIO, shared_io


def test_items_come_in_order_and_what_waited_comes_as_one_batch() -> None:
    async def main() -> list[list[int]]:
        taken, all_put = threading.Event(), threading.Event()

        async def produce(put) -> None:
            put([1])
            await asyncio.to_thread(taken.wait, 30)
            for n in range(2, 6):
                put([n])  # the caller is busy: these wait for it together
            all_put.set()

        batches = []
        async for batch in ModelIO("test-io").stream(produce):
            batches.append(batch)
            if batch == [1]:
                taken.set()
                assert await asyncio.to_thread(all_put.wait, 30)
        return batches

    assert asyncio.run(main()) == [[1], [2, 3, 4, 5]]


def test_an_error_is_raised_on_the_callers_side_after_the_items_before_it() -> None:
    async def main() -> list[int]:
        got: list[int] = []

        async def produce(put) -> None:
            put([1, 2])
            raise ValueError("the server went away")

        with pytest.raises(ValueError, match="went away"):
            async for batch in shared_io().stream(produce):
                got += batch
        return got

    assert asyncio.run(main()) == [1, 2]


def test_closing_the_consumer_cancels_the_producer_where_it_waits() -> None:
    cancelled = threading.Event()

    async def main() -> None:
        async def produce(put) -> None:
            put(["first"])
            try:
                await asyncio.Event().wait()  # a server that says nothing more
            except asyncio.CancelledError:
                cancelled.set()
                raise

        stream = shared_io().stream(produce)
        assert await anext(stream) == ["first"]
        await stream.aclose()

    asyncio.run(main())
    assert cancelled.wait(30)


def test_run_returns_the_result_from_the_io_loop() -> None:
    async def where() -> int:
        return threading.get_ident()

    async def main() -> int:
        return await shared_io().run(where())

    assert asyncio.run(main()) != threading.get_ident()


def test_a_real_reply_is_parsed_off_the_callers_thread(ws_path, monkeypatch) -> None:
    threads: set[int] = set()
    feed = openai_stream.ReplyAssembler.feed

    def recording(self, chunk):
        threads.add(threading.get_ident())
        return feed(self, chunk)

    monkeypatch.setattr(openai_stream.ReplyAssembler, "feed", recording)
    reply = Stream(chunks("Done, " * 30, calls=[("finish", {"result": "ok"})], text_pieces=30))
    session, _ = run_against(ws_path, [reply])
    assert session.state.status == "completed"
    assert threads and threading.get_ident() not in threads
    text = "".join(e.text for e in session.history if e.type == "model_update")
    assert text == "Done, " * 30


@pytest.fixture
def ws_path(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    return tmp_path
