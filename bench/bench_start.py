"""Benchmark of the cockpit's start: how long a command takes to answer, or to draw its first
frame, process start included, beside the imports every command line and every TUI must pay.

Run:  .venv/bin/python bench/bench_start.py [--runs 7] [--busy both|no|only]
          [--events 1000000 | --journal PATH] [--no-replay]

Each figure is the median of `--runs` fresh processes; the rounds alternate the measures (and
the idle and busy machine), so drift in the box's load falls on all alike. The cockpit's
bytecode is compiled first and cached, as in a user's install (`PYTHONDONTWRITEBYTECODE` is
dropped for the children):

- baselines: `python -c "import typer"` and `python -c "import textual.app"`; for reference, a
  typer app of one command without options answering `--help` (typer's own floor for help);
- `cockpit version` and `cockpit --help` (the console script, output to a pipe);
- the demo's first frame: `cockpit demo` on a pseudo-terminal (160x48), from starting the
  process to the first frame Textual composes (bench_replay.py's frame timing, `on_frames`,
  on the app the command builds), then the app is closed;
- the replay's first frame: `cockpit replay` on a journal of a million events (bench_replay.py's
  `write_journal`), to the first frame that shows an event.

`--busy both` measures each also with one core kept busy by a CPU burner (bench/cpu_burner.py),
as on a shared machine; each ratio is taken against the baselines of its own machine state.
Targets: `cockpit version` and `--help` <= 1.5x the typer import; the demo's and the replay's
first frame <= the textual import + 0.3 s (idle); the replay's first frame <= 1.5 s with one
core busy.
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_replay import write_journal  # noqa: E402 (bench/, the script's own folder)
from cpu_burner import burner  # noqa: E402

COLUMNS, ROWS = 160, 48
TIMEOUT = 120.0  # seconds a first frame may take before the run counts as failed

# What a first-frame process runs: the real command line, its app class (the one the command
# imports from the package face) wrapped by bench_replay's `on_frames`, which writes the wall
# time of the first frame showing something and closes the app.
CHILD = """
import sys, time
sys.path.insert(0, {bench!r})
from bench_replay import on_frames
import {face} as face

shown = []

def seen(app):
    if not shown and getattr(app, "position_shown", 0) >= 0:
        shown.append(time.time())
        with open({out!r}, "w") as f:
            f.write(repr(shown[0]))
        app.exit()

face.{name} = on_frames(face.{name}, seen)
sys.argv = ["cockpit", *{argv!r}]
from cockpit.cli import entry
entry()
"""


def _cockpit() -> list[str]:
    """The console script beside this interpreter (`python -m cockpit` without one)."""
    script = Path(sys.executable).with_name("cockpit")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cockpit"]


def answered(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from starting `argv` to its exit (its output read from a pipe)."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: "
                           f"{done.stderr.decode(errors='replace').strip()[-300:]}")
    return took


def first_frame(face: str, name: str, argv: list[str], env: dict[str, str], tmp: str) -> float:
    """Seconds from starting `cockpit ARGV` on a new pseudo-terminal to its first frame."""
    out = os.path.join(tmp, "frame.txt")
    if os.path.exists(out):
        os.unlink(out)
    code = CHILD.format(bench=str(BENCH), face=face, name=name, out=out, argv=argv)
    start = time.time()
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of a known size, then the command
        try:
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
            os.execve(sys.executable, [sys.executable, "-c", code], env)
        finally:
            os._exit(127)
    screen = _drain(fd, pid, start + TIMEOUT)
    if not os.path.exists(out):
        shown = screen.decode(errors="replace")[-400:]
        raise RuntimeError(f"cockpit {' '.join(argv)}: no frame within {TIMEOUT:g} s: {shown!r}")
    with open(out) as f:
        return float(f.read()) - start


def _drain(fd: int, pid: int, deadline: float) -> bytes:
    """Read what the child writes to its terminal (a terminal nobody reads blocks its writer)
    until it exits; killed (its whole session) past `deadline`."""
    screen = bytearray()
    try:
        while True:
            left = deadline - time.time()
            if left <= 0:
                os.killpg(pid, signal.SIGKILL)
                break
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:  # EIO: the child's side of the terminal is closed
                break
            if not chunk:
                break
            screen += chunk
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    return bytes(screen)


# typer's own floor for `--help`: the cost of typer and Rich drawing any help at all.
ONE_COMMAND = '''import typer

app = typer.Typer(add_completion=False)


@app.command()
def hello() -> None:
    """Say hello."""


app()
'''


def measures(journal: str | None, env: dict[str, str], tmp: str
             ) -> dict[str, Callable[[], float]]:
    """Each measure by name: one run of it, in seconds."""
    cockpit = _cockpit()
    one = os.path.join(tmp, "one_command.py")
    with open(one, "w") as f:
        f.write(ONE_COMMAND)
    found: dict[str, Callable[[], float]] = {
        "typer": lambda: answered([sys.executable, "-c", "import typer"], env),
        "textual": lambda: answered([sys.executable, "-c", "import textual.app"], env),
        "one": lambda: answered([sys.executable, one, "--help"], env),
        "version": lambda: answered([*cockpit, "version"], env),
        "help": lambda: answered([*cockpit, "--help"], env),
        "demo": lambda: first_frame("cockpit.live", "CockpitApp", ["demo"], env, tmp),
    }
    if journal is not None:
        found["replay"] = lambda: first_frame("cockpit.replay", "ReplayApp",
                                              ["replay", journal], env, tmp)
    return found


def verdict(value: float, budget: float) -> str:
    """The figure as a share of its budget, and whether it holds."""
    return f"{value / budget:5.2f} of it {'holds' if value <= budget else 'MISSES'}"


def report(found: dict[bool, dict[str, list[float]]], runs: int, events: int) -> None:
    """The table: each figure's median, idle and busy, and each against its target."""
    medians = {busy: {key: statistics.median(values) for key, values in got.items()}
               for busy, got in found.items()}
    print(f"\nStart-up: medians of {runs} fresh processes; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    print(f"{'measure':<44} {'idle':>8} {'busy':>8}   target: share of the budget (idle / busy)")

    def row(name: str, key: str, target: str = "",
            budget: Callable[[bool], float | None] = lambda busy: None) -> None:
        if not any(key in got for got in medians.values()):
            return
        cells, checks = [], []
        for busy in (False, True):
            value = medians.get(busy, {}).get(key)
            cells.append(f"{value * 1000:6.0f}ms" if value is not None else f"{'-':>8}")
            limit = budget(busy) if value is not None else None
            if limit is not None:
                checks.append(f"{'busy' if busy else 'idle'} {verdict(value, limit)}")
        print(f"{name:<44} {cells[0]:>8} {cells[1]:>8}   {target}"
              + (f": {'; '.join(checks)}" if checks else ""))

    def base(busy: bool, key: str) -> float:
        return medians[busy][key]

    row('baseline: python -c "import typer"', "typer")
    row('baseline: python -c "import textual.app"', "textual")
    row("reference: a one-command typer app --help", "one", "(typer's floor for --help)")
    row("cockpit version", "version", "<= 1.5x the typer import",
        lambda busy: 1.5 * base(busy, "typer"))
    row("cockpit --help", "help", "<= 1.5x the typer import",
        lambda busy: 1.5 * base(busy, "typer"))
    row("cockpit demo: first frame", "demo", "<= the textual import + 0.3 s, idle",
        lambda busy: None if busy else base(busy, "textual") + 0.3)
    row(f"cockpit replay, {events:,} events: 1st frame", "replay",
        "<= the textual import + 0.3 s idle, <= 1.5 s busy",
        lambda busy: 1.5 if busy else base(busy, "textual") + 0.3)
    for busy, got in found.items():
        spread = ", ".join(f"{key} {min(v) * 1000:.0f}-{max(v) * 1000:.0f}"
                           for key, v in got.items())
        print(f"  range (ms), {'busy' if busy else 'idle'}: {spread}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="processes a figure (7)")
    parser.add_argument("--busy", choices=["both", "no", "only"], default="both",
                        help="also measure with a CPU burner on one core (both)")
    parser.add_argument("--events", type=int, default=1_000_000,
                        help="events of the replayed journal (1,000,000)")
    parser.add_argument("--journal", help="replay this journal instead of writing one")
    parser.add_argument("--no-replay", action="store_true", help="skip the replay's first frame")
    args = parser.parse_args()
    modes = {"both": [False, True], "no": [False], "only": [True]}[args.busy]
    with tempfile.TemporaryDirectory(prefix="bench-start-") as tmp:
        journal = None if args.no_replay else args.journal
        events = args.events
        if journal is not None:
            with open(journal, "rb") as f:
                events = sum(1 for _ in f)
        elif not args.no_replay:
            journal = os.path.join(tmp, "huge.jsonl")
            t = time.perf_counter()
            size = write_journal(journal, args.events)
            print(f"wrote {args.events:,} events, {size / 1e6:.0f} MB in "
                  f"{time.perf_counter() - t:.1f} s")
        env = {**os.environ, "COCKPIT_HOME": os.path.join(tmp, "home"),
               "TERM": "xterm-256color"}
        # As a user's install runs: its modules' bytecode cached (pip compiles what it
        # installs; an editable checkout writes it on the first run). A shell that forbids
        # writing bytecode would make every run compile the cockpit's own ~200 modules (and
        # only those: the libraries came compiled), ~0.15 s a start.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        compileall.compile_dir(str(BENCH.parent / "cockpit"), quiet=1)
        compileall.compile_dir(str(BENCH.parent / "engine_adapter"), quiet=1)
        runs = measures(journal, env, tmp)
        found: dict[bool, dict[str, list[float]]] = {busy: {k: [] for k in runs}
                                                     for busy in modes}
        print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for n in range(args.runs):
            for busy in modes:
                with burner(busy):
                    for key, measure in runs.items():
                        found[busy][key].append(measure())
            print(f"  round {n + 1}/{args.runs} done", flush=True)
        report(found, args.runs, events)


if __name__ == "__main__":
    main()
