"""What ran in a process between a timed key and its frame (`bench_fleet.py --trace`).

`LoopTrace.install()` wraps, for as long as the process runs: every asyncio callback
(`Handle._run`: a task's step, a timer, a `call_soon`), every Textual message dispatched,
the screen's layout (`Screen._refresh_layout`), the compositor's render (`render_update`),
a push drawn (`FleetApp.show`),
the host reply decode of the fleet view (`cockpit.host.fleet.watch.decode`), and the garbage
collector (`gc.callbacks`). `begin()` at a key's sending and `end()` at its frame give that
key's `KeyRecord`: each of those with its start and duration, and the thread's CPU time and
its wait on the run queue (`/proc/thread-self/schedstat`: the kernel's own count, in ns) over
the key. What is left of the latency once the CPU time and the run-queue wait are taken off
is the loop asleep: waiting on a timer (Textual's frame timer), not on work.

A bench tool: nothing of the cockpit imports it.
"""

from __future__ import annotations

import asyncio
import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

now = time.perf_counter
SCHEDSTAT = Path("/proc/thread-self/schedstat")
SLOW = 0.0005
"""Callbacks and messages shorter than this are counted, not listed."""


def _schedstat() -> tuple[float, float]:
    """(on CPU, waiting on the run queue) of this thread so far, in seconds."""
    try:
        on, wait, _ = SCHEDSTAT.read_text().split()
    except (OSError, ValueError):
        return float("nan"), float("nan")
    return int(on) / 1e9, int(wait) / 1e9


@dataclass
class KeyRecord:
    """One key, from its sending to its frame: what ran meanwhile."""

    sent: float
    latency: float = 0.0
    cpu: float = 0.0  # this thread on a CPU (schedstat)
    runqueue: float = 0.0  # runnable, but another process had the CPU
    handles: int = 0  # asyncio callbacks run
    handles_time: float = 0.0
    since_frame: float = float("nan")  # from the frame before the key to the key
    spans: list[tuple[str, float, float, float]] = field(default_factory=list)
    """(what, start from `sent`, wall duration, CPU time): slow callbacks and messages, GC
    passes, layouts, renders, decodes."""

    def total(self, kind: str) -> float:
        """The time of the spans whose name starts with `kind`."""
        return sum(d for what, _, d, _ in self.spans if what.startswith(kind))

    def count(self, kind: str) -> int:
        """How many spans' names start with `kind`."""
        return sum(what.startswith(kind) for what, _, _, _ in self.spans)

    @property
    def asleep(self) -> float:
        """The loop asleep: neither on a CPU nor waiting for one."""
        return max(0.0, self.latency - self.cpu - self.runqueue)

    def parts(self) -> dict[str, float]:
        """The latency cut in parts that do not overlap: waiting for a CPU, asleep, and the
        CPU time, that of GC, renders, layouts and decodes apart from the rest."""
        parts = {"run queue": self.runqueue, "asleep": self.asleep}
        rest = self.cpu
        for kind in ("gc", "show", "render", "layout", "decode"):
            parts[kind] = self.cpu_in(kind)
            rest -= parts[kind]
        parts["other cpu"] = max(0.0, rest)
        return parts

    def cpu_in(self, kind: str) -> float:
        """The CPU time of the spans whose name starts with `kind`."""
        return sum(c for what, _, _, c in self.spans if what.startswith(kind))

    @property
    def own(self) -> float:
        """The latency less the run-queue wait: what it would be had no other process run."""
        return self.latency - self.runqueue

    def cause(self, typical: dict[str, float], *, runqueue: bool = True) -> str:
        """The part of this key's latency furthest beyond its `typical` value (`runqueue`
        False: of the parts of its own latency)."""
        parts = self.parts()
        if not runqueue:
            del parts["run queue"]
        return max(parts, key=lambda name: parts[name] - typical.get(name, 0.0))


CAUSES = {"run queue": "run queue (another process had the CPU)",
          "asleep": "loop asleep (a timer: Textual's frame grid)", "gc": "GC",
          "show": "a push drawn (FleetApp.show)",
          "render": "render (CPU)", "layout": "layout (CPU)", "decode": "decode of pushes",
          "other cpu": "other callbacks (CPU)"}


def _label(callback: Any) -> str:
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        coro = owner.get_coro()
        return f"task {owner.get_name()} {getattr(coro, '__qualname__', coro)}"
    return f"callback {getattr(callback, '__qualname__', callback)}"


class LoopTrace:
    """Records what runs while a key is being timed (see the module)."""

    def __init__(self) -> None:
        self.current: KeyRecord | None = None
        self.records: list[KeyRecord] = []
        self._gc_start = self._gc_cpu = 0.0
        self._sched = (0.0, 0.0)
        self.last_frame = float("nan")

    def begin(self, sent: float) -> None:
        """A key was sent at `sent`."""
        self.current = KeyRecord(sent, since_frame=sent - self.last_frame)
        self._sched = _schedstat()

    def frame(self, t: float, answered: bool) -> None:
        """A frame was drawn at `t` (`answered`: the timed key's)."""
        self.last_frame = t
        if answered:
            self.end(t)
        else:
            self._span("frame (not the key's)", t, 0.0)

    def end(self, frame: float) -> KeyRecord | None:
        """Its frame was drawn at `frame`."""
        record, self.current = self.current, None
        if record is None:
            return None
        on, wait = _schedstat()
        record.latency = frame - record.sent
        record.cpu, record.runqueue = on - self._sched[0], wait - self._sched[1]
        self.records.append(record)
        return record

    def _span(self, what: str, start: float, duration: float, cpu: float = 0.0) -> None:
        record = self.current
        if record is not None:
            record.spans.append((what, start - record.sent, duration, cpu))

    def _wrap(self, owner: Any, name: str, what: Any, *, always: bool = False) -> None:
        """Time `owner.name` (a sync function) as spans named `what(args)`."""
        original = getattr(owner, name)
        trace = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if trace.current is None:
                return original(*args, **kwargs)
            start, cpu = now(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                duration = now() - start
                if always or duration >= SLOW:
                    trace._span(what(*args), start, duration, time.thread_time() - cpu)

        setattr(owner, name, timed)

    def install(self) -> None:
        """Wrap what is traced (once a process)."""
        from textual._compositor import Compositor
        from textual.message_pump import MessagePump
        from textual.screen import Screen

        import cockpit.host.fleet.watch as watch
        from cockpit.host.fleet.fleet_app import FleetApp
        from cockpit.widgets.cell_table import CellTable

        handle_run = asyncio.events.Handle._run
        trace = self

        def run(handle: asyncio.events.Handle) -> None:
            record = trace.current
            if record is None:
                handle_run(handle)
                return
            start, cpu = now(), time.thread_time()
            handle_run(handle)
            duration = now() - start
            record.handles += 1
            record.handles_time += duration
            if duration >= SLOW:
                trace._span(_label(handle._callback), start, duration,  # type: ignore[attr-defined]
                            time.thread_time() - cpu)

        asyncio.events.Handle._run = run  # type: ignore[method-assign,assignment]

        dispatch = MessagePump._dispatch_message

        async def dispatched(pump: Any, message: Any) -> None:
            if trace.current is None:
                await dispatch(pump, message)
                return
            start = now()
            await dispatch(pump, message)
            duration = now() - start  # (wall time: it may have awaited)
            if duration >= SLOW:
                trace._span(f"message {type(message).__name__} to {type(pump).__name__}",
                            start, duration)

        MessagePump._dispatch_message = dispatched  # type: ignore[method-assign,assignment]
        self._wrap(Screen, "_refresh_layout", lambda *a, **k: "layout", always=True)
        self._wrap(Compositor, "render_update", lambda *a, **k: "render", always=True)
        self._wrap(FleetApp, "show", lambda *a: "show", always=True)
        self._wrap(CellTable, "update_cell", lambda table, row, column, value, **k:
                   f"cell {table.id} {str(row.value if hasattr(row, 'value') else row)[-8:]}"
                   f" {value}", always=True)
        self._wrap(watch, "decode", lambda line: f"decode {len(line)} B", always=True)
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start, self._gc_cpu = now(), time.thread_time()
        elif self.current is not None:
            self._span(f"gc gen{info['generation']} ({info['collected']} freed)",
                       self._gc_start, now() - self._gc_start,
                       time.thread_time() - self._gc_cpu)


def typical(records: list[KeyRecord]) -> dict[str, float]:
    """Each part's median over `records` (the idle keys)."""
    if not records:
        return {}
    names = records[0].parts().keys()
    return {name: sorted(r.parts()[name] for r in records)[len(records) // 2]
            for name in names}


def report(records: list[KeyRecord], base: list[KeyRecord], top: int = 8) -> list[str]:
    """The `top` slowest keys, each with its parts and what ran, and the causes tallied over
    every key slower than 1.5× the median of `base` (the idle keys), each key's cause the part
    furthest beyond its median in `base`."""
    usual = typical(base)
    median = sorted(r.latency for r in base)[len(base) // 2] if base else 0.0
    lines = ["  typical (idle medians, ms): " + "  ".join(
        f"{name} {value * 1000:.1f}" for name, value in usual.items())]
    for record in sorted(records, key=lambda r: r.latency, reverse=True)[:top]:
        parts = "  ".join(f"{name} {value * 1000:.1f}" for name, value in record.parts().items())
        lines.append(f"  {record.latency * 1000:6.1f} ms: {parts}  · callbacks "
                     f"{record.handles}, last frame {record.since_frame * 1000:.1f} ms before"
                     f"  -> {CAUSES[record.cause(usual)]}")
        for what, start, duration, cpu in record.spans:
            if duration >= 0.001 or what.startswith(("gc", "frame", "cell")):
                lines.append(f"      +{start * 1000:6.1f}  {duration * 1000:5.1f} ms "
                             f"(cpu {cpu * 1000:4.1f})  {what[:90]}")
    lines.append("  " + _figures("latency", [r.latency for r in records]) + " · "
                 + _figures("less the run-queue wait", [r.own for r in records]))
    lines.append("  means (ms): " + "  ".join(
        f"{name} {sum(r.parts()[name] for r in records) / len(records) * 1000:.2f}"
        for name in usual))
    from textual import constants

    near = [r for r in records if r.since_frame < 2 / constants.MAX_FPS]
    lines.append(f"  keys sent within two frame periods of another frame (a push's): {len(near)}"
                 f" · {_figures('their own latency', [r.own for r in near])} · "
                 + _figures("the others'", [r.own for r in records if r not in near]))
    own_median = sorted(r.own for r in base)[len(base) // 2] if base else 0.0
    for label, slow, runqueue in (
            (f"latency over 1.5× the idle median ({median * 1000:.1f} ms)",
             [r for r in records if r.latency > 1.5 * median], True),
            (f"less the run-queue wait, over 1.5× the idle median ({own_median * 1000:.1f} ms)",
             [r for r in records if r.own > 1.5 * own_median], False)):
        tally: dict[str, int] = {}
        for record in slow:
            cause = CAUSES[record.cause(usual, runqueue=runqueue)]
            tally[cause] = tally.get(cause, 0) + 1
        lines.append(f"  keys with {label}: {len(slow)}, by cause: " + (", ".join(
            f"{cause} {n}" for cause, n in sorted(tally.items(), key=lambda kv: -kv[1]))
            or "-"))
    return lines


def _figures(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    if not ordered:
        return f"{name}: -"
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"{name} p50/p95/max {ordered[len(ordered) // 2] * 1000:.1f}/{p95 * 1000:.1f}/"
            f"{ordered[-1] * 1000:.1f} ms")
