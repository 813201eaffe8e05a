"""Sandbox benchmark: what running a command in the sandbox costs, per command, with today's
rules against the rules before issue 24 and against no sandbox at all, in the same run.

Run:  .venv/bin/python bench/bench_sandbox.py [--count 300] [--busy]

Each command goes through the engines' own path (`process.run_process`: the scope holder, the
output pipe, the end-of-call sweep) three ways, in turn, so all three see the same load:
`none` (no sandbox), `old` (the former rules: bwrap with `.git/hooks` and `.git/config` read-only,
nothing masked, no seccomp filter, the whole environment) and `new` (today's: the seccomp filter,
masked credential places and socket folders, the whole git dir read-only, no socket variables).
The commands: `true`, `ls`, and `git status` in a small repository (20 files, one commit),
`--count` in all. The table gives the median and p90 wall time of each way, the overhead over
`none` (the median of the paired differences, in ms, and the ratio of the medians) and the CPU
time each costs (this process and every process it started, from `getrusage`: on a shared box,
wall time mostly measures the queue for a CPU). `--busy` keeps one core burned meanwhile
(`bench/cpu_burner.py`); the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu_burner import burner

from engine_adapter.engines.builtin.process import run_process
from engine_adapter.sandbox import Sandbox, Wrapped
from engine_adapter.sandbox.bwrap import bwrap_argv

COMMANDS = {"true": ["true"], "ls": ["ls", "-la"], "git status": ["git", "status", "--short"]}
WAYS = ("none", "old", "new")


class OldRules(Sandbox):
    """The sandbox as it was before issue 24, for comparison only: the same bwrap command line
    without masks, filter or git dir, and the environment passed whole."""

    def wrap(self, argv: Sequence[str], *, cwd: str | Path, env: Mapping[str, str],
             bypass: bool = False) -> Wrapped:
        assert self.backend is not None
        real_cwd = os.path.realpath(cwd)
        tmpdir = tempfile.mkdtemp(prefix="cockpit-sandbox-")
        read_only = [path for name in (".git/hooks", ".git/config")
                     if os.path.exists(path := os.path.join(self.workspace, name))]
        args = bwrap_argv(self.backend, argv, mode=self.settings.mode, network=False,
                          workspace=self.workspace, cwd=real_cwd, tmpdir=tmpdir,
                          read_only=read_only)
        run_env = {**env, "TMPDIR": tmpdir, "TMP": tmpdir, "TEMP": tmpdir}
        return Wrapped(args, run_env, self.settings.mode, network=False, cwd=real_cwd,
                       writable=(tmpdir, self.workspace), tmpdir=tmpdir)


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
    """Wall and CPU ms of each command, each way (`WAYS`), interleaved."""
    new = await Sandbox(workspace=root).acheck()
    old = await OldRules(workspace=root).acheck()
    if not new.active:
        raise SystemExit(f"no sandbox here: {new.problem}")
    boxes: dict[str, Sandbox | None] = {"none": None, "old": old, "new": new}
    times: dict[str, dict[str, list[float]]] = {
        name: {key: [] for way in WAYS for key in (way, f"{way} cpu")} for name in COMMANDS}
    per_kind = max(1, count // len(COMMANDS))
    for name, argv in COMMANDS.items():
        for way in WAYS:  # warm up: page cache, the holder's interpreter
            for _ in range(3):
                await run_process(argv, cwd=root, timeout=30, output_cap=65536,
                                  sandbox=boxes[way])
        for i in range(per_kind):
            shift = i % len(WAYS)
            for way in WAYS[shift:] + WAYS[:shift]:  # each way first as often as the others
                started, cpu = time.perf_counter(), cpu_ms()
                done = await run_process(argv, cwd=root, timeout=30, output_cap=65536,
                                         sandbox=boxes[way])
                elapsed = (time.perf_counter() - started) * 1000
                times[name][f"{way} cpu"].append(cpu_ms() - cpu)
                if done.exit_code != 0:
                    raise SystemExit(f"{name} failed ({way}): {done.output}")
                times[name][way].append(elapsed)
    return times


def report(times: dict[str, dict[str, list[float]]]) -> float:
    """Print the table; the median overhead of `new` over `none`, in ms, over all commands."""
    print(f"{'command':<11} {'n':>4} " + " ".join(f"{w + ' med':>9} {'p90':>6}" for w in WAYS)
          + f" {'old-none':>9} {'new-none':>9} {'new-old':>8} {'new/none':>9} "
          + " ".join(f"{'CPU ' + w:>9}" for w in WAYS))
    overall: dict[str, list[float]] = {"old": [], "new": [], "new-old": []}
    for name, runs in times.items():
        med = {way: statistics.median(runs[way]) for way in WAYS}
        paired = {
            "old": [o - n for o, n in zip(runs["old"], runs["none"], strict=True)],
            "new": [o - n for o, n in zip(runs["new"], runs["none"], strict=True)],
            "new-old": [o - n for o, n in zip(runs["new"], runs["old"], strict=True)]}
        for key, values in paired.items():
            overall[key] += values
        print(f"{name:<11} {len(runs['none']):>4} "
              + " ".join(f"{med[w]:>7.1f}ms {pct(runs[w], 0.9):>4.1f}ms" for w in WAYS)
              + f" {statistics.median(paired['old']):>7.1f}ms"
              f" {statistics.median(paired['new']):>7.1f}ms"
              f" {statistics.median(paired['new-old']):>6.1f}ms"
              f" {med['new'] / med['none']:>8.2f}x "
              + " ".join(f"{statistics.median(runs[w + ' cpu']):>7.1f}ms" for w in WAYS))
    added = statistics.median(overall["new"])
    print(f"{'all':<11} {len(overall['new']):>4}  overhead over no sandbox: old "
          f"{statistics.median(overall['old']):.1f} ms, new {added:.1f} ms (target: <= 15 ms); "
          f"new over old {statistics.median(overall['new-old']):.1f} ms")
    return added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300, help="commands of each way, spread "
                        "over the three kinds")
    parser.add_argument("--busy", action="store_true", help="keep one core burned meanwhile")
    args = parser.parse_args()
    with burner(args.busy):
        before = os.getloadavg()
        with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
            root = Path(tmp)
            small_repo(root)
            times = asyncio.run(measure(root, args.count))
        after = os.getloadavg()
    print(f"{os.cpu_count()} CPUs; load average before {before[0]:.1f}, after {after[0]:.1f}; "
          f"{'one core burned' if args.busy else 'idle'}")
    report(times)


if __name__ == "__main__":
    main()
