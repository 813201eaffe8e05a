"""Benchmark of the replay viewer on a huge journal: first frame, jump to the end, memory.

Run:  .venv/bin/python bench/bench_replay.py --busy   (one command: writes, measures, prints)
      [--events 1000000] [--backend-only] [--before REF | --no-before]

Writes a journal of N events (default a million, a few hundred MB) in a temporary directory, and
the same events as another tool would write them (sorted keys, spaces), then measures, each in a
fresh process so memory figures are its own:

- the baseline: reading the file's bytes once (same run, same file, warm page cache);
- backend: the view at the first event, the pass that indexes and folds the whole file (wall
  and CPU time), the same pass over the other layout, the views at the end and in the middle;
- the app (`ReplayApp`, headless): time to the first frame, from pressing `end` at once to the
  provisional frame of the journal's last part (showing its last event) and to the exact frame
  that shows the last event (and the CPU the process spent until then), `home`, `end` and a
  seek to the middle after the pass; peak RSS of that process.

The same run also measures the code before the redesign (`--before`, a git ref, default the
commit the issue-16 replay branch started from), exported to a temporary directory, on the same
files: its pass over both layouts and its app figures. The table shows each figure as a ratio to
reading the bytes once, and the app figures also as a ratio to the code before.

`--busy` keeps one core busy with a CPU burner (a separate process spinning) while it measures,
as on a shared machine. Targets (issue 16, busy machine): first frame <= 0.3 s, `end` at the first
frame <= 1 s, a seek to the middle after the pass <= 0.3 s, RSS <= 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The code measured: this checkout, or (in a child measuring `--before`) an exported tree.
sys.path.insert(0, os.environ.get("BENCH_SOURCE", str(ROOT)))
# (bench/ by path: a child runs this file through runpy, without its folder on sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_burner import burner  # noqa: E402

BEFORE = "b911018297b16fac50de0bd6a4d7f969a903b757"  # main when the redesign began

SESSION = "bench0000001"


def _line(kind: str, seq: int, ts: float, body: str) -> str:
    return f'{{"type":"{kind}","session_id":"{SESSION}","seq":{seq},"ts":{ts:.6f}{body}}}\n'


def journal_lines(n: int):
    """A plausible long run, as journal lines: turns of 50 events, mostly streamed text, a tool
    call with a ~1.5 KB output per turn, usage, and now and then an approval, a denial, a failed
    tool, a decision error and a verification check (the timeline's markers)."""
    ts = 1_760_000_000.0
    output = json.dumps("\n".join(f"line {k}: " + "x" * 60 for k in range(22)))
    words = "the quick brown fox jumps over the lazy dog and keeps on running through "
    error = '"exit 1"'
    seq = 0
    yield _line("agent_start", seq, ts, ',"task":"benchmark a very long run","engine":"bench",'
                '"model":"scripted","cwd":"/tmp/bench"')
    seq += 1
    yield _line("verification_plan_frozen", seq, ts, ',"checks":[{"id":"tests","name":"tests",'
                '"command":"pytest -q"}]')
    seq += 1
    turn = 0
    while seq < n - 1:
        turn += 1
        call = f"call-{turn}"
        body = [("turn_start", f',"turn":{turn}'),
                ("model_decision", f',"turn":{turn},"action":"tool","tool":"shell",'
                 f'"tool_input":{{"command":"ls -la {turn}"}},"rationale":"look around"')]
        if turn % 10 == 0:
            denied = turn % 30 == 0
            body += [("approval_requested", f',"approval_id":"{call}","tool":"shell",'
                      f'"reason":"runs a command","tool_input":{{"command":"make {turn}"}},'
                      '"tier":3,"prefix":"make"'),
                     ("approval_resolved", f',"approval_id":"{call}","tool":"shell",'
                      f'"allowed":{"false" if denied else "true"},"via":"human","remember":false')]
        failed = turn % 7 == 0
        body += [("tool_start", f',"call_id":"{call}","tool":"shell",'
                  f'"tool_input":{{"command":"ls -la {turn}"}},"tier":1,"title":null'),
                 ("tool_end", f',"call_id":"{call}","tool":"shell",'
                  f'"ok":{"false" if failed else "true"},'
                  f'"output":{output},"error":{error if failed else "null"},'
                  '"duration_ms":12.5'),
                 ("model_usage", ',"model":"scripted","input_tokens":1200,"output_tokens":80,'
                  '"cost_usd":0.0004')]
        if turn % 13 == 0:
            body.append(("decision_error", f',"turn":{turn},"error":"no tool named foo",'
                         '"raw":"{\\"tool\\": \\"foo\\"}"'))
        if turn % 25 == 0:
            body += [("verification_start", ',"check_id":"tests","name":"tests"'),
                     ("verification_end", ',"check_id":"tests","name":"tests",'
                      f'"passed":{"false" if turn % 50 == 0 else "true"},"output":"3 passed",'
                      '"duration_ms":800.0')]
        streamed = 50 - len(body) - 1
        for k in range(streamed):
            text = f"{words[k % 20:k % 20 + 60]} {k} "
            body.append(("model_update", f',"turn":{turn},"text":"{text}","channel":"message"'))
        body.append(("turn_end", f',"turn":{turn},"stop_reason":"tool_use"'))
        for kind, fields in body:
            if seq >= n - 1:
                break
            ts += 0.05
            yield _line(kind, seq, ts, fields)
            seq += 1
    yield _line("agent_end", seq, ts + 1, ',"status":"completed","result":"done","error":null')


def write_journal(path: str | os.PathLike[str], n: int, *, foreign: bool = False) -> int:
    """Write an `n`-event journal to `path`; returns its size in bytes. `foreign`: the same
    events as another tool writes JSONL (`json.dumps(d, sort_keys=True)`: sorted keys, spaces)."""
    with open(path, "w", encoding="utf-8") as f:
        batch: list[str] = []
        for line in journal_lines(n):
            if foreign:
                line = json.dumps(json.loads(line), sort_keys=True) + "\n"
            batch.append(line)
            if len(batch) >= 10_000:
                f.write("".join(batch))
                batch.clear()
        f.write("".join(batch))
    return os.path.getsize(path)


def _rss_peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_baseline(path: str) -> dict:
    """Read the file's bytes once, in 8 MiB blocks (what any viewer must at least do)."""
    start = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.read(8 << 20):
            pass
    return {"read_bytes_s": time.perf_counter() - start}


def measure_backend(path: str) -> dict:
    """The engine_adapter side alone: first view, the pass (index and fold together, the
    viewer's one reading thread), the views at the end and in the middle after it."""
    from engine_adapter.replay import JournalReplay

    out: dict = {}
    start = time.perf_counter()
    replay = JournalReplay(path)
    replay.advance(max_bytes=256 << 10)
    first = replay.state_at(1)
    out["first_view_s"] = time.perf_counter() - start
    assert first.events == 1
    t, cpu = time.perf_counter(), time.process_time()
    replay.read_through()
    out["pass_s"], out["pass_cpu_s"] = time.perf_counter() - t, time.process_time() - cpu
    out["positions"] = len(replay)
    t = time.perf_counter()
    end = replay.state_at(len(replay))
    out["end_view_s"] = time.perf_counter() - t
    t = time.perf_counter()
    replay.state_at(len(replay) // 2 + 777)
    out["middle_view_s"] = time.perf_counter() - t
    out["checkpoints"] = len(replay.checkpoints)
    out["end_items"] = len(end.items)
    replay.close()
    out["rss_peak_mb"] = _rss_peak_mb()
    return out


def measure_pass(path: str) -> dict:
    """The pass alone (for a journal in another layout: how much slower it reads)."""
    from engine_adapter.replay import JournalReplay

    t, cpu = time.perf_counter(), time.process_time()
    replay = JournalReplay(path)
    replay.read_through()
    out = {"pass_s": time.perf_counter() - t, "pass_cpu_s": time.process_time() - cpu,
           "positions": len(replay), "corrupt": len(replay.index.corrupt)}
    replay.close()
    return out


def on_frames(app_class, seen):
    """`app_class` calling `seen(app)` after each frame it composes: Textual calls `_display`
    once per composed frame, also headless (private API: Textual is pinned). bench_start.py
    times the first frames of `cockpit demo` and `cockpit replay` with it."""

    class Timed(app_class):
        def _display(self, screen, renderable) -> None:
            super()._display(screen, renderable)
            seen(self)

    Timed.__name__ = Timed.__qualname__ = f"Timed{app_class.__name__}"
    return Timed


def measure_app(path: str) -> dict:
    """The viewer, headless: first frame, then `end` until the last event is on screen."""
    import asyncio

    from cockpit.replay import ReplayApp

    out: dict = {}
    # (when displayed, the event it showed, whether the view was a provisional end)
    frames: list[tuple[float, int, bool]] = []

    def seen(app) -> None:
        navigator = getattr(app.replay_screen, "navigator", None)
        frames.append((time.perf_counter(), app.position_shown,
                       getattr(navigator, "provisional", None) is not None))

    TimedReplay = on_frames(ReplayApp, seen)

    async def shown(app, target: int | None, since: float) -> float:
        """When the first frame after `since` showing event `target` (None: any) was
        displayed (the app sets what it shows before the frame is composed)."""
        while True:
            for when, position, _ in frames:
                if when > since and (position >= 0 if target is None else position == target):
                    return when
            await asyncio.sleep(0.002)

    def provisional_after(since: float) -> float | None:
        return next((when for when, _, provisional in frames
                     if when > since and provisional), None)

    async def main() -> None:
        start = time.perf_counter()
        app = TimedReplay(path)
        async with app.run_test(size=(160, 48)) as pilot:
            out["first_frame_s"] = await shown(app, None, start) - start
            t, press_cpu = time.perf_counter(), time.process_time()
            await pilot.press("end")
            # The end is known once the whole journal is read; the frame must show it.
            while not app.index_complete:
                await asyncio.sleep(0.002)
            total = len(app.replay)
            out["jump_to_end_s"] = await shown(app, total - 1, t) - t
            out["cold_end_cpu_s"] = time.process_time() - press_cpu
            provisional = provisional_after(t)  # (code without a provisional end: none)
            if provisional is not None:
                out["end_provisional_s"] = provisional - t
            out["positions"] = total
            for key, target, name in (("home", 0, "home_warm_s"),
                                      ("end", total - 1, "end_warm_s")):
                t = time.perf_counter()
                await pilot.press(key)
                out[name] = await shown(app, target, t) - t
            t = time.perf_counter()
            app.replay_screen.seek(total // 2 + 777)
            out["middle_warm_s"] = await shown(app, total // 2 + 777, t) - t
        out["rss_peak_mb"] = _rss_peak_mb()

    asyncio.run(main())
    return out


def _in_child(kind: str, path: str, source: str | None = None) -> dict:
    """`measure_<kind>(path)` in a fresh process, on this checkout's code or `source`'s."""
    code = ("import json, runpy; "
            f"b = runpy.run_path({__file__!r}); "
            f"print(json.dumps(b['measure_{kind}']({path!r})))")
    env = {**os.environ, "TEXTUAL_ANIMATIONS": "none", "BENCH_SOURCE": source or str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def export_tree(ref: str, into: str) -> str | None:
    """The files of git `ref` of this repository, in a new directory under `into`."""
    tree = Path(into) / "before"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True,
                             check=False)
    if archive.returncode != 0:
        print(f"cannot export {ref!r}: {archive.stderr.decode(errors='replace').strip()}")
        return None
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return str(tree)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--backend-only", action="store_true", help="skip the headless app")
    parser.add_argument("--journal", help="measure this journal instead of generating one")
    parser.add_argument("--busy", action="store_true",
                        help="keep one core busy with a CPU burner while measuring")
    parser.add_argument("--no-foreign", action="store_true",
                        help="skip the pass over the same events in another JSON layout")
    parser.add_argument("--before", default=BEFORE,
                        help="git ref of the code to compare with, measured in the same run "
                             "(default: main before the issue-16 redesign)")
    parser.add_argument("--no-before", action="store_true",
                        help="skip measuring the code before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.journal or str(Path(tmp) / "huge.jsonl")
        foreign = None if args.no_foreign or args.journal else str(Path(tmp) / "foreign.jsonl")
        if not args.journal:
            t = time.perf_counter()
            size = write_journal(path, args.events)
            if foreign:
                write_journal(foreign, args.events, foreign=True)
            print(f"wrote {args.events:,} events, {size / 1e6:.0f} MB in "
                  f"{time.perf_counter() - t:.1f} s")
        else:
            size = os.path.getsize(path)
        tree = None if args.no_before else export_tree(args.before, tmp)
        with burner(args.busy):
            base = _in_child("baseline", path)
            back = _in_child("backend", path)
            other = _in_child("pass", foreign) if foreign else {}
            app = {} if args.backend_only else _in_child("app", path)
            old: dict = {}
            if tree:
                old["pass"] = _in_child("pass", path, tree)
                old["foreign"] = _in_child("pass", foreign, tree) if foreign else {}
                old["app"] = {} if args.backend_only else _in_child("app", path, tree)
        read = base.get("read_bytes_s", float("nan"))

        def row(name: str, value: float | None, target: str = "", before: float | None = None
                ) -> None:
            if value is None:
                print(f"{name:<36} {'-':>9}")
                return
            ratio = value / read if read else float("nan")
            was = f"{before:>8.3f}s {value / before:>6.2f}x" if before else f"{'':>16}"
            print(f"{name:<36} {value:>8.3f}s {ratio:>8.1f}x {was}   {target}")

        old_pass, old_app = old.get("pass", {}), old.get("app", {})

        print(f"\nmachine: {'busy (one core burned)' if args.busy else 'as is'}; "
              f"load average {os.getloadavg()[0]:.2f} (2 cores)")
        print(f"journal: {size / 1e6:.0f} MB, {back.get('positions', 0):,} events")
        if tree:
            problems = [f"{k}: {v['error']}" for k, v in old.items() if "error" in v]
            print(f"before: {args.before[:12]} (same files, same run)"
                  + (f"; failed: {'; '.join(problems)}" if problems else ""))
        print(f"{'measure':<36} {'time':>9} {'x read':>9} {'before':>9} {'now/was':>7}   target")
        row("baseline: read the bytes once", read)
        row("backend: view at first event", back.get("first_view_s"))
        row("backend: the pass (index + fold)", back.get("pass_s"), "",
            old_pass.get("pass_s"))
        row("backend: ... its CPU time", back.get("pass_cpu_s"), "", old_pass.get("pass_cpu_s"))
        if other.get("pass_cpu_s") and back.get("pass_cpu_s"):
            old_other = old.get("foreign", {})
            was = "failed" if "error" in old_other else old_other.get("corrupt", "-")
            row("backend: pass, sorted keys + spaces", other["pass_s"],
                f"{other['pass_cpu_s'] / back['pass_cpu_s']:.1f}x the CPU (<= ~3x); "
                f"{other.get('corrupt', 0):,} bad lines "
                f"(before: {was})", old_other.get("pass_s"))
        row("backend: view at end (checkpoint)", back.get("end_view_s"))
        row("backend: view in the middle", back.get("middle_view_s"))
        print(f"{'backend: peak RSS':<36} {back.get('rss_peak_mb', 0):>7.0f}MB  "
              f"({back.get('checkpoints')} checkpoints, {back.get('end_items', 0):,} rows)")
        if app:
            if "error" in app:
                print(f"app: {app['error']}")
            else:
                for name, key, target in (
                        ("app: first frame", "first_frame_s", "<= 0.3 s"),
                        ("app: end at first frame: provisional", "end_provisional_s",
                         "<= 1 s (the last part, said so)"),
                        ("app: end at first frame: exact", "jump_to_end_s", ""),
                        ("app: ... CPU from the press to it", "cold_end_cpu_s", ""),
                        ("app: home, after the pass", "home_warm_s", ""),
                        ("app: end, after the pass", "end_warm_s", ""),
                        ("app: middle, after the pass", "middle_warm_s", "<= 0.3 s")):
                    row(name, app.get(key), target, old_app.get(key))
                was = old_app.get("rss_peak_mb")
                print(f"{'app: peak RSS':<36} {app.get('rss_peak_mb', 0):>7.0f}MB "
                      f"{'':>9} {f'{was:>7.0f}MB' if was else '':>9}"
                      f"{'':>8}   <= 300 MB")


if __name__ == "__main__":
    main()
