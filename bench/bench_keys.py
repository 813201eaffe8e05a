"""Key→frame benchmark of every key a human presses most: a bare Textual app beside the cockpit.

Run:  .venv/bin/python bench/bench_keys.py [--presses 12] [--repeat 1] [--busy both|no|only]
          [--sizes 160x48,80x24] [--loads idle,stream,flood]
          [--keys y,n,a,up,down,pgdn,end,enter] [--trace]

The whole table (every key, size and load, with and without a busy core, three rounds), on a
quiet machine and ahead of other work:  nice -n -10 .venv/bin/python bench/bench_keys.py
--repeat 3.  The `load` column is the machine's 1-minute load average as each scenario ended.

Each key is sent through the driver (as a terminal would) and timed from then to the first
composed frame after its binding's action ran (`App.run_action`, `App._display`: the frame timing
of bench/bench_ui.py, shared). Scenarios, each in a fresh interpreter:

- bare: a bare Textual app (header, a 40-row text body, a one-line bar each key updates,
  footer), idle: the floor a terminal app can reach here.
- cockpit: the live `CockpitApp` (armed at once, `arm_seconds=0`: the benchmark presses once the
  approval is drawn and armed) with one approval waiting and a transcript of a few hundred
  events, under three loads: idle (nothing else happens), stream (a reply streaming, one word a
  delta, `--stream-rate` a second) and flood (bench_ui's tool-heavy flood, `--flood-rate` a
  second). An approval is asked for again ~50 ms after each answer.

Keys: `y` (the bar closes), `n` (the reason box opens; enter then denies, untimed), `a` (the
scope step; escape then goes back, untimed), `up`, `down`, `pgdn`, `end` (the selection and the
view move; a key that would change nothing is set up first, untimed: `home` before `pgdn` and
`end`), `enter` (the selected item expands or collapses). `--busy both` runs every scenario also
with a CPU burner on one core (bench/cpu_burner.py); ratios are taken within the same round.

`--trace` also records, for each timed key, the time each step of the path was reached (the
key's arrival, its action, `resolve_approval`, the pump's flush, the display's redraw, the
bindings' redraw, the screen's layout, the compositor's render, the frame) and prints the
breakdown (p50/p95 ms) per key.

Targets (issue 29): idle p95 ≤ 2× the bare app's for every key; stream and flood p95 ≤ 1.5× the
cockpit's own idle and max ≤ 2×.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ.setdefault("COCKPIT_HOME", tempfile.mkdtemp(prefix="cockpit-bench-"))

import cockpit  # noqa: F401 (first: it sets Textual's frame cap, `cockpit.FRAME_CAP`)

# isort: split
from bench_ui import (
    FloodEngine,
    TimedCockpit,
    action_ran,
    frame_drawn,
    pct,
    tool_mix,
)
from cpu_burner import burner
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static

from engine_adapter import AgentStart, Session, TaskState

now = time.perf_counter
KEYS = ["y", "n", "a", "up", "down", "pgdn", "end", "enter"]
TEXTUAL_KEY = {"pgdn": "pagedown"}
CHARACTER = {"y": "y", "n": "n", "a": "a", "enter": "\r"}
APPROVAL_KEYS = {"y", "n", "a"}
# Pressed first (untimed), so that the key changes something on screen.
SETUP = {"pgdn": "home", "end": "home", "up": "end", "down": "up", "enter": "up"}
LOADS = ["idle", "stream", "flood"]
PRELUDE = 400  # tool-heavy events in the transcript before the keys start
FRAME_WAIT = 2.0  # seconds a key's frame may take before the key counts as unanswered


def key_event(key: str) -> events.Key:
    name = TEXTUAL_KEY.get(key, key)
    return events.Key(name, CHARACTER.get(key))


# The bare app ------------------------------------------------------------------------------------
class BareKeys(App[None]):
    """The floor: header, a 40-row body, a one-line bar that every key updates, footer."""

    BINDINGS: ClassVar[list[Any]] = [(TEXTUAL_KEY.get(k, k), f"press('{k}')", k)
                                     for k in [*KEYS, "home"]]
    CSS = "#body { height: 1fr; overflow: hidden; } #bar { height: 1; }"

    def __init__(self) -> None:
        super().__init__()
        self.first_frame: float | None = None
        self.key_sent: float | None = None
        self.key_handled = False
        self.latencies: list[float] = []
        self.frame_hook: Any = None
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("\n".join(f"line {i}: the quick brown fox jumps over the lazy dog"
                               for i in range(40)), id="body")
        yield Static("", id="bar")
        yield Footer()

    def action_press(self, key: str) -> None:
        self.count += 1
        self.query_one("#bar", Static).update(f"{key} pressed ({self.count})")

    def _display(self, screen: Any, renderable: Any) -> None:
        super()._display(screen, renderable)
        if renderable is not None:
            frame_drawn(self, now())

    async def run_action(self, action: Any, default_namespace: Any = None,
                         namespaces: Any = None) -> bool:
        handled = await super().run_action(action, default_namespace, namespaces)
        action_ran(self, handled)
        return handled


# The cockpit's engine ----------------------------------------------------------------------------
class KeyEngine(FloodEngine):
    """A transcript of `PRELUDE` events, then an approval waiting (asked again ~50 ms after each
    answer) while the load runs: nothing (idle), a streaming reply, or the tool-heavy flood."""

    def __init__(self, load: str, rate: float) -> None:
        mix = {"idle": "tools", "stream": "stream", "flood": "tools"}[load]
        # A command `a` can grant (`git log`): `a` shows the scope step, escape goes back.
        super().__init__(10**9 if load != "idle" else 0, rate, every=0.05, mix=mix,
                         command="git log -n {n}")
        self.load = load

    async def run(self, state: TaskState) -> TaskState:
        self.event_sink.emit(AgentStart(task=state.task, engine="keys"))
        turn = 1
        for i in range(PRELUDE):
            event, turn = tool_mix(i, turn)
            self.event_sink.emit(event)
        stop = asyncio.Event()
        approvals = asyncio.create_task(self._approvals(stop))
        if self.load == "idle":
            await self.cancel_token.wait()
        else:
            await self._flood()
        stop.set()
        approvals.cancel()
        return state


# The trace ---------------------------------------------------------------------------------------
class Trace:
    """Timestamps of the steps of a timed key's path, relative to when the key was sent."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.current: list[tuple[str, float]] = []
        self.keys: list[tuple[str, list[tuple[str, float]]]] = []

    def mark(self, step: str) -> None:
        sent = self.app.key_sent
        if sent is not None:
            self.current.append((step, now() - sent))

    def done(self, key: str) -> None:
        self.keys.append((key, self.current))
        self.current = []


def install_trace(app: Any) -> Trace:
    """Wrap the steps of the path from a key to its frame with timestamps (this interpreter
    only: the benchmark's scenarios run in their own)."""
    from textual.screen import Screen

    from cockpit.live.answer_first import AnswerFirst
    from cockpit.live.pump import FramePump
    from cockpit.widgets import KeyHints, RunDisplay
    from cockpit.widgets.approval import ApprovalBar
    from cockpit.widgets.transcript import Transcript

    trace = Trace(app)

    def wrap(owner: Any, name: str, step: str) -> None:
        original = getattr(owner, name)
        if asyncio.iscoroutinefunction(original):
            async def async_wrapped(*args: Any, **kwargs: Any) -> Any:
                trace.mark(step + ">")
                try:
                    return await original(*args, **kwargs)
                finally:
                    trace.mark(step + "<")
            setattr(owner, name, async_wrapped)
        else:
            def wrapped(*args: Any, **kwargs: Any) -> Any:
                trace.mark(step + ">")
                try:
                    return original(*args, **kwargs)
                finally:
                    trace.mark(step + "<")
            setattr(owner, name, wrapped)

    wrap(type(app), "on_event", "app.on_event")
    wrap(type(app), "run_action", "action")
    wrap(Session, "resolve_approval", "resolve_approval")
    wrap(Session, "emit", "session.emit")
    wrap(FramePump, "flush", "pump.flush")
    wrap(FramePump, "_due", "pump._due")
    wrap(AnswerFirst, "deliver", "answer_first.deliver")
    wrap(AnswerFirst, "_catch_up", "answer_first._catch_up")
    wrap(RunDisplay, "apply_changes", "display.apply_changes")
    wrap(ApprovalBar, "show", "approval_bar.show")
    wrap(KeyHints, "_bindings_changed", "key_hints")
    wrap(Transcript, "update_items", "transcript.update_items")
    wrap(Transcript, "render_line", "transcript.render_line")
    wrap(Screen, "_on_timer_update", "screen.tick")
    wrap(Screen, "_refresh_layout", "screen.layout")
    wrap(Screen, "_compositor_refresh", "screen.render")
    return trace


def breakdown(trace: list[tuple[str, list[tuple[str, float]]]]) -> dict[str, dict[str, Any]]:
    """Per key and step: when it was first reached (ms after the key was sent) and the time
    spent in it (ms, summed over its calls before the frame), as p50/p95 over the keys."""
    reached: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    spent: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    calls: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for key, marks in trace:
        first: dict[str, float] = {}
        total: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        open_at: dict[str, list[float]] = defaultdict(list)
        for step, t in marks:
            name, edge = step[:-1], step[-1]
            if edge == ">":
                first.setdefault(name, t)
                open_at[name].append(t)
                count[name] += 1
            elif open_at[name]:
                start = open_at[name].pop()
                if not open_at[name]:  # (the outermost call of a nested one)
                    total[name] += t - start
        for name, t in first.items():
            reached[key][name].append(t * 1000)
            spent[key][name].append(total[name] * 1000)
            calls[key][name].append(count[name])
    out: dict[str, dict[str, Any]] = {}
    for key in reached:
        out[key] = {name: {"reached": (pct(v, 0.5), pct(v, 0.95)),
                           "spent": (pct(spent[key][name], 0.5), pct(spent[key][name], 0.95)),
                           "calls": statistics.median(calls[key][name]), "keys": len(v)}
                    for name, v in sorted(reached[key].items(), key=lambda kv: pct(kv[1], 0.5))}
    return out


# One scenario ------------------------------------------------------------------------------------
async def _press(app: Any, key: str, frame: asyncio.Event) -> bool:
    """Send `key` (timed) and wait for the first frame after its action ran; False if none
    came within `FRAME_WAIT` (the key changed nothing on screen)."""
    frame.clear()
    app.key_handled = False
    app.key_sent = now()
    app._driver.send_message(key_event(key))
    try:
        await asyncio.wait_for(frame.wait(), FRAME_WAIT)
    except TimeoutError:
        app.key_sent = None
        return False
    return True


async def _until(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    """Wait (untimed, before a key) until `check()`; polled: it reads app state only."""
    deadline = now() + seconds
    while not check():
        if now() > deadline:
            return False
        await asyncio.sleep(0.003)
    return True


async def _untimed(app: Any, key: str, frame: asyncio.Event, trace: Trace | None) -> None:
    """Press `key` as a setup step: its latency and its trace are dropped."""
    kept, traced = len(app.latencies), len(trace.keys) if trace is not None else 0
    await _press(app, key, frame)
    del app.latencies[kept:]
    if trace is not None:
        del trace.keys[traced:]
        trace.current = []


async def scenario(app_kind: str, size: tuple[int, int], load: str, keys: list[str],
                   presses: int, rate: float, trace_on: bool,
                   settle: float = 0.1) -> dict[str, Any]:
    frame = asyncio.Event()
    session: Session | None = None
    if app_kind == "bare":
        app: Any = BareKeys()
    else:
        session = Session(KeyEngine(load, rate), TaskState(task="keys"))
        app = TimedCockpit(session)
    trace = install_trace(app) if trace_on and app_kind == "cockpit" else None

    def on_frame(t: float) -> None:
        if app.key_sent is None:
            if frame.is_set() or not app.latencies:
                return  # a frame with no key being timed (the first ones, or after the answer)
            frame.set()
            if trace is not None:  # (the frame's own step: when it was handed to the driver)
                trace.current.append(("frame>", app.latencies[-1]))
                trace.done(current[0])
        elif trace is not None:
            trace.mark("frame(before the action ran)")

    app.frame_hook = on_frame
    current = [""]
    latencies: dict[str, list[float]] = {k: [] for k in keys}
    missed: dict[str, int] = {k: 0 for k in keys}
    async with app.run_test(size=size, headless=True) as pilot:
        await pilot.pause()
        if session is not None:
            bar = app.display_widget.approval_bar
            await _until(lambda: app.view.events > PRELUDE)
        for _ in range(presses):
            for key in keys:
                if session is not None:
                    if key in SETUP:
                        current[0] = "setup"
                        await _untimed(app, SETUP[key], frame, trace)
                    # One approval waiting, drawn and armed, for every key (what a human sees).
                    if not await _until(lambda: bool(app.view.pending) and bar.arming.armed()):
                        missed[key] += 1
                        continue
                    await asyncio.sleep(settle)  # (a human reads it for ARM_SECONDS first)
                else:
                    await asyncio.sleep(0.05)
                current[0] = key
                before = len(app.latencies)
                if await _press(app, key, frame):
                    latencies[key].append(app.latencies[before])
                else:
                    missed[key] += 1
                    if trace is not None:
                        trace.current = []
                if session is not None and key == "n":  # enter denies (the reason box is open)
                    current[0] = "setup"
                    await _until(lambda: app.composer.reason_for is not None, 1.0)
                    await _untimed(app, "enter", frame, trace)
                    await _until(lambda: app.composer.reason_for is None, 1.0)
                elif session is not None and key == "enter" and len(app.screen_stack) > 1:
                    current[0] = "setup"  # it opened the pager: close it
                    await _untimed(app, "escape", frame, trace)
                    await _until(lambda: len(app.screen_stack) == 1, 1.0)
                elif session is not None and key == "a":  # escape: back, nothing granted
                    current[0] = "setup"
                    await _untimed(app, "escape", frame, trace)
                    await _until(lambda: app._choosing is None, 1.0)
        if session is not None:
            session.cancel("benchmark over")
    result: dict[str, Any] = {"latencies": latencies, "missed": missed}
    if trace is not None:
        result["trace"] = breakdown([(k, m) for k, m in trace.keys if k in latencies])
    return result


# The table ---------------------------------------------------------------------------------------
def _one(args: argparse.Namespace, app_kind: str, size: str, load: str,
         busy: bool) -> dict[str, Any]:
    with burner(busy):
        out = subprocess.run(
            [sys.executable, __file__, "--one", app_kind, size, load, "--keys", args.keys,
             "--presses", str(args.presses), "--stream-rate", str(args.stream_rate),
             "--flood-rate", str(args.flood_rate), *(["--trace"] if args.trace else [])],
            check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["load"] = os.getloadavg()[0]  # (the machine's 1-minute load as the scenario ended)
    return result


def ms(values: list[float], q: float | None) -> float:
    if not values:
        return float("nan")
    return (max(values) if q is None else pct(values, q)) * 1000


def _print_trace(title: str, trace: dict[str, dict[str, Any]]) -> None:
    print(f"\ntrace: {title}  (ms after the key was sent: reached p50/p95; spent p50/p95; calls)")
    for key, steps in trace.items():
        print(f"  key {key}")
        for name, s in steps.items():
            print(f"    {name:<34} reached {s['reached'][0]:6.1f} /{s['reached'][1]:6.1f}   "
                  f"spent {s['spent'][0]:6.1f} /{s['spent'][1]:6.1f}   calls {s['calls']:g}")


def _row(rounds: list[dict[str, dict[str, Any]]], prefix: str, load: str,
         key: str) -> tuple[str, bool]:
    """One line of the table (after its name), and whether it misses its target."""
    def fig(r: dict[str, Any], scen: str, q: float | None) -> float:
        return ms(r[prefix + scen]["latencies"][key], q)

    p50 = statistics.median(fig(r, load, 0.5) for r in rounds)
    p95 = statistics.median(fig(r, load, 0.95) for r in rounds)
    top = statistics.median(fig(r, load, None) for r in rounds)
    cells, verdict, failed = ["", "", ""], "", False
    if load == "idle":
        ratio = statistics.median(fig(r, "idle", 0.95) / fig(r, "bare", 0.95) for r in rounds)
        cells[0] = f"{ratio:.2f}"
        failed = not ratio <= 2.0
        verdict = "≤2 " + ("NO" if failed else "yes")
    elif load != "bare":
        r95 = statistics.median(fig(r, load, 0.95) / fig(r, "idle", 0.95) for r in rounds)
        rmax = statistics.median(fig(r, load, None) / fig(r, "idle", None) for r in rounds)
        cells[1], cells[2] = f"{r95:.2f}", f"{rmax:.2f}"
        failed = not (r95 <= 1.5 and rmax <= 2.0)
        verdict = "≤1.5/≤2 " + ("NO" if failed else "yes")
    missed = sum(r[prefix + load]["missed"][key] for r in rounds)
    if missed:
        verdict += f"  ({missed} without a frame)"
    machine = statistics.median(r[prefix + load].get("load", float("nan")) for r in rounds)
    return (f"{key:<7}{p50:>7.1f}{p95:>7.1f}{top:>7.1f}  {cells[0]:>9}{cells[1]:>9}"
            f"{cells[2]:>9}{machine:>6.1f}  {verdict}"), failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=12,
                        help="presses of each key a scenario (12)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of every scenario; medians of per-round figures (1)")
    parser.add_argument("--busy", choices=["both", "no", "only"], default="both",
                        help="also with a CPU burner on one core (both)")
    parser.add_argument("--sizes", default="160x48,80x24", help="terminal sizes (160x48,80x24)")
    parser.add_argument("--loads", default=",".join(LOADS),
                        help="cockpit loads (idle,stream,flood)")
    parser.add_argument("--keys", default=",".join(KEYS), help=f"keys ({','.join(KEYS)})")
    parser.add_argument("--stream-rate", type=float, default=500,
                        help="deltas a second of the streaming reply (500)")
    parser.add_argument("--flood-rate", type=float, default=5000,
                        help="events a second of the tool-heavy flood (5000)")
    parser.add_argument("--trace", action="store_true",
                        help="also print the breakdown of each key's path (cockpit scenarios)")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--one", nargs=3, metavar=("APP", "SIZE", "LOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    keys = [k for k in args.keys.split(",") if k]
    bad = [k for k in keys if k not in KEYS]
    if bad:
        parser.error(f"--keys: unknown {', '.join(bad)}; choose from {', '.join(KEYS)}")
    sizes = [s for s in args.sizes.split(",") if s]
    try:
        for size in sizes:
            int(size.split("x")[0]), int(size.split("x")[1])
    except (ValueError, IndexError):
        parser.error("--sizes: write each size as COLUMNSxROWS, e.g. 160x48")
    loads = [x for x in args.loads.split(",") if x]
    if any(x not in LOADS for x in loads) or "idle" not in loads:
        parser.error(f"--loads: choose from {', '.join(LOADS)} (idle is always needed)")
    if args.one:
        app_kind, size, load = args.one
        w, h = (int(n) for n in size.split("x"))
        rate = {"idle": 0.0, "stream": args.stream_rate, "flood": args.flood_rate}[load]
        print(json.dumps(asyncio.run(scenario(app_kind, (w, h), load, keys, args.presses, rate,
                                              args.trace))))
        return
    modes = {"both": [False, True], "no": [False], "only": [True]}[args.busy]
    print(f"key→frame benchmark (Textual headless, {os.cpu_count()} CPUs, Python "
          f"{sys.version.split()[0]}, frame cap {os.environ.get('TEXTUAL_FPS')} fps); load "
          f"average at start {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    rounds: list[dict[str, dict[str, Any]]] = []
    for _ in range(args.repeat):
        found: dict[str, dict[str, Any]] = {}
        for busy in modes:
            for size in sizes:
                found[f"{busy}|{size}|bare"] = _one(args, "bare", size, "idle", busy)
                for load in loads:
                    found[f"{busy}|{size}|{load}"] = _one(args, "cockpit", size, load, busy)
        rounds.append(found)
    if args.json:
        args.json.write_text(json.dumps(rounds))
    print(f"\nkey→frame ms (p50 / p95 / max), {args.presses} presses a key a scenario, medians of "
          f"{args.repeat} round(s); ratios within a round (then the median)")
    header = (f"{'scenario':<26}{'key':<7}{'p50':>7}{'p95':>7}{'max':>7}  {'p95/bare':>9}"
              f"{'p95/idle':>9}{'max/idle':>9}{'load':>6}  verdict")
    print(header)
    print("-" * len(header))
    fails = 0
    for busy in modes:
        for size in sizes:
            for load in ["bare", *loads]:
                for key in keys:
                    line, failed = _row(rounds, f"{busy}|{size}|", load, key)
                    fails += failed
                    print(f"{('busy ' if busy else '') + size + ' ' + load:<26}{line}")
    print(f"\ntargets missed: {fails}; load average at the end "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.trace:
        for busy in modes:
            for size in sizes:
                for load in loads:
                    trace = rounds[0][f"{busy}|{size}|{load}"].get("trace")
                    if trace:
                        _print_trace(f"{'busy ' if busy else ''}{size} {load}", trace)


if __name__ == "__main__":
    main()
