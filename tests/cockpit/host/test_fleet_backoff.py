"""An unreachable host in the fleet view is tried again after a pause that doubles (1 s up to
60 s for a `--via` command, which starts a process each try), at once on `retry_now()` (`r`),
and not tried at all while it waits: a real `--via` command that fails at once, counted."""

from __future__ import annotations

import asyncio
import shlex

from support.event_loop import run as run_loop

from cockpit.host.fleet.watch import FIRST_PAUSE, LOCAL_MAX_PAUSE, MAX_PAUSE, HostWatch


def test_a_failing_via_is_tried_after_doubling_pauses_and_at_once_on_retry(tmp_path) -> None:
    tries = tmp_path / "tries"
    via = f"sh -c {shlex.quote(f'echo x >> {shlex.quote(str(tries))}; exit 1')}"

    def started() -> int:
        return len(tries.read_text().splitlines()) if tries.exists() else 0

    async def main() -> None:
        watch = HostWatch("far", via=via)
        waiting = asyncio.Event()
        watch.on_change = lambda: waiting.set() if watch.retry_at is not None else None
        task = asyncio.create_task(watch.run())
        try:
            pauses = []
            for attempt in range(1, 9):
                await asyncio.wait_for(waiting.wait(), 30)
                waiting.clear()
                assert watch.tries == attempt and started() == attempt  # one process a try
                assert watch.problem and watch.down_since is not None
                pauses.append(watch.pause())
                assert watch.retry_in() is not None
                assert watch.retry_now()  # `r`: the next try now, not after the pause
            assert pauses == [min(FIRST_PAUSE * 2 ** k, MAX_PAUSE) for k in range(8)]
            assert pauses[-1] == MAX_PAUSE
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    run_loop(main())


def test_the_local_socket_pauses_stop_sooner(tmp_path) -> None:
    watch = HostWatch("local", path=tmp_path / "no-such.sock")
    watch.tries = 12
    assert watch.pause() == LOCAL_MAX_PAUSE
    assert not watch.retry_now()  # not waiting to be tried: nothing to do
