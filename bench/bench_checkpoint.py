"""Benchmark of workspace checkpoints: a 10,000-file workspace, the first checkpoint, one after
ten files changed, and how the store grows with what changed (not with the number of turns).

Run:  .venv/bin/python bench/bench_checkpoint.py [--files 10000] [--repeat 5] [--kind git|folder]
          [--busy]

`--busy`: every round with a CPU burner on one core (bench/cpu_burner.py), as the targets ask.
The workspace and the first checkpoint are synced to disk before what follows is timed (as a
real workspace is on disk: measured here, the writeback of ten thousand files just made held
up the checkpoints after them by 30–100 ms, the fsyncs and git's lstats waiting behind it).

- first: the first checkpoint of the workspace (every file read, hashed and stored).
  Target ≤ 1 s.
- after 10 changes: ten files rewritten, then the next checkpoint of the same run (a listing,
  10,000 `lstat`s from the stat cache, ten reads; in git, the tracked files git vouches for are
  not lstat'd at all). Target ≤ 100 ms, with one core burned.
- unchanged: the next checkpoint with nothing changed.
- store growth: bytes added to the store by each checkpoint, beside the bytes that changed,
  printed as a table over `--turns` turns of ten changes each.
- rewind: back to the first checkpoint after those turns.

Each figure is the best of `--repeat` runs (load from other work only ever adds time), medians
beside it, and the CPU time it used (this process and git): on a shared, loaded machine the
wall clock also counts the waits for a core. The workspace is a real git repository
(`--kind git`, listed with `git ls-files`) or a plain folder (`--kind folder`, walked).
Files: 100 folders of 100 files, 200 bytes to 4 KB.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

from cpu_burner import burner  # noqa: E402

from engine_adapter.checkpoints import CheckpointStore, Snapshotter, rewind  # noqa: E402


def make_workspace(root: Path, files: int, kind: str) -> list[Path]:
    rng = random.Random(7)
    paths = []
    per = 100
    for i in range(files):
        path = root / f"pkg{i // per:03d}" / f"mod{i % per:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(rng.randint(100, 2048)).hex().encode())
        paths.append(path)
    if kind == "git":
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
            subprocess.run(["git", "-C", str(root), *args], check=True, env=env)
    return paths


def cpu() -> float:
    """CPU seconds of this process and its finished children (git): on a loaded machine the
    wall clock also counts the waits for a core."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(work):
    wall, used = time.perf_counter(), cpu()
    result = work()
    return result, time.perf_counter() - wall, cpu() - used


def change(paths: list[Path], count: int, rng: random.Random) -> int:
    changed = 0
    for path in rng.sample(paths, count):
        data = os.urandom(rng.randint(100, 2048)).hex().encode()
        path.write_bytes(data)
        changed += len(data)
    return changed


def one_round(files: int, kind: str, turns: int) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-checkpoint-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        paths = make_workspace(ws, files, kind)
        # On disk, as a real workspace is: ten thousand files just written are still being
        # written back, and every fsync and lstat of the checkpoints would wait behind that.
        os.sync()
        store = CheckpointStore(tmp / "store")
        taker = Snapshotter(store, str(ws), run="bench")
        first, first_s, first_cpu = timed(lambda: taker.take(turn=1))
        first_size = store.size()
        os.sync()  # (the first checkpoint's 13 MB of packs, the same)
        # The stat cache trusts only files older than the previous checkpoint by the racy
        # margin: the bench's files were all just written, so age them as a real repo's are.
        taker.previous_start_ns += 10**12
        rng = random.Random(1)
        rows = []
        after_s: list[float] = []
        after_cpu: list[float] = []
        for turn in range(2, turns + 2):
            changed = change(paths, 10, rng)
            before = store.size()
            taken, wall, used = timed(lambda turn=turn: taker.take(turn=turn))
            after_s.append(wall)
            after_cpu.append(used)
            taker.previous_start_ns += 10**12
            rows.append((turn, taken.read, changed, store.size() - before))
        _, unchanged_s, unchanged_cpu = timed(lambda: taker.take(turn=turns + 2))
        end = taker.take(kind="end").manifest
        outcome, rewind_s, rewind_cpu = timed(lambda: rewind(store, first.manifest, end))
        return {"first": first_s, "after": min(after_s), "unchanged": unchanged_s,
            "rewind": rewind_s, "first_cpu": first_cpu, "after_cpu": min(after_cpu),
            "unchanged_cpu": unchanged_cpu, "rewind_cpu": rewind_cpu, "rows": rows,
            "first_size": first_size, "restored": len(outcome.plan.restore),
            "workspace_bytes": sum(p.stat().st_size for p in paths)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--kind", choices=("git", "folder"), default="git")
    parser.add_argument("--busy", action="store_true", help="with a CPU burner on one core")
    args = parser.parse_args()
    with burner(args.busy):
        rounds = [one_round(args.files, args.kind, args.turns) for _ in range(args.repeat)]

    def best(key: str) -> str:
        values = [float(r[key]) for r in rounds]  # type: ignore[arg-type]
        used = [float(r[f"{key}_cpu"]) for r in rounds]  # type: ignore[arg-type]
        return (f"wall best {min(values) * 1000:7.1f} ms median "
                f"{statistics.median(values) * 1000:7.1f} ms   cpu best {min(used) * 1000:6.1f} ms")

    print(f"{args.files} files ({args.kind}), {args.repeat} rounds, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
          + (", one core burned" if args.busy else ""))
    print(f"first checkpoint        {best('first')}   (target ≤ 1000 ms)")
    print(f"after 10 changes        {best('after')}   (target ≤ 100 ms)")
    print(f"nothing changed         {best('unchanged')}")
    print(f"rewind to the first     {best('rewind')}   ({rounds[0]['restored']} files back)")
    last = rounds[-1]
    print(f"\nworkspace {int(last['workspace_bytes']) / 1e6:.1f} MB; first checkpoint stored "
          f"{int(last['first_size']) / 1e6:.1f} MB")
    print(f"{'turn':>5} {'files read':>11} {'bytes changed':>14} {'store grew':>11} {'ratio':>6}")
    for turn, read, changed, grew in last["rows"]:  # type: ignore[union-attr]
        print(f"{turn:>5} {read:>11} {changed:>14} {grew:>11} {grew / max(changed, 1):>6.2f}")


if __name__ == "__main__":
    main()
