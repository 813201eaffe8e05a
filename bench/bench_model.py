"""Benchmark of the real-model path: one long streamed Chat Completions reply from a local fake
OpenAI-compatible server, through the cockpit, beside a bare `AsyncOpenAI` client reading the
same stream in the same run.

Run:  .venv/bin/python bench/bench_model.py [--repeat 5] [--pace-ms 2] [--key-runs 3]
          [--busy both|no|only] [--no-app] [--no-read]

- stream: the fake server (tests/fakes/openai_fake, in its own process on 127.0.0.1) answers with a
  2,000-chunk reply: reasoning, text, and 20 parallel tool calls whose ids, names and
  arguments are cut into pieces, then usage. Timed from the request to the end of the reply:
    bare     `AsyncOpenAI(...).chat.completions.create(stream=True)` reading every chunk and
             keeping its text and argument pieces (client creation included)
    bare JSON  the same client making the request `OpenAIModel` makes (`post(...,
             cast_to=object)`: chunks as decoded JSON, not typed models), the same reading
    cockpit  `OpenAIModel` in the built-in engine + `Session` + journal (fsync at boundaries) +
             the fold reading `events()`: done when the fold has folded the reply's
             `model_usage` (client creation, the schemas, the messages and the server's model
             listing included; the 20 tool calls then run untimed, and a second reply finishes)
  Runs alternate (bare, cockpit, …); each side's best run is the figure (load from other work
  only adds time), medians beside it. Target: cockpit ≤ 1.2× bare.
- key latency: the live `CockpitApp` (headless) over a reply of the same pieces, three times
  as long (`--key-chunks`, 6,000) and sent slowly (`--pace-ms` between chunks); `up` (move the
  transcript selection) is sent through the driver every ~50 ms while the reply streams, then as
  often once the run is over (idle, same app, same run), and timed to the next composed frame
  (the frame timing of bench/bench_ui.py). Each run is a fresh interpreter; `--key-runs` of them
  alternate with and without a CPU burner on one core (`--busy both`, bench/cpu_burner.py), each
  ratio taken within its own run; medians shown.
  Target: streaming p95 ≤ 1.5× idle p95, also with the core burned.

Ratios travel between machines; absolute numbers do not (these machines are shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.setdefault("COCKPIT_HOME", tempfile.mkdtemp(prefix="cockpit-bench-"))

import openai  # noqa: E402
from cpu_burner import burner  # noqa: E402 (bench/, the script's own folder)
from fakes.openai_fake.server import FakeOpenAI, Stream, chunks  # noqa: E402

from engine_adapter import JsonlEventJournal, Session, TaskState  # noqa: E402
from engine_adapter.engines.builtin import BuiltinRunner  # noqa: E402
from engine_adapter.engines.builtin.models.openai import OpenAIModel  # noqa: E402
from engine_adapter.view import RunFold  # noqa: E402

now = time.perf_counter
CHUNKS = 2_000
# The key-latency run streams a longer reply, same pace, same pieces: ~250 keys timed while it
# streams, not ~90, so a run's p95 is its 13th slowest key, not its 5th (at ~90, one grid
# collision more or less moved a run's ratio by 0.5x and more).
KEY_CHUNKS = 6_000
CALLS = 20
FILES = [f"notes/f{i:02d}.txt" for i in range(CALLS)]


def long_reply(total: int = CHUNKS) -> list[dict[str, Any]]:
    """The reply (2,000 chunks unless told): reasoning and text in small pieces, then 20 calls in
    20 pieces each."""
    calls = [("read_file", {"path": path}) for path in FILES]
    pieces = (total - 3 - CALLS * CALLS) // 2  # role, finish and usage chunks besides
    reasoning = " ".join(f"step{i}" for i in range(pieces))
    text = " ".join(f"word{i}" for i in range(pieces))
    out = chunks(text, reasoning=reasoning, calls=calls, split=CALLS, text_pieces=pieces,
                 usage=(4000, 2500))
    while len(out) < total:  # top up with text, just before the calls
        extra = json.loads(json.dumps(out[1 + pieces]))
        extra["choices"][0]["delta"] = {"content": " more"}
        out.insert(1 + 2 * pieces, extra)
    assert len(out) == total, len(out)
    return out


FINISH = chunks("Done.", calls=[("finish", {"result": "read them all"})])


def serve(port: int, pace: float, total: int = CHUNKS) -> None:
    """The server process: the long reply to a first request, a finish after tool results."""
    reply, finish = long_reply(total), FINISH

    def script(body: dict[str, Any], number: int) -> Stream:
        answered = any(m.get("role") == "tool" for m in body.get("messages", []))
        return Stream(finish) if answered else Stream(reply, pace=pace)

    server = FakeOpenAI(script, port=port).start()
    print(server.url, flush=True)
    sys.stdin.read()  # until the parent closes our stdin
    server.stop()


class Server:
    """The fake server in a child process (its CPU time is not ours)."""

    def __init__(self, pace: float = 0.0, total: int = CHUNKS) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", "0", "--pace-ms", str(pace * 1000),
             "--key-chunks", str(total)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def workspace(root: Path) -> Path:
    (root / "notes").mkdir(exist_ok=True)
    for path in FILES:
        (root / path).write_text(f"{path}\n" * 20)
    return root


BODY: dict[str, Any] = {
    "model": "fake-model", "messages": [{"role": "user", "content": "read the notes"}],
    "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}}],
    "stream": True, "stream_options": {"include_usage": True}}


async def bare_read(url: str) -> tuple[float, int]:
    """Seconds for the bare client (`chat.completions.create`, typed chunks) to read the reply,
    and the chunks it read."""
    gc.collect()
    start = now()
    async with openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0) as client:
        stream = await client.chat.completions.create(**BODY)
        text: list[str] = []
        arguments: dict[int, list[str]] = {}
        count = 0
        async for chunk in stream:
            count += 1
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                reasoning = getattr(delta, "reasoning_content", None)
                if reasoning:
                    text.append(reasoning)
                for call in delta.tool_calls or ():
                    if call.function and call.function.arguments:
                        arguments.setdefault(call.index, []).append(call.function.arguments)
    elapsed = now() - start
    assert len(arguments) == CALLS
    return elapsed, count


async def bare_raw_read(url: str) -> tuple[float, int]:
    """The same with chunks left as decoded JSON (`post(..., cast_to=object)`, the request
    `OpenAIModel` makes): the floor under the cockpit's own reading."""
    gc.collect()
    start = now()
    async with openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0) as client:
        stream = await client.post("/chat/completions", body=BODY, cast_to=object, stream=True,
                                   stream_cls=openai.AsyncStream[object])
        text: list[str] = []
        arguments: dict[int, list[str]] = {}
        count = 0
        async for chunk in stream:
            count += 1
            for choice in chunk["choices"]:
                delta = choice["delta"]
                if delta.get("content"):
                    text.append(delta["content"])
                if delta.get("reasoning_content"):
                    text.append(delta["reasoning_content"])
                for call in delta.get("tool_calls") or ():
                    if call["function"].get("arguments"):
                        arguments.setdefault(call["index"], []).append(
                            call["function"]["arguments"])
    elapsed = now() - start
    assert len(arguments) == CALLS
    return elapsed, count


async def cockpit_read(url: str, root: Path, journal: Path) -> tuple[float, int, float]:
    """Seconds from the run's start to the fold folding the reply's usage, the events folded
    by then, and the seconds of the whole run."""
    model = OpenAIModel("fake-model", base_url=url)
    session = Session(BuiltinRunner(model, cwd=root), TaskState(task="read the notes"),
                      journal=JsonlEventJournal(journal, fsync="boundary"))
    fold = RunFold()
    read_at: list[tuple[float, int]] = []

    async def consume() -> None:
        apply = fold.apply
        async for event in session.events():
            apply(event)
            if event.type == "model_usage" and not read_at:
                read_at.append((now(), fold.view.events))

    consumer = asyncio.ensure_future(consume())
    gc.collect()
    start = now()
    state = await session.run()
    await consumer
    total = now() - start
    await model.aclose()
    assert state.status == "completed", state.error
    assert len([e for e in session.history if e.type == "tool_end" and e.ok]) == CALLS
    return read_at[0][0] - start, read_at[0][1], total


def stream_rows(repeat: int) -> list[tuple[str, str]]:
    server = Server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = workspace(Path(tmp))
            bare: list[float] = []
            raw: list[float] = []
            cockpit: list[float] = []
            runs: list[float] = []
            events = received = 0
            for i in range(repeat):
                seconds, received = asyncio.run(bare_read(server.url))
                bare.append(seconds)
                seconds, received = asyncio.run(bare_raw_read(server.url))
                raw.append(seconds)
                seconds, events, total = asyncio.run(cockpit_read(
                    server.url, root, root / f"run{i}.jsonl"))
                cockpit.append(seconds)
                runs.append(total)
    finally:
        server.close()
    assert received == CHUNKS, f"the bare client read {received} of {CHUNKS} chunks"
    b, r, c = min(bare), min(raw), min(cockpit)

    def runs_of(values: list[float]) -> str:
        return "(runs: " + ", ".join(f"{x:.3f}" for x in values) + ")"

    return [
        ("bare AsyncOpenAI, typed chunks: read (s), best", f"{b:.3f}  {runs_of(bare)}"),
        ("bare AsyncOpenAI, JSON chunks: read (s), best", f"{r:.3f}  {runs_of(raw)}"),
        ("cockpit path: reply read (s), best", f"{c:.3f}  {runs_of(cockpit)}"),
        ("cockpit / bare typed, best", f"{c / b:.2f}x   (target <= 1.2x)"),
        ("cockpit / bare typed, medians",
         f"{statistics.median(cockpit) / statistics.median(bare):.2f}x"),
        ("cockpit / bare JSON (same request), best", f"{c / r:.2f}x"),
        ("events folded by the reply's end", f"{events:,}"),
        ("whole run, 20 tool calls + finish (s), best", f"{min(runs):.3f}"),
    ]


def seen(session: Session, kind: str) -> Callable[[], bool]:
    """Whether the session has emitted an event of `kind` yet (reads each event once: the
    check runs on the app's loop, beside the keys it times)."""
    at, found = 0, False

    def check() -> bool:
        nonlocal at, found
        if not found:
            history = session.history
            end = len(history)
            found = any(history[i].type == kind for i in range(at, end))
            at = end
        return found

    return check


def key_run(pace: float, total: int = KEY_CHUNKS) -> dict[str, Any]:
    """One live-app run (in this interpreter): key->frame latencies while the reply streams,
    then idle, in seconds."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_ui import SIZE, TimedCockpit
    from textual import constants
    from textual import events as textual_events

    async def press_while(app: TimedCockpit, keep_going: Callable[[], bool]) -> list[float]:
        driver, first = app._driver, len(app.latencies)
        while keep_going():
            if app.key_sent is None:
                app.key_handled = False
                app.key_sent = now()
                driver.send_message(textual_events.Key("up", None))
            await asyncio.sleep(0.05)
        return app.latencies[first:]

    async def one() -> dict[str, Any]:
        server = Server(pace, total)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                root = workspace(Path(tmp))
                model = OpenAIModel("fake-model", base_url=server.url)
                session = Session(BuiltinRunner(model, cwd=root),
                                  TaskState(task="read the notes"))
                app = TimedCockpit(session)
                async with app.run_test(size=SIZE, headless=True) as pilot:
                    streaming_began, reply_read = (seen(session, "model_update"),
                                                   seen(session, "model_usage"))
                    while not streaming_began():
                        await asyncio.sleep(0.01)
                    streaming = await press_while(app, lambda: not reply_read())
                    while not session.done:
                        await asyncio.sleep(0.05)
                    await pilot.pause()
                    started = now()
                    idle = await press_while(app, lambda: now() - started < len(streaming) * 0.06)
                await model.aclose()
                return {"streaming": streaming, "idle": idle, "events": app.view.events,
                        "status": session.state.status, "fps": constants.MAX_FPS}
        finally:
            server.close()

    return asyncio.run(one())


def key_rows(pace: float, runs: int, modes: list[bool], total: int) -> list[tuple[str, str]]:
    try:
        sys.path.insert(0, str(ROOT / "bench"))
        from bench_ui import pct
    except ImportError as exc:  # the live app's benchmark harness is not there
        return [("key latency", f"not measured: {exc}")]

    found: dict[bool, list[dict[str, Any]]] = {busy: [] for busy in modes}
    for _ in range(runs):  # alternating, so drift in the box's load falls on both alike
        for busy in modes:
            with burner(busy):
                out = subprocess.run([sys.executable, __file__, "--key-run", "--pace-ms",
                                      str(pace * 1000), "--key-chunks", str(total)],
                                     check=True, capture_output=True, text=True).stdout
            found[busy].append(json.loads(out.strip().splitlines()[-1]))
    rows = []
    for busy in modes:
        tag = "busy: " if busy else ""
        done = found[busy]

        def median(key: str, q: float | None, done: list[dict[str, Any]] = done) -> float:
            picked = [pct(r[key], q) if q is not None else max(r[key], default=float("nan"))
                      for r in done]
            return statistics.median(picked) * 1000

        for label, q in (("p50", 0.5), ("p95", 0.95), ("max", None)):
            rows.append((f"{tag}key->frame {label} (ms): idle / streaming",
                         f"{median('idle', q):.1f} / {median('streaming', q):.1f}"))
        ratios = [pct(r["streaming"], 0.95) / pct(r["idle"], 0.95) for r in done]
        rows.append((f"{tag}streaming p95 / idle p95, median",
                     f"{statistics.median(ratios):.2f}x   (target <= 1.5x)  (runs: "
                     + ", ".join(f"{x:.2f}" for x in ratios) + ")"))
        rows.append((f"{tag}keys timed: idle, streaming; events; run",
                     "; ".join(f"{len(r['idle'])}, {len(r['streaming'])}; {r['events']}; "
                               f"{r['status']}" for r in done)))
    # A frame keeps the next one back one to two periods of this cap (see `cockpit.FRAME_CAP`).
    caps = sorted({r["fps"] for busy in modes for r in found[busy]})
    rows.append(("Textual's frame cap in the runs (TEXTUAL_FPS)",
                 ", ".join(f"{cap} fps" for cap in caps)))
    rows.append(("load average at the end", " ".join(f"{x:.2f}" for x in os.getloadavg())))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pace-ms", type=float, default=2.0,
                        help="milliseconds between chunks in the key-latency run")
    parser.add_argument("--key-runs", type=int, default=3,
                        help="live-app runs for the key latency, each mode; medians shown (3)")
    parser.add_argument("--key-chunks", type=int, default=KEY_CHUNKS,
                        help=f"chunks streamed in the key-latency run ({KEY_CHUNKS:,})")
    parser.add_argument("--busy", choices=["both", "no", "only"], default="both",
                        help="key latency also with a CPU burner on one core (both)")
    parser.add_argument("--no-app", action="store_true", help="skip the live-app key latency")
    parser.add_argument("--no-read", action="store_true",
                        help="skip the read-speed comparison with the bare client")
    parser.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--key-run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, args.pace_ms / 1000, args.key_chunks)
        return
    if args.key_run:
        print(json.dumps(key_run(args.pace_ms / 1000, args.key_chunks)))
        return
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = [] if args.no_read else stream_rows(args.repeat)
    if not args.no_app:
        modes = {"both": [False, True], "no": [False], "only": [True]}[args.busy]
        rows += key_rows(args.pace_ms / 1000, args.key_runs, modes, args.key_chunks)
    print(f"\nModel benchmark: a {CHUNKS:,}-chunk streamed reply with {CALLS} tool calls from "
          f"the local fake server, {args.repeat} read runs a side")
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


if __name__ == "__main__":
    main()
