"""Benchmark of the session boundary: emit, journal, read back, fold.

"emit … N observers" times the run plus N readers each draining every event (delivery, end to
end); "idle observers" are subscribed but never read. The engine yields to the event loop every
100 events, as a real one does whenever it awaits; one row shows an engine that never yields.

Run:  .venv/bin/python bench/bench_core.py [--events N]

Every figure sits beside a baseline measured in the same run on the same bytes, because these
machines are shared and noisy: ratios travel, absolute numbers do not.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine_adapter import (
    AgentEnd,
    AgentStart,
    JsonlEventJournal,
    ModelUpdate,
    Session,
    TaskState,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    read_journal,
)
from engine_adapter.view import RunFold


def make_events(n: int) -> list:
    """A plausible mix: mostly streamed text, tool calls, a turn boundary every 50 events."""
    events = []
    turn = 1
    for i in range(n):
        k = i % 50
        if k == 0:
            events.append(TurnStart(turn=turn))
        elif k == 49:
            events.append(TurnEnd(turn=turn, stop_reason="tool_use"))
            turn += 1
        elif k == 20:
            events.append(ToolStart(call_id=f"c{i}", tool="shell", tool_input={"command": "ls"},
                                    tier=3))
        elif k == 21:
            events.append(ToolEnd(call_id=f"c{i - 1}", tool="shell", ok=True,
                                  output="file.py\nother.py", duration_ms=1.5))
        else:
            events.append(ModelUpdate(text=f"token {i} ", turn=turn))
    return events


class ReplayRunner:
    """Emits a prepared list of events as fast as it can, yielding to the event loop every
    `yield_every` events as a real engine does whenever it awaits its model or a tool (0: never
    yields, so readers fall the whole run behind)."""

    def __init__(self, events: list, yield_every: int = 100) -> None:
        self.events = events
        self.yield_every = yield_every
        self.event_sink = self.approval_controller = self.cancel_token = None

    async def run(self, state: TaskState) -> TaskState:
        emit = self.event_sink.emit
        emit(AgentStart(task=state.task, engine="bench"))
        every = self.yield_every
        for i, event in enumerate(self.events):  # fresh copies, made before the clock started
            emit(event)
            if every and i % every == 0:
                await asyncio.sleep(0)
        emit(AgentEnd(status="completed"))
        return state


def best_of(fn: Callable[[], float], repeat: int) -> float:
    return min(fn() for _ in range(repeat))


def time_emit(events: list, observers: int, fsync: str | None, tmp: Path, idle: bool,
              yield_every: int = 100) -> float:
    copies = [e.model_copy() for e in events]

    async def main() -> float:
        journal = JsonlEventJournal(tmp / f"emit-{observers}-{fsync}.jsonl",
                                    fsync=fsync) if fsync else None
        runner = ReplayRunner(copies, yield_every)
        session = Session(runner, TaskState(task="bench"), journal=journal)
        streams = [session.events() for _ in range(observers)]
        readers = []
        if not idle:
            async def drain(stream) -> None:
                async for _ in stream:
                    pass
            readers = [asyncio.create_task(drain(s)) for s in streams]
        gc.collect()
        start = time.perf_counter()
        await session.run()
        await asyncio.gather(*readers)  # delivered: every reader has seen every event
        elapsed = time.perf_counter() - start
        if journal:
            os.unlink(journal.path)
        return elapsed

    return asyncio.run(main())


def time_raw_write(lines: list[bytes], tmp: Path, fsync_boundary: bool) -> float:
    path = tmp / "raw.jsonl"
    boundary_every = 50
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
    start = time.perf_counter()
    for i, line in enumerate(lines):
        os.write(fd, line)
        if fsync_boundary and i % boundary_every == 49:
            os.fsync(fd)
    os.fsync(fd) if fsync_boundary else None
    elapsed = time.perf_counter() - start
    os.close(fd)
    os.unlink(path)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, repeat = args.events, args.repeat
    events = make_events(n)
    rows: list[tuple[str, float, str, float]] = []

    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        # The bytes a journal holds for this run, for the raw baselines.
        path = tmp / "sample.jsonl"
        with JsonlEventJournal(path, fsync="never") as journal:
            for i, event in enumerate(events):
                journal.write(event.model_copy(update={"seq": i, "ts": time.time(),
                                                       "session_id": "bench"}))
        lines = path.read_bytes().splitlines(keepends=True)

        raw_never = best_of(lambda: time_raw_write(lines, tmp, False), repeat)
        raw_boundary = best_of(lambda: time_raw_write(lines, tmp, True), repeat)
        no_journal_0 = best_of(lambda: time_emit(events, 0, None, tmp, True), repeat)
        rows.append(("emit, no journal, 0 observers", n / no_journal_0, "-", 0.0))
        for fsync, raw in (("never", raw_never), ("boundary", raw_boundary)):
            for observers in (0, 1, 10):
                t = best_of(lambda fs=fsync, o=observers: time_emit(events, o, fs, tmp, False),
                            repeat)
                rows.append((f"emit, journal fsync={fsync}, {observers} observers", n / t,
                             f"raw write fsync={fsync}", raw / t))
            t_idle = best_of(lambda fs=fsync: time_emit(events, 10, fs, tmp, True), repeat)
            t_zero = best_of(lambda fs=fsync: time_emit(events, 0, fs, tmp, True), repeat)
            rows.append((f"emit, journal fsync={fsync}, 10 idle observers", n / t_idle,
                         "same, 0 observers", t_zero / t_idle))
        # The worst case for readers: an engine that never yields leaves them the whole run
        # behind, past the decoded window, so each decodes every event from its stored line.
        t_burst = best_of(lambda: time_emit(events, 10, "never", tmp, False, yield_every=0),
                          repeat)
        rows.append(("emit, fsync=never, 10 readers, never yields", n / t_burst,
                     "raw write fsync=never", raw_never / t_burst))

        def read_all() -> float:
            gc.collect()
            start = time.perf_counter()
            for _ in read_journal(path):
                pass
            return time.perf_counter() - start

        def loads_all() -> float:
            gc.collect()
            start = time.perf_counter()
            with open(path, "rb") as f:
                for line in f:
                    json.loads(line)
            return time.perf_counter() - start

        t_read = best_of(read_all, repeat)
        t_loads = best_of(loads_all, repeat)
        rows.append(("read_journal", n / t_read, "json.loads per line", t_loads / t_read))

        parsed = list(read_journal(path))

        def fold_all() -> float:
            fold = RunFold()
            apply = fold.apply
            gc.collect()
            start = time.perf_counter()
            for event in parsed:
                apply(event)
            return time.perf_counter() - start

        t_fold = best_of(fold_all, repeat)
        rows.append(("fold (RunFold.apply)", n / t_fold, "json.loads per line", t_loads / t_fold))

    width = max(len(r[0]) for r in rows)
    print(f"{n:,} events, best of {repeat}; ratio = baseline time / measured time "
          "(1.0 = as fast as the baseline)")
    print(f"{'measure':<{width}}  {'events/s':>12}  {'baseline':<26} {'ratio':>6}")
    print("-" * (width + 50))
    for name, rate, baseline, ratio in rows:
        ratio_text = f"{ratio:6.2f}" if baseline != "-" else "     -"
        print(f"{name:<{width}}  {rate:>12,.0f}  {baseline:<26} {ratio_text}")


if __name__ == "__main__":
    main()
