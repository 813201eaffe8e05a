"""The fleet's costs, against a real host process: the fleet view's key→frame with 8 runs
streaming, the host's memory with 8 long runs, its CPU with 8 idle ones, and attaching to a
long run.

Run:  .venv/bin/python bench/bench_fleet.py [--runs 8] [--rate 1000] [--long 100000]
          [--presses 40] [--idle-seconds 10]

Every figure is measured in this one run, in a fresh COCKPIT_HOME, against `cockpit host`
started for it (stopped at the end). The runs are `cockpit run … --engine fleet_engine:make
--detach` (bench/fleet_engine.py): each streams reply deltas, then asks an approval and waits.

1. Fleet idle (the baseline): 8 runs asking, none streaming; the fleet view (`FleetApp` over
   the host's socket, in this process) takes `down`/`up` in its runs table, each timed from the
   key (sent through the driver, as a terminal would) to the first composed frame after its
   action ran (`frame_drawn`/`action_ran` of bench/bench_ui.py).
2. Fleet busy: the same, with 8 more runs streaming `--rate` events a second each, all at
   once. Targets: p95 ≤ 1.5× and max ≤ 2× the idle's. Also counted (deterministic where the
   latencies are noisy): the keys whose frame carried a push (drawn after their action, in
   their frame), and the keys sent within two frame periods of a frame of a push's own (each
   waited on Textual's frame grid for its frame: the busy outliers, found with `--trace`).
3. Host idle CPU: the host's CPU time (/proc) over `--idle-seconds` with the 8 idle runs and
   the fleet view watching. Target ≤ 1% of a core.
4. Host memory: 8 runs of `--long` events each, as fast as the host takes them; the host's
   RSS once all have asked (all their events in memory). Target ≤ 300 MB.
5. Attach: the live cockpit over one of those runs (`RemoteSession`), from the app's start to
   its first composed frame, to the first that shows some of the run's events, and to the
   frame that shows the run's last event. Target: the first frame ≤ 0.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(ROOT), str(BENCH)]
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
HOME = Path(tempfile.mkdtemp(prefix="ckb", dir="/tmp"))  # (short: a socket path is ≤ 107 bytes)
os.environ["COCKPIT_HOME"] = str(HOME)
os.environ.pop("XDG_RUNTIME_DIR", None)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH), str(ROOT),
                                                         os.environ.get("PYTHONPATH")]))

import cockpit  # noqa: F401,E402 (first: it sets Textual's frame cap)

# isort: split
from bench_ui import action_ran, frame_drawn, pct  # noqa: E402
from loop_trace import LoopTrace, report  # noqa: E402
from textual import constants, events  # noqa: E402

from cockpit.host import HostClient  # noqa: E402
from cockpit.host.fleet.fleet_app import FleetApp  # noqa: E402
from cockpit.host.fleet.watch import HostWatch  # noqa: E402
from cockpit.host.places import socket_path  # noqa: E402

now = time.perf_counter
TICK = os.sysconf("SC_CLK_TCK")
TRACE: LoopTrace | None = None
"""With `--trace`: what ran between each timed key and its frame."""
TRACED: dict[str, list[Any]] = {}
"""By phase, with `--trace`: each timed key's `KeyRecord`."""


class TimedFleet(FleetApp):
    """The fleet view with frame timing and key→frame latency recording."""

    def __init__(self, watches: list[HostWatch]) -> None:
        super().__init__(watches, theme="cockpit-dark", remember_theme=False, arm_seconds=0)
        self.first_frame: float | None = None
        self.key_sent: float | None = None
        self.key_handled = False
        self.latencies: list[float] = []
        self.frame_hook: Any = None
        self.redraws: list[float] = []  # when each push was drawn (`show`)
        self.frames: list[float] = []  # when each frame was drawn

    def show(self, shown: Any, *, rows: int | None = None) -> int:
        self.redraws.append(now())
        return super().show(shown, rows=rows)

    def _display(self, screen: Any, renderable: Any) -> None:
        super()._display(screen, renderable)
        if renderable is not None:
            t, timed = now(), self.key_sent is not None
            self.frames.append(t)
            frame_drawn(self, t)
            if TRACE is not None:
                TRACE.frame(t, timed and self.key_sent is None)

    async def run_action(self, action: Any, default_namespace: Any = None,
                         namespaces: Any = None) -> bool:
        handled = await super().run_action(action, default_namespace, namespaces)
        action_ran(self, handled)
        return handled


def cockpit_cmd(*args: str, timeout: float = 120) -> str:
    done = subprocess.run([sys.executable, "-m", "cockpit", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=BENCH)
    if done.returncode != 0:
        raise SystemExit(f"cockpit {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def start_host() -> subprocess.Popen[bytes]:
    read_end, write_end = os.pipe()
    host = subprocess.Popen([sys.executable, "-m", "cockpit", "host", "--ready-fd",
                             str(write_end)], pass_fds=(write_end,), cwd=BENCH,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as ready:
        said = ready.readline()
    if said.strip() != b"ready":
        raise SystemExit(f"the host did not start: {said!r}")
    return host


def detach(events: int, rate: float) -> str:
    return cockpit_cmd("run", f"events={events} rate={rate:g}", "--engine",
                       "fleet_engine:make", "--cwd", str(HOME), "--detach")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_asking(runs: set[str], timeout: float = 600) -> None:
    """Wait until every run asks, on the host's own pushes (`watch`), not a clock."""
    deadline = time.monotonic() + timeout
    with HostClient.connect(socket_path(), timeout=timeout) as client:
        client.send({"op": "watch", "id": "w"})
        while time.monotonic() < deadline:
            message = client.read()
            rows = {row["id"]: row for row in message.get("fleet", [])}
            if runs <= rows.keys() and all(len(rows[r]["asks"]) == 1 for r in runs):
                return
    raise SystemExit("the runs did not all ask in time")


BEHIND: dict[str, tuple[int, int]] = {}
"""By phase: how many keys had a push drawn between them and their frame (in it), and how many
were sent within two frame periods of another frame (a push's: each waited on Textual's frame
grid) — deterministic evidence, where the latencies are noisy."""


async def press_keys(app: TimedFleet, pilot: Any, presses: int) -> list[float]:
    """`down` and `up` in turn on the runs table, each once the last one's frame is drawn."""
    app.query_one("#runs").focus()
    await pilot.pause()
    app.latencies.clear()
    driver = app._driver
    assert driver is not None
    carried = after_frame = 0
    grid = 2 / constants.MAX_FPS
    for n in range(presses):
        key = "down" if n % 2 == 0 else "up"
        app.key_handled = False
        sent = app.key_sent = now()
        if TRACE is not None:
            TRACE.begin(sent)
        driver.send_message(events.Key(key, None))
        while app.key_sent is not None:
            await asyncio.sleep(0.001)
        frame = sent + app.latencies[-1]
        carried += any(sent <= t < frame for t in app.redraws)
        after_frame += any(sent - grid <= t < sent for t in app.frames)
        await asyncio.sleep(0.02)  # (a human's pace: not a burst)
    app.behind = carried, after_frame  # type: ignore[attr-defined]
    return list(app.latencies)


async def fleet_keys(presses: int, runs: int, ready: Any, phase: str = "") -> list[float]:
    app = TimedFleet([HostWatch("local")])
    async with app.run_test(size=(160, 48)) as pilot:
        while len(app.board.runs) < runs:
            await asyncio.sleep(0.01)
        await ready(app)
        if TRACE is not None:
            TRACE.records.clear()
        latencies = await press_keys(app, pilot, presses)
        BEHIND[phase] = app.behind  # type: ignore[attr-defined]
        if TRACE is not None:
            TRACED[phase or "cpu watch"] = list(TRACE.records)
        return latencies


async def attach_frames(run: str, last_seq: int) -> tuple[float, float, float]:
    from cockpit.cli.attach import attached_app

    start = now()
    app = attached_app(run, arm_seconds=0)
    shown: dict[str, float] = {}

    class Timed(type(app)):  # type: ignore[misc]
        def _display(self, screen: Any, renderable: Any) -> None:
            super()._display(screen, renderable)
            if renderable is None:
                return
            shown.setdefault("first", now())
            if self.pump._position:  # (its first frame is the app's start: no event yet)
                shown.setdefault("events", now())
            history = self.session.history
            if history and history[-1].seq >= last_seq and self.fold.view is not None:
                shown.setdefault("all", now())

    app.__class__ = Timed
    async with app.run_test(size=(160, 48)) as pilot:
        while "all" not in shown:
            await pilot.pause()
        app.session.detach()
    return shown["first"] - start, shown["events"] - start, shown["all"] - start


def row(name: str, values: list[float], base: list[float] | None = None) -> str:
    p50, p95, top = pct(values, 0.5) * 1000, pct(values, 0.95) * 1000, max(values) * 1000
    line = f"{name:<28} {len(values):>5} {p50:>8.1f} {p95:>8.1f} {top:>8.1f}"
    if base:
        line += (f"   p95 ×{p95 / (pct(base, 0.95) * 1000):.2f}  "
                 f"max ×{top / (max(base) * 1000):.2f}")
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--long", type=int, default=100_000)
    parser.add_argument("--presses", type=int, default=40)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--trace", action="store_true",
                        help="say what ran between each slow key and its frame (loop_trace.py)")
    options = parser.parse_args()
    global TRACE
    if options.trace:
        TRACE = LoopTrace()
        TRACE.install()
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f} · cores {os.cpu_count()} · nice {os.nice(0)}")
    host = start_host()
    try:
        idle = {detach(10, 0) for _ in range(options.runs)}
        wait_asking(idle)
        rss_idle = rss_mb(host.pid)

        async def nothing(app: TimedFleet) -> None:
            return None

        base = asyncio.run(fleet_keys(options.presses, options.runs, nothing, "idle"))

        async def watch_cpu(app: TimedFleet) -> None:
            before = cpu_seconds(host.pid)
            await asyncio.sleep(options.idle_seconds)
            watch_cpu.used = (cpu_seconds(host.pid) - before) / options.idle_seconds  # type: ignore[attr-defined]

        asyncio.run(fleet_keys(2, options.runs, watch_cpu))
        host_idle = watch_cpu.used  # type: ignore[attr-defined]
        # Busy: 8 more runs streaming at --rate each, for longer than the keys take.
        seconds = max(30.0, options.presses * 0.2)
        busy_runs = {detach(int(options.rate * seconds), options.rate)
                     for _ in range(options.runs)}

        async def streaming(app: TimedFleet) -> None:
            while sum(r.status == "running" for r in app.board.runs) < 2 * options.runs:
                await asyncio.sleep(0.01)
            streaming.cpu = cpu_seconds(host.pid)  # type: ignore[attr-defined]
            streaming.t = now()  # type: ignore[attr-defined]

        busy = asyncio.run(fleet_keys(options.presses, 2 * options.runs, streaming, "busy"))
        host_busy = (cpu_seconds(host.pid) - streaming.cpu) / (now() - streaming.t)  # type: ignore[attr-defined]
        for run in busy_runs | idle:
            with HostClient.connect(socket_path()) as client:
                client.request("cancel", run=run)
        # Long runs: 8 × --long events, all held in the host's memory.
        started = now()
        long_runs = {detach(options.long, 0) for _ in range(options.runs)}
        wait_asking(long_runs, timeout=1800)
        took = now() - started  # (the detaching commands' own start-up included)
        rss_long = rss_mb(host.pid)
        one = sorted(long_runs)[0]
        first, some, whole = asyncio.run(attach_frames(one, options.long + 2))
    finally:
        try:
            with HostClient.connect(socket_path()) as client:
                client.request("stop")
        except Exception:
            host.kill()
        host.wait(60)
        shutil.rmtree(HOME, ignore_errors=True)

    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}")
    print()
    print(f"{'fleet view key→frame (ms)':<28} {'keys':>5} {'p50':>8} {'p95':>8} {'max':>8}")
    print(row(f"idle ({options.runs} runs asking)", base))
    print(row(f"busy (+{options.runs} × {options.rate:g}/s)", busy, base))
    print(f"keys whose frame carried a push: idle {BEHIND['idle'][0]}, busy "
          f"{BEHIND['busy'][0]}; sent within two frame periods of a push's frame: idle "
          f"{BEHIND['idle'][1]}, busy {BEHIND['busy'][1]} (of {options.presses} each)")
    for phase, records in TRACED.items():
        print(f"\n{phase}: the slowest keys, and what ran before their frame (ms from the key)")
        print("\n".join(report(records, TRACED["idle"])))
    print()
    print(f"host CPU, {options.runs} idle runs:   {host_idle * 100:6.2f} % of a core "
          f"(target ≤ 1 %)")
    print(f"host CPU, streaming:        {host_busy * 100:6.1f} % of a core")
    print(f"host RSS, {options.runs} idle runs:   {rss_idle:6.1f} MB")
    print(f"host RSS, {options.runs} × {options.long:,} events: {rss_long:6.1f} MB "
          f"(target ≤ 300 MB; streamed in {took:.1f} s)")
    print(f"attach to {options.long:,} events: first frame {first * 1000:6.0f} ms "
          f"(target ≤ 500), its first events shown {some * 1000:6.0f} ms, whole run shown "
          f"{whole * 1000:6.0f} ms")


if __name__ == "__main__":
    main()
