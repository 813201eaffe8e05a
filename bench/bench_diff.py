"""Diff benchmark: the live cockpit's key→frame latency while 50,000-line permuted writes are
diffed, against the same cockpit idle, in the same run.

Run:  .venv/bin/python bench/bench_diff.py [--lines 50000] [--seconds 6] [--no-difflib]

The diffing engine does what the engines do for a write, through their own code: the built-in
`write_file` check (`tools.prepare_write`: read the file, diff it) and the ACP write check
(`acp.workspace.Workspace.prepare_write`), each in a worker thread as the engines run them
(`files.off_loop`), one after the other for `--seconds`, over a file of `--lines` lines replaced
by the same lines permuted (odd lines first: the input that makes `difflib` quadratic, minutes
for 50,000 lines, all on the event loop before). Meanwhile it asks for an approval every ~50 ms
and the benchmark presses `y` through the driver, timing key → the next composed frame (see
bench_ui.py). The baseline is the
same app and the same approvals with no diffing. Also shown: how long one diff takes, and (unless
`--no-difflib`) `difflib` against this diff on a 4,000-line permuted file.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ui import SIZE, TimedCockpit, drive, ms, now, pct

from engine_adapter import AgentEnd, AgentStart, Session, TaskState
from engine_adapter.engines.acp.client import Workspace as AcpWorkspace
from engine_adapter.engines.builtin.tools import prepare_write
from engine_adapter.engines.builtin.workspace import Workspace
from engine_adapter.files import off_loop, unified_diff


def permuted(lines: int) -> tuple[str, str]:
    """A file and the same lines permuted: the odd lines, then the even ones (difflib's worst
    case: quadratic, ~37 s for 12,000 lines on these machines)."""
    rows = [f"row {i}: some text\n" for i in range(lines)]
    return "".join(rows), "".join(rows[1::2] + rows[0::2])


class DiffEngine:
    """Diffs a big write again and again for `seconds` (or just waits, as the baseline) while
    asking for an approval every `every` seconds."""

    def __init__(self, workspace: Path, content: str, seconds: float, diffing: bool,
                 every: float = 0.05) -> None:
        self.workspace, self.content = workspace, content
        self.seconds, self.diffing, self.every = seconds, diffing, every
        self.event_sink: Any = None
        self.approval_controller: Any = None
        self.cancel_token: Any = None
        self.diff_seconds: list[float] = []
        self.cut = False

    async def _approvals(self, stop: asyncio.Event) -> None:
        n = 0
        while not stop.is_set() and not self.cancel_token.cancelled:
            await asyncio.sleep(self.every)
            n += 1
            await self.approval_controller.request_approval(
                f"a{n}", "shell", "bench approval", {"command": f"git diff --stat HEAD~{n}"},
                tier=3)

    async def _diff_once(self) -> None:
        builtin = Workspace(self.workspace)
        acp = AcpWorkspace(self.workspace)
        real = acp.resolve("big.txt")
        t0 = now()
        prepared = await off_loop(lambda: prepare_write(
            builtin, "write_file", {"path": "big.txt", "content": self.content}))
        t1 = now()
        diff = await off_loop(lambda: acp.prepare_write(real, self.content))
        t2 = now()
        self.diff_seconds += [t1 - t0, t2 - t1]
        self.cut = "diff cut at" in prepared.diff and "diff cut at" in diff

    async def run(self, state: TaskState) -> TaskState:
        self.event_sink.emit(AgentStart(task=state.task, engine="bench-diff"))
        stop = asyncio.Event()
        approvals = asyncio.ensure_future(self._approvals(stop))
        end = now() + self.seconds
        try:
            while now() < end and not self.cancel_token.cancelled:
                if self.diffing:
                    await self._diff_once()
                else:
                    await asyncio.sleep(0.05)
        finally:
            stop.set()
            await approvals
        self.event_sink.emit(AgentEnd(status="completed", result="done"))
        return state


async def cockpit_run(workspace: Path, content: str, seconds: float,
                      diffing: bool) -> dict[str, Any]:
    engine = DiffEngine(workspace, content, seconds, diffing)
    session = Session(engine, TaskState(task="diff bench"))
    app = TimedCockpit(session)
    async with app.run_test(size=SIZE, headless=True) as pilot:
        pressed = await drive(app, pilot, lambda: session.done)
        await pilot.pause()
    last = session.history[-1]
    if getattr(last, "status", None) != "completed":
        raise SystemExit(f"the {'diffing' if diffing else 'idle'} run failed: {last!r}")
    return {"latencies": app.latencies, "pressed": pressed, "diffs": engine.diff_seconds,
            "cut": engine.cut}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=50_000, help="lines of the file (50000)")
    parser.add_argument("--seconds", type=float, default=6.0,
                        help="length of each run, diffing and idle (6)")
    parser.add_argument("--no-difflib", action="store_true",
                        help="skip timing difflib on 4,000 permuted lines (~4 s)")
    args = parser.parse_args()
    os.environ.setdefault("COCKPIT_HOME", tempfile.mkdtemp(prefix="cockpit-bench-"))
    with tempfile.TemporaryDirectory(prefix="cockpit-diff-") as tmp:
        workspace = Path(tmp)
        old, new = permuted(args.lines)
        (workspace / "big.txt").write_text(old)
        idle = asyncio.run(cockpit_run(workspace, new, args.seconds, diffing=False))
        busy = asyncio.run(cockpit_run(workspace, new, args.seconds, diffing=True))
    old_way = new_way = None
    if not args.no_difflib:
        small_old, small_new = permuted(4_000)
        t0 = now()
        "".join(difflib.unified_diff(small_old.splitlines(True), small_new.splitlines(True)))
        old_way = now() - t0
        new_way = float("inf")
        for _ in range(3):  # the best of three: this box is shared
            t0 = now()
            unified_diff(small_old, small_new, "f", limit=10**9)
            new_way = min(new_way, now() - t0)

    print(f"\ncockpit diff benchmark  (Textual headless {SIZE[0]}x{SIZE[1]}, {os.cpu_count()} "
          f"CPUs, Python {sys.version.split()[0]})")
    print(f"diffing: {len(busy['diffs'])} diffs of a {args.lines:,}-line permuted write in "
          f"{args.seconds:g} s (built-in and ACP paths, worker threads), {busy['pressed']} "
          f"approvals by key; idle: {idle['pressed']} approvals; every diff said it was cut: "
          f"{'yes' if busy['cut'] else 'NO'}\n")
    print(f"{'measure':<30}{'idle':>10}{'diffing':>10}{'ratio':>8}")
    print("-" * 58)
    for name, q in (("key→frame p50 (ms)", 0.5), ("key→frame p95 (ms)", 0.95)):
        base, value = pct(idle["latencies"], q), pct(busy["latencies"], q)
        print(f"{name:<30}{ms(base):>10}{ms(value):>10}{value / base:>8.2f}")
    base = max(idle["latencies"], default=float("nan"))
    value = max(busy["latencies"], default=float("nan"))
    print(f"{'key→frame max (ms)':<30}{ms(base):>10}{ms(value):>10}{value / base:>8.2f}")
    diffs = sorted(busy["diffs"]) or [float("nan")]
    print(f"\none {args.lines:,}-line permuted diff (read + diff, worker thread): median "
          f"{ms(diffs[len(diffs) // 2]).strip()} ms, max {ms(diffs[-1]).strip()} ms")
    if old_way is not None and new_way is not None:
        print(f"4,000 permuted lines, whole diff: difflib (the old way, on the event loop) "
              f"{ms(old_way).strip()} ms; this diff {ms(new_way).strip()} ms "
              f"({old_way / new_way:.0f}x)")


if __name__ == "__main__":
    main()
