"""Benchmark of the ACP path: a streamed reply from a real ACP agent process, through the cockpit,
beside a bare SDK client driving the same agent in the same run.

Run:  .venv/bin/python bench/bench_acp.py [--chunks 50000] [--repeat 5] [--no-app]

- stream: the test agent (tests/fakes/acp_agent/agent.py, `stream N`) sends N `agent_message_chunk`
  updates. Timed from sending `session/prompt` to the end of the turn, the agent already
  started (spawn and `initialize` excluded on both sides):
    bare     the SDK's `connect_to_agent` over the agent's pipes; `session_update` keeps the text
    cockpit  `AcpRunner` + `Session` + journal (fsync at boundaries) + the fold reading
             `events()`: done when the fold has folded `agent_end`
  Runs alternate (bare, cockpit, bare, …); each side's best run is the figure (load from
  other work only ever adds time), medians beside it. Target: cockpit ≤ 1.2× bare.
- key latency: the live `CockpitApp` (headless) over the same streamed reply with a permission
  request every `--every` chunks; `y` is pressed through the driver for each and timed to the
  next composed frame (the frame timing of bench/bench_ui.py). Beside it the same app and
  approvals with no stream.

- agent box: the test agent started inside the sandbox (`AgentBox(contain=True)`: bwrap, the
  seccomp filter, the masks, its own PID namespace) against started as a plain process, runs
  alternating in the same run: start (spawn to the `initialize` answer) and one turn with a
  permission round trip (`permission …`, answered by a watcher on `events()`, journaled).
  Target: start ≤ 1.2×, turn ≤ 1.1× (best of each side; medians beside).

Ratios travel between machines; absolute numbers do not (these machines are shared and noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.setdefault("COCKPIT_HOME", tempfile.mkdtemp(prefix="cockpit-bench-"))

import acp  # noqa: E402
from acp.schema import ClientCapabilities, Implementation  # noqa: E402
from fakes.acp_agent.helpers import agent_argv, approve, drive  # noqa: E402

from engine_adapter import JsonlEventJournal, Session, TaskState  # noqa: E402
from engine_adapter.engines.acp import AcpRunner  # noqa: E402
from engine_adapter.engines.acp.agent import AgentBox  # noqa: E402
from engine_adapter.sandbox import Sandbox, SandboxSettings  # noqa: E402
from engine_adapter.view import RunFold  # noqa: E402

now = time.perf_counter


class BareClient:
    """The least an SDK client can do with a streamed reply: keep the text."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        if content is not None and getattr(content, "type", None) == "text":
            self.parts.append(content.text)

    async def request_permission(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


async def bare_stream(chunks: int, workspace: Path) -> tuple[float, int]:
    """Seconds for one streamed turn through a bare SDK client, and the chunks it received."""
    argv = agent_argv()
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        cwd=workspace, start_new_session=True, limit=64 * 1024 * 1024)
    client = BareClient()
    conn = acp.connect_to_agent(client, proc.stdin, proc.stdout)
    try:
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                              client_capabilities=ClientCapabilities(),
                              client_info=Implementation(name="bare", version="0"))
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        gc.collect()
        start = now()
        await conn.prompt(session_id=session.session_id,
                          prompt=[acp.text_block(f"stream {chunks}")])
        elapsed = now() - start
        return elapsed, len(client.parts)
    finally:
        os.killpg(proc.pid, 9)
        await proc.wait()
        await conn.close()


async def cockpit_stream(chunks: int, workspace: Path, journal: Path) -> tuple[float, int]:
    """Seconds for one streamed turn through AcpRunner + Session + journal + fold, and the
    events the fold saw."""
    async with AcpRunner(agent_argv(), cwd=workspace) as runner:
        await Session(runner, TaskState(task="hello")).run()  # start the agent: not timed
        session = Session(runner, TaskState(task=f"stream {chunks}"),
                          journal=JsonlEventJournal(journal, fsync="boundary"))
        fold = RunFold()

        async def consume() -> None:
            apply = fold.apply
            async for event in session.events():
                apply(event)

        consumer = asyncio.ensure_future(consume())
        gc.collect()
        start = now()
        state = await session.run()
        await consumer
        elapsed = now() - start
        assert state.status == "completed", state.error
        return elapsed, fold.view.events


def stream_rows(chunks: int, repeat: int) -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        bare: list[float] = []
        cockpit: list[float] = []
        events = received = 0
        for i in range(repeat):
            seconds, received = asyncio.run(bare_stream(chunks, workspace))
            bare.append(seconds)
            seconds, events = asyncio.run(cockpit_stream(chunks, workspace,
                                                         workspace / f"run{i}.jsonl"))
            cockpit.append(seconds)
        assert received == chunks, f"bare client received {received} of {chunks} chunks"
        # Best of the runs is the figure (other load on the machine only ever adds time, as in
        # bench_core); the medians are shown beside it.
        b, c = min(bare), min(cockpit)
        bm, cm = statistics.median(bare), statistics.median(cockpit)
        return [
            ("bare SDK client: turn (s), best", f"{b:.3f}  (runs: "
             + ", ".join(f"{x:.3f}" for x in bare) + ")"),
            ("cockpit path: turn (s), best", f"{c:.3f}  (runs: "
             + ", ".join(f"{x:.3f}" for x in cockpit) + ")"),
            ("cockpit / bare, best", f"{c / b:.2f}x   (target <= 1.2x)"),
            ("cockpit / bare, medians", f"{cm / bm:.2f}x"),
            ("bare chunks/s", f"{chunks / b:,.0f}"),
            ("cockpit events/s (journaled + folded)", f"{events / c:,.0f}  ({events} events)"),
        ]


def key_rows(chunks: int, every: int) -> list[tuple[str, str]]:
    try:
        sys.path.insert(0, str(ROOT / "bench"))
        from bench_ui import SIZE, TimedCockpit, pct
        from bench_ui import drive as press_y
    except ImportError as exc:  # the live app's benchmark harness is not there
        return [("key latency", f"not measured: {exc}")]

    async def one(task: str) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            async with AcpRunner(agent_argv(), cwd=tmp) as runner:
                await Session(runner, TaskState(task="hello")).run()
                session = Session(runner, TaskState(task=task))
                app = TimedCockpit(session)
                start = now()
                async with app.run_test(size=SIZE, headless=True) as pilot:
                    pressed = await press_y(app, pilot, lambda: session.done)
                    await pilot.pause()
                elapsed = now() - start
                return {"latencies": app.latencies, "pressed": pressed, "seconds": elapsed,
                        "events": app.view.events, "status": session.state.status}

    approvals = max(1, chunks // every)
    idle = asyncio.run(one(f"stream {approvals} 1"))
    flood = asyncio.run(one(f"stream {chunks} {every}"))
    rows = []
    for label, q in (("p50", 0.5), ("p95", 0.95)):
        rows.append((f"key->frame {label} (ms): idle / streaming",
                     f"{pct(idle['latencies'], q) * 1000:.1f} / "
                     f"{pct(flood['latencies'], q) * 1000:.1f}"))
    rows.append(("key->frame max (ms): idle / streaming",
                 f"{max(idle['latencies'], default=float('nan')) * 1000:.1f} / "
                 f"{max(flood['latencies'], default=float('nan')) * 1000:.1f}"))
    rows.append(("live app: keys pressed, events, seconds",
                 f"{flood['pressed']}, {flood['events']}, {flood['seconds']:.2f} "
                 f"({flood['status']})"))
    return rows


async def _box_once(contain: bool, tmp: str) -> tuple[float, float]:
    """One agent's start (spawn to `initialize`) and one permission turn, in seconds."""
    workspace = Path(tmp) / f"ws-{contain}"
    workspace.mkdir()
    sandbox = Sandbox(SandboxSettings(), workspace=workspace)
    await sandbox.acheck()  # once per run in the cockpit too: not timed
    runner = AcpRunner(agent_argv(), cwd=workspace, sandbox=sandbox,
                       box=AgentBox(contain=contain, state=(str(workspace / "state"),)))
    (workspace / "state").mkdir()
    try:
        begin = now()
        await runner.connection.connect(str(workspace), asyncio.Event(), model=None)
        start = now() - begin
        await runner.close()
        await drive(runner, "hello", Path(tmp) / f"warm-{contain}.jsonl")  # open a session
        turns = []
        for index in range(5):  # the best of a few turns: one is a few ms, noise is as big
            begin = now()
            _state, events = await drive(runner, "permission allow_once,reject_once make",
                                         Path(tmp) / f"turn-{contain}-{index}.jsonl",
                                         answer=approve())
            turns.append(now() - begin)
            assert events[-1].status == "completed", events[-1]
            assert (events[0].agent_sandbox == "workspace-write") == contain, events[0]
        return start, min(turns)
    finally:
        await runner.close()


def box_rows(repeat: int) -> list[tuple[str, str]]:
    starts: dict[bool, list[float]] = {False: [], True: []}
    turns: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeat):
        for contain in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                start, turn = asyncio.run(_box_once(contain, tmp))
            starts[contain].append(start)
            turns[contain].append(turn)
    rows = []
    for label, table in (("start to initialize", starts), ("turn with a permission", turns)):
        plain, boxed = min(table[False]), min(table[True])
        rows.append((f"agent {label} (ms): outside / sandboxed",
                     f"{plain * 1000:.1f} / {boxed * 1000:.1f}  ({boxed / plain:.2f}×; medians "
                     f"{statistics.median(table[False]) * 1000:.1f} / "
                     f"{statistics.median(table[True]) * 1000:.1f})"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--every", type=int, default=2500,
                        help="chunks between permission requests in the key-latency run")
    parser.add_argument("--no-app", action="store_true", help="skip the live-app key latency")
    parser.add_argument("--box-only", action="store_true",
                        help="only the agent in the sandbox against outside it")
    args = parser.parse_args()
    rows = box_rows(args.repeat)
    if not args.box_only:
        rows = stream_rows(args.chunks, args.repeat) + rows
    if not args.no_app and not args.box_only:
        rows += key_rows(args.chunks, args.every)
    print(f"\nACP benchmark: {args.chunks:,} streamed chunks from the SDK test agent, "
          f"{args.repeat} runs a side")
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


if __name__ == "__main__":
    main()
