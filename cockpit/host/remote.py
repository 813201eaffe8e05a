"""`RemoteSession`: a run in the host, with the surface of a `Session` that the live cockpit
binds to — `events()`, `history`, `run()`, `done`, `resolve_approval`, `answer_question`,
`cancel`, and a `gate` whose grants are listed and revoked in the host — so `CockpitApp`
shows and steers it as it does a local one.

It is the client-side fold's source of the seed design: it follows the host's events from a
cursor (the journal's `seq`: the next one it lacks) into its own `history`, reconnects with
that cursor when the connection drops (nothing lost, nothing doubled), and sends back only
answers, cancels and the next task (`next_task`, the `next_session` the live app takes: a
coroutine, so the app's loop goes on while the host is asked). `conversation()` is every task
of a run, one `RemoteSession` a task: the live app shows the earlier ones before the current
one, as the embedded cockpit shows a conversation. `detach()` lets go of the run; it goes on
in the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.host import grants as wire_grants
from cockpit.host.grants import entry_from_wire
from cockpit.host.places import socket_path
from cockpit.host.stream import HostStream
from cockpit.host.wire import WireError, decode, encode
from engine_adapter import HarnessEvent, TaskState, parse_event
from engine_adapter.grants import GrantEntry, GrantFileError

__all__ = ["CATCH_UP_SECONDS", "RECONNECT_SECONDS", "RemoteGate", "RemoteJournal", "RemoteSession",
           "RemoteStore"]

log = logging.getLogger(__name__)

RECONNECT_SECONDS = 20.0
"""How long a dropped connection is tried again (a host being restarted) before giving up."""
CATCH_UP_SECONDS = 0.25
"""While the events the run had when the follow began are read (its backlog), the most often
the app is woken to draw them (each time it draws the whole run so far: drawn a frame at a
time, a 100k-event run's backlog took 5–14 s to reach the screen, most of it spent drawing
states long gone)."""

_EVENT_PREFIX = b'{"event":'


@dataclass
class RemoteStore:
    """Where the host keeps the run's saved grants, as the grants screen names them."""

    directory: Path
    project: str | None
    problems: list[str] = field(default_factory=list)


_UPDATE_HOST = "update the cockpit on the host"


class RemoteGate:
    """The grants side of an attached run: they live in the host's Session, so this gate
    offers every scope (the host's gate decides, `resolve_approval(..., scope=)`), and lists
    and revokes over the wire with the embedded gate's names: `entries()` is what was last
    listed (never a wait), `fetch()` lists again, `revoke()` removes one; both block (the host
    may be behind ssh): the grants screen calls them in a worker thread."""

    def __init__(self, run_id: str, path: Path, via: str | None) -> None:
        self.run_id = run_id
        self.path = path
        self.via = via
        self.store: RemoteStore | None = None
        self.problems: list[str] = []
        self._entries: list[GrantEntry] = []

    def entries(self) -> list[GrantEntry]:
        """The grants and deny rules in force, as the host last listed them."""
        return list(self._entries)

    def _request(self, op: str, **fields: Any) -> dict[str, Any]:
        from cockpit.host.client import HostClient, HostError

        try:
            with HostClient.connect(self.path if self.via is None else None,
                                    via=self.via) as client:
                return client.request(op, run=self.run_id, **fields)
        except HostError as exc:
            if "unknown request" in str(exc):
                raise GrantFileError("this host shows no grants to a client: "
                                     f"{_UPDATE_HOST}") from None
            raise GrantFileError(str(exc)) from None

    def fetch(self) -> list[GrantEntry]:
        """List the run's grants in the host again (blocking); `GrantFileError` (one line) if
        the host cannot be asked or refuses."""
        reply = self._request(wire_grants.LIST_OP)
        listed = reply.get("entries")
        found = [entry_from_wire(e) for e in listed] if isinstance(listed, list) else []
        self._entries = [e for e in found if e is not None]
        where = reply.get("store")
        if isinstance(where, dict) and isinstance(where.get("directory"), str):
            project = where.get("project")
            self.store = RemoteStore(Path(where["directory"]),
                                     project if isinstance(project, str) else None)
        else:
            self.store = None
        problems = reply.get("problems")
        self.problems = [str(p) for p in problems] if isinstance(problems, list) else []
        return self.entries()

    def unavailable(self, scope: str) -> str | None:
        """Every scope may be asked for; the host refuses what it cannot keep."""
        return None

    def on_problem(self, callback: Any) -> None:
        """Problems with saved grants are the host's (its log, and `fetch()`'s problems)."""

    def revoke(self, entry: GrantEntry) -> GrantEntry:
        """Revoke a listed entry in the host (blocking), if its id still names it there; the
        list is read again after. `GrantFileError` (one line) says why not."""
        reply = self._request(wire_grants.REVOKE_OP, grant_id=entry.key, kind=entry.kind,
                              tool=entry.tool, prefix=entry.prefix)
        gone = entry_from_wire(reply.get("revoked")) or entry
        with contextlib.suppress(GrantFileError):  # (the revoke is done; the list may lag)
            self.fetch()
        return gone


class RemoteJournal:
    """Where the host writes the run's journal (`path`, as the end panel shows it)."""

    def __init__(self, path: str) -> None:
        self.path = Path(path) if path else None


class RemoteSession:
    """A host's run, followed and answered over the host's socket.

    Args:
        run_id: The run (its id, or a prefix `cockpit ps` shows).
        path: The host's socket (default: `places.socket_path()`).
        via: A command whose stdio reaches the host instead (`cockpit.host.via`).
        describe: The host's `describe` reply for the run (its summary, approval timeout and
            number of tasks), read by the caller before the app is built.
        task: Which task of the run's conversation to follow (1-based; default: its last).
    """

    def __init__(self, run_id: str, describe: dict[str, Any], *,
                 path: Path | None = None, via: str | None = None,
                 task: int | None = None) -> None:
        summary = describe.get("run") or {}
        tasks = describe.get("tasks")
        self.task = task if task is not None else tasks if isinstance(tasks, int) else None
        self.session_id = str(summary.get("id") or run_id)
        self.path = path if path is not None else socket_path()
        self.via = via
        self.state = TaskState(task=str(summary.get("task", "")))
        self.journal = RemoteJournal(str(summary.get("journal", "")))
        self.gate = RemoteGate(self.session_id, self.path, via)
        self.runner: Any = None
        self.journal_error: str | None = None
        self.unattended = False
        self.auto_approve = False
        self.detachable = True
        timeout = describe.get("approval_timeout")
        self.approval_timeout: float | None = float(timeout) if timeout is not None else None
        self._history: list[HarnessEvent] = []
        self._waiters: list[asyncio.Future[None]] = []
        self._backlog = 0  # the seq the host had reached when the follow began
        self._woken = -math.inf  # loop time of the last wake-up while the backlog is read
        self._ended = False
        self._closed = False
        self._detached = asyncio.Event()
        self._outbox: list[dict[str, Any]] = []  # answers made while disconnected
        self._writer: asyncio.StreamWriter | None = None
        self.lost: str | None = None  # why the host could not be reached any more

    # Observation ---------------------------------------------------------------------------
    @property
    def history(self) -> Sequence[HarnessEvent]:
        """Every event of the run received so far, in `seq` order, from 0."""
        return self._history

    @property
    def done(self) -> bool:
        """Whether the run has ended (its `agent_end` arrived)."""
        return self._ended

    @property
    def cursor(self) -> int:
        """The seq of the next event wanted."""
        return len(self._history)

    def events(self, start: int = 0) -> AsyncIterator[HarnessEvent]:
        """A new stream of the run's events from `start`, ending after `agent_end` (or when
        this client detaches or loses the host)."""
        return self._follow(start)

    async def _follow(self, position: int) -> AsyncIterator[HarnessEvent]:
        while True:
            if position < len(self._history):
                event = self._history[position]
                position += 1
                yield event
                if event.type == "agent_end":
                    return
            elif self._closed:
                return
            else:
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.append(waiter)
                await waiter

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _receive(self, event: HarnessEvent) -> None:
        if event.seq != len(self._history):  # a doubled or early line: the cursor says
            return
        self._history.append(event)
        if len(self._history) < self._backlog and event.type != "agent_end":
            # The backlog: its first events wake the app at once (its first frame shows the
            # run), the rest at most every `CATCH_UP_SECONDS`, its last one at once.
            now = asyncio.get_running_loop().time()
            if now - self._woken < CATCH_UP_SECONDS:
                return
            self._woken = now
        if event.type == "agent_end":
            self._ended = True
            self.state.status = getattr(event, "status", "failed")
            self.state.result = getattr(event, "result", None)
            self.state.error = getattr(event, "error", None)
        elif event.type == "agent_start":  # (the run's summary names its first task only)
            self.state.task = getattr(event, "task", self.state.task)
            if self.state.cwd is None:
                self.state.cwd = getattr(event, "cwd", None)
        self._wake()

    # Control -------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        message = {"run": self.session_id, **message}
        writer = self._writer
        if writer is None or writer.is_closing():
            self._outbox.append(message)
            return
        try:
            writer.write(encode(message))
        except (ConnectionError, OSError):
            self._outbox.append(message)

    def resolve_approval(self, approval_id: str, *, allow: bool, remember: bool = False,
                         scope: str = "session", reason: str | None = None) -> None:
        """Answer an ask by its id (the host's Session decides; a stale id does nothing)."""
        self._send({"op": "resolve_approval", "approval_id": approval_id, "allow": allow,
                    "remember": remember, "scope": scope, "reason": reason})

    def answer_question(self, question_id: str, action: str = "accept",
                        values: dict[str, Any] | None = None) -> bool:
        """Answer the agent's question (the host checks the values against its fields)."""
        self._send({"op": "answer_question", "question_id": question_id, "action": action,
                    "values": values})
        return True

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel the run in the host (every client sees it end)."""
        if not self._ended:
            self._send({"op": "cancel", "reason": reason})

    async def next_task(self, text: str) -> RemoteSession:
        """Start the conversation's next task in the host (the host builds its Session as the
        embedded cockpit does) and follow it: the live app's `next_session`, awaited in a worker
        (the host may be slow or behind ssh: the app's loop goes on meanwhile). `HostError`
        (one line) if the host refuses, e.g. while the current task runs, or cannot be
        reached."""
        from cockpit.host.client import HostError

        try:
            stream = await HostStream.open(self.path, self.via)
        except OSError as exc:  # (ConnectionError too: the other side is no host)
            raise HostError(f"cannot reach the host: {exc.strerror or exc}") from None
        try:
            try:
                reply = await _request(stream, "turn", run=self.session_id, task=text)
            except HostError as exc:
                if "unknown request" in str(exc):
                    raise HostError("this host takes no next task from a client: update the "
                                    "cockpit on the host") from None
                raise
            described = await _request(stream, "describe", run=self.session_id)
        finally:
            await stream.close()
        session = RemoteSession(self.session_id, described, path=self.path, via=self.via,
                                task=int(reply["task"]))
        session.state.task = text  # (the run's summary names its first task)
        return session

    @classmethod
    def conversation(cls, run_id: str, describe: dict[str, Any], *, path: Path | None = None,
                     via: str | None = None) -> list[RemoteSession]:
        """Every task of the run as `describe` counts them, in order, one `RemoteSession`
        each: the earlier ones have ended (each `run()` reads its events to its end), the last
        is the one that may be live. One session for a host that does not count tasks."""
        tasks = describe.get("tasks")
        count = tasks if isinstance(tasks, int) and not isinstance(tasks, bool) \
            and tasks > 0 else 1
        return [cls(run_id, describe, path=path, via=via,
                    task=task if count > 1 else None) for task in range(1, count + 1)]

    def detach(self) -> None:
        """Let go of the run: `run()` returns, the run goes on in the host."""
        self._detached.set()

    # Following -----------------------------------------------------------------------------
    def _over(self) -> bool:
        """Whether following is over: the run ended, or this client let go of it."""
        return self._ended or self._detached.is_set()

    async def run(self) -> TaskState:
        """Follow the run until its end, this client detaches, or the host cannot be reached
        for `RECONNECT_SECONDS`; returns what is known of the task."""
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        delay = 0.05
        try:
            while not self._over():
                try:
                    await self._follow_once()
                    deadline, delay = None, 0.05
                except (OSError, ValueError, LookupError) as exc:
                    log.info("connection to the host dropped: %s", exc)
                    if isinstance(exc, LookupError):
                        self.lost = str(exc)
                        break
                if self._over():
                    break
                if deadline is None:
                    deadline = loop.time() + RECONNECT_SECONDS
                if loop.time() > deadline:
                    self.lost = "the host cannot be reached"
                    break
                # (a pause between tries of a host that is restarting; cut short by detach)
                with contextlib.suppress(TimeoutError):  # (not wait_for: it can lose a cancel)
                    async with asyncio.timeout(delay):
                        await self._detached.wait()
                delay = min(delay * 2, 1.0)
        finally:
            self._closed = True
            self._wake()
        return self.state

    async def _follow_once(self) -> None:
        stream = await HostStream.open(self.path, self.via)
        try:
            follow = {"op": "follow", "id": "follow", "run": self.session_id,
                      "cursor": self.cursor}
            if self.task is not None:
                follow["task"] = self.task
            stream.write(follow)
            self._writer = stream.writer
            outbox, self._outbox = self._outbox, []
            for message in outbox:
                stream.write(message)
            detached = asyncio.ensure_future(self._detached.wait())
            try:
                while True:
                    lines = asyncio.ensure_future(stream.readlines())
                    finished, _ = await asyncio.wait({lines, detached},
                                                     return_when=asyncio.FIRST_COMPLETED)
                    if lines not in finished:
                        lines.cancel()
                        return
                    for line in lines.result():
                        if self._handle(line):
                            return
            finally:
                detached.cancel()
        finally:
            self._writer = None
            self._wake()  # (what was read is drawn, paced or not, while it reconnects)
            await stream.close()

    def _handle(self, line: bytes) -> bool:
        """One line from the host; True once the run's stream has ended."""
        if line.startswith(_EVENT_PREFIX):
            body = line.rstrip()[len(_EVENT_PREFIX):-1]
            self._receive(parse_event(body))
            return False
        message = decode(line)
        if "end" in message:
            return True
        if message.get("id") == "follow":
            if not message.get("ok"):
                raise LookupError(str(message.get("error")
                                      or "the host refused to follow the run"))
            backlog = message.get("events")  # (a host older than it sends none: no pacing)
            if isinstance(backlog, int) and not isinstance(backlog, bool):
                self._backlog = backlog
            return False
        if message.get("ok") is False:
            log.info("the host refused a request: %s", message.get("error"))
        return False



async def _request(stream: HostStream, op: str, **fields: Any) -> dict[str, Any]:
    """One request on `stream` and its reply (lines that are not its reply are skipped);
    `HostError` with the host's words if it failed, or if the host hung up."""
    from cockpit.host.client import HostError

    stream.write({"op": op, "id": op, **fields})
    while True:
        try:
            reply = decode(await stream.readline())
        except OSError as exc:
            raise HostError(f"the host went away: {exc.strerror or exc}") from None
        except WireError as exc:
            raise HostError(f"the host sent a bad line: {exc}") from None
        if reply.get("id") == op:
            break
    if not reply.get("ok"):
        raise HostError(str(reply.get("error") or "the host refused the request"))
    return reply
