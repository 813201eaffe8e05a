"""UI benchmark of the live cockpit: key→frame latency and memory under a flood of events.

Run:  .venv/bin/python bench/bench_ui.py [--events 100000] [--rate 5000] [--idle-seconds 5]

What it measures, each beside a baseline from the same run (these machines are shared and
noisy: ratios travel, absolute numbers do not):

- flood: a flood engine emits `--events` events at `--rate`/s (streamed text, tool calls, turn
  boundaries) while a tool call asks for approval every ~50 ms; the benchmark presses `y` for
  each (a real key event through the driver) and times key → the next composed frame. Beside
  it: the same app, same approvals, no flood ("idle"). Also RSS growth per 100k events.
- a single 10 MB tool output: from the engine's emit to the frame that shows it; baseline a
  one-line output.
- startup: constructing the app to its first frame; baseline a bare Textual app.

Frames are timed through `App._display` (called once per composed frame, also headless) and keys
sent through `App._driver`: private Textual API, kept here on purpose (the product depends on
`textual>=8.2,<9` and uses none). If a Textual release renames either, this benchmark breaks
loudly and needs the new name; the cockpit itself is unaffected.

Targets (issue 4): p95 ≤ 40 ms, max ≤ 80 ms, RSS growth ≤ 60 MiB per 100k events, 10 MB output ≤
0.1 s, startup ≤ 0.5 s.
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.setdefault("COCKPIT_HOME", tempfile.mkdtemp(prefix="cockpit-bench-"))

import cockpit  # noqa: F401 (first: it sets Textual's frame cap, `cockpit.FRAME_CAP`)

# isort: split
from cpu_burner import burner
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Static

from cockpit.live import CockpitApp
from engine_adapter import (
    AgentEnd,
    AgentStart,
    ModelUpdate,
    ModelUsage,
    Session,
    TaskState,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
)

SIZE = (160, 48)
now = time.perf_counter


def rss_mib() -> float:
    """Resident set size now (Linux), in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


TOOL_OUTPUT_LINES = 20  # lines of each tool call's output in the tool-heavy flood


def text_mix(i: int, turn: int) -> tuple[Any, int]:
    """The text-heavy flood's event `i`: mostly streamed text, a tool call and usage a turn."""
    k = i % 50
    if k == 0:
        return TurnStart(turn=turn), turn
    if k == 48:
        return ModelUsage(model="flood", input_tokens=100, output_tokens=20), turn
    if k == 49:
        return TurnEnd(turn=turn, stop_reason="tool_use"), turn + 1
    if k == 20:
        return ToolStart(call_id=f"f{i}", tool="read_file", tool_input={"path": f"src/m{i}.py"},
                         tier=1), turn
    if k == 21:
        return ToolEnd(call_id=f"f{i - 1}", tool="read_file", ok=True, output="import os\n" * 8,
                       duration_ms=0.4), turn
    return ModelUpdate(turn=turn, text=f"token {i} "), turn


def tool_mix(i: int, turn: int) -> tuple[Any, int]:
    """The tool-heavy flood's event `i` (an agent with fast tools, or a replayed run): a quarter
    each of `model_update`, `tool_start`, `tool_end` with a 20-line output, `model_usage`."""
    k = i % 4
    if k == 0:
        return ModelUpdate(turn=turn, text=f"checking file {i} "), turn
    if k == 1:
        return ToolStart(call_id=f"t{i}", tool="shell", tool_input={"command": f"cat src/m{i}.py"},
                         tier=1), turn
    if k == 2:
        output = "".join(f"{i}:{n:02d}  def handler_{n}(event): return fold(event, {n})\n"
                         for n in range(TOOL_OUTPUT_LINES))
        return ToolEnd(call_id=f"t{i - 1}", tool="shell", ok=True, output=output,
                       duration_ms=0.4), turn
    return ModelUsage(model="flood", input_tokens=100, output_tokens=20), turn


def stream_mix(i: int, turn: int) -> tuple[Any, int]:
    """A streaming reply: every event a delta of the model's message (one word)."""
    return ModelUpdate(turn=turn, text=f"word{i} "), turn


MIXES = {"text": text_mix, "tools": tool_mix, "stream": stream_mix}


class FloodEngine:
    """Emits `events` events of `mix` at `rate`/s while asking for approval every `every`
    seconds."""

    def __init__(self, events: int, rate: float, every: float = 0.05, mix: str = "text",
                 command: str = "git diff --stat HEAD~{n}") -> None:
        self.total, self.rate, self.every = events, rate, every
        self.command = command  # what each approval asks to run (`{n}`: its number)
        self.mix = MIXES[mix]
        self.event_sink: Any = None
        self.approval_controller: Any = None
        self.cancel_token: Any = None
        self.emitted = 0
        self.flood_done = asyncio.Event()

    async def _flood(self) -> None:
        emit = self.event_sink.emit
        mix = self.mix
        tick = 0.01
        per_tick = max(1, int(self.rate * tick))
        start = now()
        turn = 1
        i = 0
        if mix is not text_mix:
            emit(TurnStart(turn=turn))
        while i < self.total and not self.cancel_token.cancelled:
            for _ in range(per_tick):
                event, turn = mix(i, turn)
                emit(event)
                i += 1
                if i >= self.total:
                    break
            self.emitted = i
            # Pace to the wall clock so bursts after a slow frame catch up, as a real flood would.
            await asyncio.sleep(max(0.0, start + i / self.rate - now()))
        self.flood_done.set()

    async def _approvals(self, stop: asyncio.Event) -> None:
        n = 0
        while not stop.is_set() and not self.cancel_token.cancelled:
            await asyncio.sleep(self.every)
            call_id = f"a{n}"
            n += 1
            tool_input = {"command": self.command.format(n=n)}
            allowed = await self.approval_controller.request_approval(
                call_id, "shell", "flood approval", tool_input, tier=3)
            if allowed:
                self.event_sink.emit(ToolStart(call_id=call_id, tool="shell",
                                               tool_input=tool_input, tier=3))
                self.event_sink.emit(ToolEnd(call_id=call_id, tool="shell", ok=True,
                                             output="1 file changed", duration_ms=1.0))

    async def run(self, state: TaskState) -> TaskState:
        self.event_sink.emit(AgentStart(task=state.task, engine="flood"))
        stop = asyncio.Event()
        approvals = asyncio.create_task(self._approvals(stop))
        if self.total:
            await self._flood()
        else:
            await asyncio.sleep(self.rate)  # idle: `rate` is the duration in seconds
        stop.set()
        await approvals
        self.event_sink.emit(AgentEnd(status="completed", result="flood done"))
        return state


class TimedCockpit(CockpitApp):
    """The cockpit with frame timing and key→frame latency recording."""

    def __init__(self, session: Session) -> None:
        # Keys are timed on the armed path: a new approval's arming delay (ARM_SECONDS) is a
        # pause for the human to read, not latency, and `drive` presses once armed.
        super().__init__(session, theme="cockpit-dark", remember_theme=False, arm_seconds=0.0)
        self.first_frame: float | None = None
        self.key_sent: float | None = None
        self.key_handled = False
        self.latencies: list[float] = []
        self.frame_hook: Any = None

    def _display(self, screen: Any, renderable: Any) -> None:
        super()._display(screen, renderable)
        if renderable is not None:
            frame_drawn(self, now())

    async def run_action(self, action: Any, default_namespace: Any = None,
                         namespaces: Any = None) -> bool:
        handled = await super().run_action(action, default_namespace, namespaces)
        action_ran(self, handled)
        return handled


def action_ran(app: Any, handled: bool) -> None:
    """A binding's action has run (`App.run_action`, which every key binding goes through):
    the key being timed was handled, so the next composed frame is its answer."""
    if handled and app.key_sent is not None:
        app.key_handled = True


def frame_drawn(app: Any, t: float) -> None:
    """A composed frame at `t` (from `App._display`): the first one, the timed key's answer
    (key sent -> this frame, once its action ran), and the app's own hook. The one frame timing
    of the benchmarks (bench_ui, bench_model, bench_keys): `app` has `first_frame`, `key_sent`,
    `key_handled`, `latencies` and `frame_hook`."""
    if app.first_frame is None:
        app.first_frame = t
    if app.key_sent is not None and app.key_handled:
        app.latencies.append(t - app.key_sent)
        app.key_sent = None
    if app.frame_hook is not None:
        app.frame_hook(t)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def drive(app: TimedCockpit, pilot: Any, done: Any) -> int:
    """Press `y` (through the driver, like a terminal) for every approval until `done()`."""
    pressed = 0
    driver = app._driver
    while not done():
        if app.view.pending and app.key_sent is None \
                and app.display_widget.approval_bar.arming.armed():  # drawn, answerable
            app.key_handled = False
            app.key_sent = now()
            driver.send_message(events.Key("y", "y"))
            pressed += 1
        await asyncio.sleep(0.002)
    return pressed


async def flood_run(n_events: int, rate: float, idle_seconds: float,
                    mix: str = "text") -> dict[str, Any]:
    engine = FloodEngine(n_events, rate if n_events else idle_seconds, mix=mix)
    session = Session(engine, TaskState(task="flood"))
    app = TimedCockpit(session)
    gc.collect()
    rss0 = rss_mib()
    t0 = now()
    async with app.run_test(size=SIZE, headless=True) as pilot:
        pressed = await drive(app, pilot, lambda: session.done)
        await pilot.pause()
        elapsed = now() - t0
        gc.collect()
        rss1 = rss_mib()
        events_seen = app.view.events
    return {"latencies": app.latencies, "pressed": pressed, "rss": rss1 - rss0,
            "events": events_seen, "seconds": elapsed}


class OneOutputEngine:
    """Starts a tool, waits to be told, then ends it with `size` bytes of output."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.event_sink: Any = None
        self.approval_controller: Any = None
        self.cancel_token: Any = None
        self.go = asyncio.Event()
        self.emitted_at = 0.0

    async def run(self, state: TaskState) -> TaskState:
        self.event_sink.emit(AgentStart(task=state.task, engine="bench"))
        self.event_sink.emit(ToolStart(call_id="big", tool="shell", tool_input={"command": "cat"},
                                       tier=1))
        go = asyncio.create_task(self.go.wait())
        cancelled = asyncio.create_task(self.cancel_token.wait())
        await asyncio.wait({go, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        go.cancel()
        cancelled.cancel()
        if self.cancel_token.cancelled:
            return state
        line = "0123456789abcdef" * 6 + "\n"
        output = line * max(1, self.size // len(line))
        self.emitted_at = now()
        self.event_sink.emit(ToolEnd(call_id="big", tool="shell", ok=True, output=output))
        await self.cancel_token.wait()
        return state


async def output_run(size: int) -> float:
    engine = OneOutputEngine(size)
    session = Session(engine, TaskState(task="big output"))
    app = TimedCockpit(session)
    shown: list[float] = []

    def on_frame(t: float) -> None:
        row = app.view.tool_calls.get("big")
        if row is not None and row.status == "ok" and not shown \
                and app.query_one("#transcript").item_count == len(app.view.items):
            shown.append(t)

    app.frame_hook = on_frame
    async with app.run_test(size=SIZE, headless=True) as pilot:
        while "big" not in app.view.tool_calls:
            await asyncio.sleep(0.005)
        await pilot.pause()
        engine.go.set()
        while not shown:
            await asyncio.sleep(0.001)
        session.cancel()
        while not session.done:
            await asyncio.sleep(0.005)
    return shown[0] - engine.emitted_at


async def startup_cockpit() -> float:
    engine = OneOutputEngine(10)
    session = Session(engine, TaskState(task="startup"))
    t0 = now()
    app = TimedCockpit(session)
    async with app.run_test(size=SIZE, headless=True):
        while app.first_frame is None:
            await asyncio.sleep(0.001)
        session.cancel()
        while not session.done:
            await asyncio.sleep(0.005)
    return app.first_frame - t0


class BareApp(App[None]):
    first_frame: float | None = None

    def compose(self) -> ComposeResult:
        yield Static("hello")

    def _display(self, screen: Any, renderable: Any) -> None:
        super()._display(screen, renderable)
        if renderable is not None and self.first_frame is None:
            self.first_frame = now()


async def startup_bare() -> float:
    t0 = now()
    app = BareApp()
    async with app.run_test(size=SIZE, headless=True):
        while app.first_frame is None:
            await asyncio.sleep(0.001)
    return app.first_frame - t0


async def session_only_run(n_events: int, rate: float) -> dict[str, Any]:
    """The same flood through a Session and the fold with no UI: the memory the run itself
    holds (its history of event models), to set the UI's share apart."""
    from engine_adapter.view import RunFold

    engine = FloodEngine(n_events, rate)
    session = Session(engine, TaskState(task="flood"))
    fold = RunFold()
    gc.collect()
    rss0 = rss_mib()

    async def consume() -> None:
        async for event in session.events():
            fold.apply(event)

    async def approve() -> None:
        while not session.done:
            for pending in session.pending_approvals:
                session.resolve_approval(pending.approval_id, allow=True)
            await asyncio.sleep(0.002)

    await asyncio.gather(session.run(), consume(), approve())
    gc.collect()
    return {"rss": rss_mib() - rss0, "events": len(session.history)}


def _in_subprocess(scenario: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one scenario in a fresh interpreter (RSS from earlier scenarios would otherwise
    hide or inflate its growth, and their garbage would slow its frames)."""
    out = subprocess.run(
        [sys.executable, __file__, "--scenario", scenario, "--events", str(args.events),
         "--rate", str(args.rate), "--idle-seconds", str(args.idle_seconds)],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _scenario(args: argparse.Namespace) -> None:
    if args.scenario == "idle":
        result = asyncio.run(flood_run(0, args.rate, args.idle_seconds))
    elif args.scenario in MIXES:
        result = asyncio.run(flood_run(args.events, args.rate, args.idle_seconds,
                                       mix=args.scenario))
    else:
        result = asyncio.run(session_only_run(args.events, args.rate))
    print(json.dumps(result))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


FLOODS = {"idle": "idle", "text": "text flood", "tools": "tool flood"}
RATIO_TARGETS = {"tools": (1.5, 2.0)}  # issue 16: p95 and max, as multiples of idle


def _key_rows(runs: list[dict[str, dict[str, Any]]], prefix: str) -> list[str]:
    """One row per scenario: medians over `runs` of p50/p95/max and of each run's ratio to
    the idle run beside it (ratios are taken within a run, then the median)."""
    lines = []
    for key, label in FLOODS.items():
        if key not in runs[0]:
            continue
        p50 = statistics.median(pct(r[key]["latencies"], 0.5) for r in runs)
        p95s = [pct(r[key]["latencies"], 0.95) for r in runs]
        maxes = [max(r[key]["latencies"], default=float("nan")) for r in runs]
        p95_ratio = [p / pct(r["idle"]["latencies"], 0.95) for p, r in zip(p95s, runs, strict=True)]
        max_ratio = [m / max(r["idle"]["latencies"], default=float("nan"))
                     for m, r in zip(maxes, runs, strict=True)]
        row = (f"{prefix + label:<22}{ms(p50):>9}{ms(statistics.median(p95s)):>9}"
               f"{ms(statistics.median(maxes)):>9}")
        if key == "idle":
            lines.append(row + f"{'':>10}{'':>10}   keys {sum(r[key]['pressed'] for r in runs)}")
            continue
        rp95, rmax = statistics.median(p95_ratio), statistics.median(max_ratio)
        target = RATIO_TARGETS.get(key)
        verdict = ""
        if target is not None:
            ok = rp95 <= target[0] and rmax <= target[1]
            verdict = f"  ≤{target[0]:g}/≤{target[1]:g} {'yes' if ok else 'NO'}"
        each = " ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(p95_ratio, max_ratio, strict=True))
        lines.append(row + f"{rp95:>10.2f}{rmax:>10.2f}{verdict}   runs {each}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000, help="flood events (100000)")
    parser.add_argument("--rate", type=float, default=5_000, help="flood events a second (5000)")
    parser.add_argument("--idle-seconds", type=float, default=5.0,
                        help="length of the idle baseline run (5)")
    parser.add_argument("--output-mb", type=float, default=10.0, help="big output size (10)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each key→frame scenario; medians are shown (3)")
    parser.add_argument("--floods", default="text,tools",
                        help="floods to run beside idle: text, tools (text,tools)")
    parser.add_argument("--busy", choices=["both", "no", "only"], default="both",
                        help="also run with a CPU burner on one core (both)")
    parser.add_argument("--no-extras", action="store_true",
                        help="skip startup, the big output and the RSS runs")
    parser.add_argument("--scenario", choices=["idle", "session", *MIXES],
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scenario:
        _scenario(args)
        return
    floods = [f for f in args.floods.split(",") if f]
    if any(f not in MIXES for f in floods):
        parser.error(f"--floods: choose from {', '.join(MIXES)}")
    modes = {"both": [False, True], "no": [False], "only": [True]}[args.busy]

    print(f"\ncockpit UI benchmark  (Textual headless {SIZE[0]}x{SIZE[1]}, "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}); load average at start "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    # Runs alternate (idle, floods, busy idle, busy floods, …): drift in the box's load falls
    # on every scenario alike, and each ratio is taken against the idle run next to it.
    runs: dict[bool, list[dict[str, dict[str, Any]]]] = {busy: [] for busy in modes}
    for _ in range(args.repeat):
        for busy in modes:
            with burner(busy):
                runs[busy].append({key: _in_subprocess(key, args) for key in ["idle", *floods]})
    print(f"key→frame (ms), medians of {args.repeat} runs; ratios to the idle run of the same "
          f"round; {args.events:,} events at {args.rate:,.0f}/s, a key every ~50 ms\n")
    print(f"{'scenario':<22}{'p50':>9}{'p95':>9}{'max':>9}{'p95/idle':>10}{'max/idle':>10}")
    print("-" * 70)
    for busy in modes:
        for line in _key_rows(runs[busy], "busy: " if busy else ""):
            print(line)
    print("busy: a CPU burner spins on one core through the run; its ratios are to the busy idle")

    if args.no_extras:
        return
    # Warm up imports and caches so the first measured run is not paying for them.
    asyncio.run(startup_bare())
    startup_base = min(asyncio.run(startup_bare()) for _ in range(3))
    startup = min(asyncio.run(startup_cockpit()) for _ in range(3))
    small = min(asyncio.run(output_run(100)) for _ in range(3))
    big = min(asyncio.run(output_run(int(args.output_mb * 1_000_000))) for _ in range(3))
    alone = _in_subprocess("session", args)
    calm = runs[False][0] if False in runs else runs[True][0]
    alone_100k = alone["rss"] * 100_000 / max(1, alone["events"])

    print(f"\n{'measure':<36}{'baseline':>12}{'cockpit':>12}{'ratio':>8}{'target':>10}  ok")
    print("-" * 84)
    for key in floods:
        flood = calm[key]
        per_100k = flood["rss"] * 100_000 / max(1, flood["events"])
        print(f"{f'RSS MiB/100k (idle | {FLOODS[key]})':<36}{calm['idle']['rss']:>12.1f}"
              f"{per_100k:>12.1f}{'':>8}{'60':>10}  {'yes' if per_100k <= 60 else 'NO'}")
        if key == "text":
            ui_share = per_100k - alone_100k
            print(f"{'  same flood, Session+fold, no UI':<36}{alone_100k:>12.1f}")
            print(f"{'  the UI own share (flood - no UI)':<36}{'':>12}{ui_share:>12.1f}{'':>8}"
                  f"{'60':>10}  {'yes' if ui_share <= 60 else 'NO'}")
    print(f"{f'{args.output_mb:g} MB output to screen (ms)':<36}{ms(small):>12}{ms(big):>12}"
          f"{big / small:>8.2f}{'100':>10}  {'yes' if big <= 0.1 else 'NO'}")
    print(f"{'startup to first frame (ms)':<36}{ms(startup_base):>12}{ms(startup):>12}"
          f"{startup / startup_base:>8.2f}{'500':>10}  {'yes' if startup <= 0.5 else 'NO'}")
    print("\nbaselines: RSS = the same app with no flood (each run in a fresh process); 10 MB"
          " output = a 100-byte output; startup = a bare Textual app with one Static.")


if __name__ == "__main__":
    main()
