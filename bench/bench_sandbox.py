"""Sandbox benchmark: what running a command in the sandbox costs, per command, against the same
commands run the same way without it, in the same run.

Run:  .venv/bin/python bench/bench_sandbox.py [--count 200] [--burn 0]

Each command goes through the engines' own path (`process.run_process`: the scope holder, the
output pipe, the end-of-call sweep), once in the sandbox (`workspace-write`, no network: the
holder → bwrap → the command) and once without, alternating, so both see the same load. The
commands: `true`, `ls`, and `git status` in a small repository (20 files, one commit), `--count`
of each kind in all. The table gives the median and p90 wall time of each, and the overhead:
the median of the paired differences. On a shared, busy machine wall time mostly measures the
queue for a CPU, so the CPU time each command costs (this process and every process it started,
from `getrusage`) is shown too: that cost does not grow with the load. `--burn N` keeps N busy
processes running meanwhile; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine_adapter.engines.builtin.process import run_process
from engine_adapter.sandbox import Sandbox

COMMANDS = {"true": ["true"], "ls": ["ls", "-la"], "git status": ["git", "status", "--short"]}


def _burn() -> None:  # pragma: no cover - a busy loop in its own process
    while True:
        pass


def small_repo(root: Path) -> None:
    """A git repository with 20 files and one commit."""
    for i in range(20):
        (root / f"file{i}.txt").write_text(f"line {i}\n" * 10)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for argv in (["git", "init", "-q", "."], ["git", "add", "."],
                 ["git", "commit", "-qm", "start"]):
        subprocess.run(argv, cwd=root, env=env, check=True)
    (root / "file0.txt").write_text("changed\n")


def cpu_ms() -> float:
    """CPU seconds used so far by this process and its reaped children, in ms."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (mine.ru_utime + mine.ru_stime + kids.ru_utime + kids.ru_stime) * 1000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(root: Path, count: int) -> dict[str, dict[str, list[float]]]:
    sandbox = await Sandbox(workspace=root).acheck()
    if not sandbox.active:
        raise SystemExit(f"no sandbox here: {sandbox.problem}")
    times: dict[str, dict[str, list[float]]] = {
        name: {"plain": [], "sandbox": [], "plain cpu": [], "sandbox cpu": []}
        for name in COMMANDS}
    per_kind = max(1, count // len(COMMANDS))
    for name, argv in COMMANDS.items():
        for _ in range(3):  # warm up: page cache, the holder's interpreter
            await run_process(argv, cwd=root, timeout=30, output_cap=65536, sandbox=sandbox)
        for i in range(per_kind):
            order = ("plain", "sandbox") if i % 2 else ("sandbox", "plain")
            for how in order:
                started, cpu = time.perf_counter(), cpu_ms()
                done = await run_process(argv, cwd=root, timeout=30, output_cap=65536,
                                         sandbox=sandbox if how == "sandbox" else None)
                elapsed = (time.perf_counter() - started) * 1000
                times[name][f"{how} cpu"].append(cpu_ms() - cpu)
                if done.exit_code != 0:
                    raise SystemExit(f"{name} failed ({how}): {done.output}")
                times[name][how].append(elapsed)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="commands of each of the two "
                        "runs, spread over the three kinds")
    parser.add_argument("--burn", type=int, default=0, help="busy processes meanwhile")
    args = parser.parse_args()
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.burn)]
    for burner in burners:
        burner.start()
    try:
        before = os.getloadavg()
        with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
            root = Path(tmp)
            small_repo(root)
            times = asyncio.run(measure(root, args.count))
        after = os.getloadavg()
    finally:
        for burner in burners:
            burner.kill()
    print(f"{os.cpu_count()} CPUs; load average before {before[0]:.1f}, after {after[0]:.1f}; "
          f"{args.burn} CPU burner(s)")
    print(f"{'command':<12} {'n':>4} {'plain med':>10} {'p90':>7} {'sandbox med':>12} "
          f"{'p90':>7} {'overhead med':>13} {'CPU plain':>10} {'CPU sandbox':>12} "
          f"{'CPU overhead':>13}")
    overall: list[float] = []
    cpu_overall: list[float] = []
    for name, runs in times.items():
        plain, boxed = runs["plain"], runs["sandbox"]
        paired = [b - p for b, p in zip(boxed, plain, strict=True)]
        cpu_paired = [b - p for b, p in zip(runs["sandbox cpu"], runs["plain cpu"], strict=True)]
        overall += paired
        cpu_overall += cpu_paired
        print(f"{name:<12} {len(plain):>4} {statistics.median(plain):>8.1f}ms "
              f"{pct(plain, 0.9):>5.1f}ms {statistics.median(boxed):>10.1f}ms "
              f"{pct(boxed, 0.9):>5.1f}ms {statistics.median(paired):>11.1f}ms "
              f"{statistics.median(runs['plain cpu']):>8.1f}ms "
              f"{statistics.median(runs['sandbox cpu']):>10.1f}ms "
              f"{statistics.median(cpu_paired):>11.1f}ms")
    print(f"{'all':<12} {len(overall):>4} {'':>10} {'':>7} {'':>12} {'':>7} "
          f"{statistics.median(overall):>11.1f}ms {'':>10} {'':>12} "
          f"{statistics.median(cpu_overall):>11.1f}ms   (target: <= 15 ms)")


if __name__ == "__main__":
    main()
