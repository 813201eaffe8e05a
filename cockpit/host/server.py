"""`Host`: the one process per user and machine that owns runs, serving clients on its socket.

It holds the lock (`places.lock_path()`, `flock`: one host at a time), discharges what a dead
host left (`record.recover`), listens on `places.socket_path()` (mode 0600 in a 0700 folder;
every peer's uid checked against its own by `SO_PEERCRED`), and answers the requests of
`wire.OPS`. `stop` (or SIGTERM, SIGINT) cancels every live run, waits for each to end (at most
`STOP_SECONDS`), closes their agents and exits.

An ended run's events are held for `keep_ended` seconds (and for the `max_ended` runs that
ended last), then let go: its record and activity stay listed, and a client that follows it
reads its journal. `watch` pushes the fleet (every run's row and open asks) to a client when
something changed, at most once per `WATCH_INTERVAL`: an idle host sends nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from typing import Any

from cockpit.host.connection import Connection
from cockpit.host.grants import LIST_OP, REVOKE_OP, listing, revoke_listed
from cockpit.host.peer import peer_uid
from cockpit.host.places import lock_path, private_dir, record_dir, socket_path
from cockpit.host.record import RunRecord, recover
from cockpit.host.runs import HostRun, Launcher
from cockpit.host.wire import OPS, WireError, hello, hello_problem

__all__ = ["FOLLOW_BATCH", "KEEP_ENDED_SECONDS", "MAX_ENDED", "STOP_REASON", "STOP_SECONDS",
           "WATCH_INTERVAL",
           "Host", "HostBusy", "take_lock"]

log = logging.getLogger(__name__)

STOP_SECONDS = 12.0
"""How long `stop` waits for the cancelled runs to end before closing their agents anyway."""
STOP_REASON = "the host was stopped"
KEEP_ENDED_SECONDS = 600.0
"""How long an ended run's events stay in memory (a client attached meanwhile reads them
there; later, from the journal)."""
MAX_ENDED = 8
"""How many ended runs keep their events in memory at most (the ones that ended last)."""
FOLLOW_BATCH = 512
"""The most events one write to a following client carries."""
WATCH_INTERVAL = 0.2
"""The shortest time between two pushes of the fleet to one watcher (a busy fleet is pushed
about five times a second, not once an event)."""


class HostBusy(Exception):
    """Another host holds the lock (its pid in the message)."""


def take_lock() -> int:
    """Hold the host lock for this process's lifetime (the fd is returned, kept open); writes
    this pid in it. `HostBusy` if another host holds it."""
    path = lock_path()
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        other = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise HostBusy(f"a host is already running (pid {other or '?'})") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


class Host:
    """The host's state and its answers to clients.

    Args:
        launch: Builds a run from a `start` request (the command line's, so the host runs
            exactly what `cockpit run` would); called in a thread.
        keep_ended: Seconds an ended run's events stay in memory.
        max_ended: How many ended runs keep their events at most.
    """

    def __init__(self, launch: Launcher, *, keep_ended: float = KEEP_ENDED_SECONDS,
                 max_ended: int = MAX_ENDED) -> None:
        self.launch = launch
        self.keep_ended = keep_ended
        self.max_ended = max_ended
        self.since = time.time()
        self.runs: dict[str, HostRun] = {}
        self.lost: dict[str, RunRecord] = {}
        self._stopping = asyncio.Event()
        self._stopped = False
        self._connections: set[asyncio.Task[Any]] = set()
        self._watchers: set[asyncio.Event] = set()
        self._releases: set[asyncio.Task[None]] = set()

    # Serving -------------------------------------------------------------------------------
    async def serve(self, ready: Callable[[], None] | None = None) -> None:
        """Recover, listen, call `ready()` once clients can connect, and serve until stopped."""
        for record in recover(record_dir()):
            self.lost[record.id] = record
        path = socket_path()
        private_dir(path.parent)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a dead host's socket (we hold the lock: no live host owns it)
        old = os.umask(0o177)  # the socket is born 0600: no window where others may connect
        try:
            server = await asyncio.start_unix_server(self._serve_one, path=str(path),
                                                     limit=64 * 1024 * 1024)
        finally:
            os.umask(old)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.request_stop)
        log.info("host %d listening on %s", os.getpid(), path)
        if ready is not None:
            ready()
        try:
            await self._stopping.wait()
            await self.stop_runs()
        finally:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            log.info("host %d stopped", os.getpid())

    def request_stop(self) -> None:
        """Stop serving: cancel every live run, then exit (see `stop_runs`)."""
        self._stopping.set()

    async def stop_runs(self) -> None:
        """Cancel every live run, wait for their ends (at most `STOP_SECONDS`), close all."""
        live = [run for run in self.runs.values() if run.live]
        for run in live:
            run.session.cancel(STOP_REASON)
        tasks = [run.task for run in self.runs.values() if run.task is not None]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=STOP_SECONDS)
            for task in pending:  # an engine that ignores its token: its task is cancelled
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for run in self.runs.values():
            await run.close()

    async def _serve_one(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        connection = Connection(reader, writer)
        try:
            sock: socket.socket | None = writer.get_extra_info("socket")
            uid = peer_uid(sock) if sock is not None else None
            if uid != os.getuid():
                log.warning("refused a peer of uid %s", uid)
                await connection.send({"error": f"refused: this host serves uid {os.getuid()} "
                                                "only"})
                return
            await self.converse(connection)
        except asyncio.CancelledError:
            pass  # the host is stopping: the connection simply ends (asyncio would log it)
        finally:
            await connection.close()
            if task is not None:
                self._connections.discard(task)

    async def converse(self, connection: Connection) -> None:
        """One client's conversation: the greeting, then its requests until it hangs up."""
        followers: list[asyncio.Task[None]] = []
        try:
            try:
                greeting = await connection.read()
            except WireError as exc:
                await connection.send({"error": str(exc)})
                return
            problem = "no greeting" if greeting is None else hello_problem(greeting,
                                                                           role="client")
            if problem is not None:
                await connection.send({"error": problem})
                return
            await connection.send(hello("host", pid=os.getpid(), since=self.since))
            while True:
                try:
                    message = await connection.read()
                except WireError as exc:
                    await connection.send({"ok": False, "error": str(exc)})
                    return
                if message is None:
                    return
                reply = await self.answer(message, connection, followers)
                if reply is not None:
                    await connection.send(reply)
        finally:
            for follower in followers:
                follower.cancel()
            await asyncio.gather(*followers, return_exceptions=True)

    # Requests ------------------------------------------------------------------------------
    async def answer(self, message: dict[str, Any], connection: Connection,
                     followers: list[asyncio.Task[None]]) -> dict[str, Any] | None:
        """The reply to one request (`None`: the request streams its own answer)."""
        op = message.get("op")
        ident = message.get("id")
        if op not in OPS:
            return {"id": ident, "ok": False, "error": f"unknown request {op!r}"}
        try:
            result = await self._dispatch(str(op), message, connection, followers)
        except Exception as exc:  # a request's failure is the client's to read, never a crash
            log.info("request %s failed: %s", op, exc)
            return {"id": ident, "ok": False, "error": str(exc) or type(exc).__name__}
        return {"id": ident, "ok": True, **result}

    def _run(self, message: dict[str, Any]) -> HostRun:
        run_id = str(message.get("run", ""))
        run = self.runs.get(run_id)
        if run is None:
            matches = [r for key, r in self.runs.items() if key.startswith(run_id)] \
                if run_id else []
            if len(matches) != 1:
                raise LookupError(f"no run {run_id!r} in this host (see `cockpit ps`)")
            run = matches[0]
        return run

    def _lost(self, message: dict[str, Any]) -> RunRecord | None:
        run_id = str(message.get("run", ""))
        if run_id in self.lost:
            return self.lost[run_id]
        matches = [r for key, r in self.lost.items() if run_id and key.startswith(run_id)]
        return matches[0] if len(matches) == 1 and not any(
            key.startswith(run_id) for key in self.runs) else None

    async def _answer_lost(self, op: str, record: RunRecord, message: dict[str, Any],
                           followers: list[asyncio.Task[None]],
                           connection: Connection) -> dict[str, Any]:
        """A run lost with a dead host: described and followed from its journal (which the
        recovery ended); it answers nothing more."""
        if op == "describe":
            return {"run": record.summary(), "approval_timeout": None}
        if op != "follow":
            raise LookupError(f"the run {record.id} was lost with its host: it takes no more "
                              "answers (its journal is ended)")
        cursor = message.get("cursor", 0)
        cursor = cursor if isinstance(cursor, int) and cursor >= 0 else 0
        followers.append(asyncio.create_task(self._replay(record.id, record.journal, cursor,
                                                          connection)))
        return {"run": record.summary(), "approval_timeout": None}

    async def _replay(self, run_id: str, journal: str, cursor: int,
                      connection: Connection) -> None:
        """A journal's events from `cursor` on, read off the loop, then the stream's end."""
        from engine_adapter import read_journal

        def lines() -> list[bytes]:
            return [event.model_dump_json().encode()
                    for event in read_journal(journal, strict=False)
                    if event.seq >= cursor]

        for line in await asyncio.to_thread(lines):
            await connection.send_line(b'{"event":' + line + b"}\n")
        await connection.send({"end": run_id})

    def summaries(self) -> list[dict[str, Any]]:
        """Every run, lost ones first, then in the order they started."""
        return [*(record.summary() for record in self.lost.values()),
                *(run.summary() for run in self.runs.values())]

    async def _dispatch(self, op: str, message: dict[str, Any], connection: Connection,
                        followers: list[asyncio.Task[None]]) -> dict[str, Any]:
        if op == "status":
            return {"pid": os.getpid(), "since": self.since, "runs": self.summaries()}
        if op == "ps":
            return {"runs": self.summaries()}
        if op == "stop":
            self.request_stop()
            return {}
        if op == "start":
            return {"run": await self._start(message)}
        if op == "watch":
            followers.append(asyncio.create_task(self._watch(connection)))
            return {"pid": os.getpid(), "since": self.since}
        lost = self._lost(message)
        if lost is not None:
            return await self._answer_lost(op, lost, message, followers, connection)
        run = self._run(message)
        described = {"run": run.summary(), "approval_timeout": run.approval_timeout,
                     "tasks": len(run.journals)}
        if op == "describe":
            return described
        if op == "follow":
            cursor = message.get("cursor", 0)
            if not isinstance(cursor, int) or cursor < 0:
                raise ValueError("the cursor is the seq of the next event wanted: 0 or more")
            task = message.get("task")
            task = task if isinstance(task, int) and 1 <= task <= len(run.journals) \
                else len(run.journals)
            if run.released:  # (its events were let go: its journal has them all)
                followers.append(asyncio.create_task(self._replay(
                    run.id, run.journals[task - 1], cursor, connection)))
                return described
            session = run.sessions[task - 1]
            followers.append(asyncio.create_task(self._follow(run, session, cursor,
                                                              connection)))
            return {**described, "events": len(session.history)}  # (what the client reads first)
        if op == "turn":
            return {"task": await run.next_task(str(message.get("task") or ""))}
        session = run.session
        if op == LIST_OP:  # (a saved grant's file may be read again: a thread)
            return await asyncio.to_thread(listing, session.gate)
        if op == REVOKE_OP:  # (only ever removes: grants are made by answering an ask)
            return await asyncio.to_thread(revoke_listed, session.gate, message)
        if op == "resolve_approval":
            session.resolve_approval(str(message.get("approval_id", "")),
                                     allow=bool(message.get("allow")),
                                     remember=bool(message.get("remember")),
                                     scope=message.get("scope") or "session",
                                     reason=message.get("reason"))
            return {}
        if op == "answer_question":
            values = message.get("values")
            answered = session.answer_question(str(message.get("question_id", "")),
                                               message.get("action") or "accept",
                                               values if isinstance(values, dict) else None)
            return {"answered": answered}
        session.cancel(str(message.get("reason") or "cancelled"))  # op == "cancel"
        return {}

    async def _start(self, message: dict[str, Any]) -> str:
        if self._stopping.is_set():
            raise RuntimeError("the host is stopping")
        command = message.get("command")
        params = message.get("params")
        if command not in ("demo", "run") or not isinstance(params, dict):
            raise ValueError("start needs a command (demo or run) and its params")
        # Building a run reads files, copies a demo workspace and imports engines: a thread,
        # so the other runs and clients are served meanwhile.
        launched = await asyncio.to_thread(self.launch, str(command), params)
        if self._stopping.is_set():  # (stopped while it was being built)
            with contextlib.suppress(Exception):
                await HostRun(launched, records=record_dir()).close()
            raise RuntimeError("the host is stopping")
        run = HostRun(launched, records=record_dir(), changed=self.touch, ended=self._ended)
        self.runs[run.id] = run
        run.start()
        log.info("run %s started: %s", run.id, run.record.task[:200])
        return run.id

    # The fleet -----------------------------------------------------------------------------
    def touch(self) -> None:
        """Something a watcher shows changed: wake every watcher (they push at their pace)."""
        for changed in self._watchers:
            changed.set()

    def fleet(self) -> list[dict[str, Any]]:
        """Every run as the fleet view shows it (lost ones with no activity), lost first."""
        return [*({**record.summary(), "activity": None, "tokens": 0, "cost": None,
                   "asks": [], "tasks": 1} for record in self.lost.values()),
                *(run.fleet_row() for run in self.runs.values())]

    async def _watch(self, connection: Connection) -> None:
        changed = asyncio.Event()
        self._watchers.add(changed)
        try:
            while not connection.closed:
                changed.clear()
                await connection.send({"fleet": self.fleet()})
                await changed.wait()  # (an idle host: nothing is sent, nothing runs)
                await asyncio.sleep(WATCH_INTERVAL)  # what changed meanwhile goes in one push
        finally:
            self._watchers.discard(changed)

    def _ended(self, run: HostRun) -> None:
        """A run's task ended: its events are let go after `keep_ended` seconds, and at once
        for the oldest ended runs beyond `max_ended`."""
        loop = asyncio.get_running_loop()
        loop.call_later(self.keep_ended, self._release, run)
        held = sorted((r for r in self.runs.values()
                       if not r.live and not r.released and r.ended_at is not None),
                      key=lambda r: r.ended_at or 0.0)
        for old in held[:max(0, len(held) - self.max_ended)]:
            self._release(old)

    def _release(self, run: HostRun) -> None:
        if run.live or run.released or self._stopping.is_set():
            return
        task = asyncio.ensure_future(run.release())
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _follow(self, run: HostRun, session: Any, cursor: int,
                      connection: Connection) -> None:
        """A task's events from `cursor` on, read from its history (append-only, in `seq`
        order) in batches of at most `FOLLOW_BATCH` a write: a client far behind (attaching to
        a long run) catches up in a few hundred writes, not one a event. Caught up, it waits
        on the Session's own stream for the next event."""
        history = session.history
        position = cursor
        while not connection.closed:
            end = min(len(history), position + FOLLOW_BATCH)
            if position < end:
                batch = [history[index] for index in range(position, end)]
                await connection.send_line(b"".join(
                    b'{"event":' + event.model_dump_json().encode() + b"}\n"
                    for event in batch))
                position = end
                if batch[-1].type == "agent_end":
                    break
                continue
            waiting = session.events(position)
            try:
                if await anext(waiting, None) is None:
                    break  # (the stream ended: nothing more will come)
            finally:
                await waiting.aclose()
        await connection.send({"end": run.id})
