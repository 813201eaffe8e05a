"""A fake OpenAI-compatible server on 127.0.0.1: real HTTP, scripted streamed replies.

The tests (and bench/bench_model.py) start it in a thread with a list of replies; each
`POST /v1/chat/completions` takes the next one. A reply is a `Stream` of SSE chunks (made with
`chunks(...)`: text, reasoning, tool calls split anywhere, parallel calls, usage) that may be
slow to start, cut mid-way or held open, or an `Error` (any status and body). `GET /v1/models`
lists `models`. Every request body is kept in `requests`; `closed_early` is set when a client
leaves a stream before its end.

As a script it plays a whole run that fixes the sample project (for a look in a terminal):

    python tests/fakes/openai_fake/server.py --port 8765 [--pace 0.02]
    cockpit run "Fix the failing test" --model fake-model --base-url http://127.0.0.1:8765/v1 \
        --cwd <a copy of the sample project>
"""

from __future__ import annotations

import argparse
import itertools
import json
import select
import socket
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Error", "FakeOpenAI", "Raw", "Stream", "chunks", "sample_fix_replies"]

Call = tuple[str, Any]  # (function name, arguments: a dict, or raw text sent as is)


@dataclass
class Stream:
    """A streamed reply: `events` (chunk dicts) sent as SSE, then `data: [DONE]`.

    `delay`: seconds before the response starts (a slow server); `pace`: seconds between
    chunks; `cut_after`: close the connection abruptly after that many chunks; `hold_after`:
    after that many chunks, wait (until `FakeOpenAI.release` is set or the client leaves)."""

    events: list[dict[str, Any]]
    delay: float = 0.0
    pace: float = 0.0
    cut_after: int | None = None
    hold_after: int | None = None
    done: bool = True
    _frames: list[bytes] = field(default_factory=list, repr=False)

    def framed(self, number: int) -> bytes:
        """Event `number` as one HTTP chunk of one SSE event (made once, then reused)."""
        if not self._frames:
            self._frames = [_framed(b"data: " + json.dumps(e).encode() + b"\n\n")
                            for e in self.events]
        return self._frames[number]


def _framed(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@dataclass
class Error:
    """An error answer: `status` and a JSON `body` (the OpenAI shape by default)."""

    status: int
    message: str = "error"
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None

    def payload(self) -> bytes:
        body = self.body if self.body is not None else {
            "error": {"message": self.message, "type": "invalid_request_error", "code": None}}
        return json.dumps(body).encode() if not isinstance(body, bytes) else body


@dataclass
class Raw:
    """A hostile stream: the bytes `pieces()` yields, each sent as one HTTP chunk, until it ends
    or the client leaves (an endless generator is fine: the client must stop reading).
    `FakeOpenAI.sent` counts the bytes written."""

    pieces: Callable[[], Iterable[bytes]]


Reply = Stream | Error | Raw


def _pieces(text: str, parts: int) -> list[str]:
    """`text` cut into `parts` pieces at fixed, uneven places (some may be empty)."""
    if parts <= 1 or len(text) < 2:
        return [text]
    cuts = sorted({(len(text) * (2 * i + 1)) // (2 * parts + 1) for i in range(1, parts)})
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def chunks(text: str = "", *, reasoning: str = "", calls: Sequence[Call] = (),
           split: int = 3, interleave: bool = False, usage: tuple[int, int] | None = (120, 30),
           finish: str | None = None, model: str = "fake-model", text_pieces: int | None = None,
           ids: Sequence[str] | None = None, reasoning_key: str = "reasoning_content",
           ) -> list[dict[str, Any]]:
    """The chunks of one reply: reasoning, then text, then the tool calls (each id, name and
    arguments cut into `split` pieces; `interleave` alternates the pieces of parallel calls),
    the finish reason, and usage (a final chunk with no choices) unless `usage` is None."""
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                "model": model, "choices": [{"index": 0, "delta": delta,
                                             "finish_reason": finish_reason}]}

    out = [chunk({"role": "assistant", "content": ""})]
    for piece in _pieces(reasoning, text_pieces or max(1, len(reasoning) // 12)):
        if piece:
            out.append(chunk({reasoning_key: piece}))
    for piece in _pieces(text, text_pieces or max(1, len(text) // 12)):
        if piece:
            out.append(chunk({"content": piece}))
    streams: list[list[dict[str, Any]]] = []
    for index, (name, arguments) in enumerate(calls):
        call_id = ids[index] if ids else f"call_{index}_{zlib.crc32(name.encode()):08x}"
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        id_parts, name_parts = _pieces(call_id, min(split, 2)), _pieces(name, min(split, 2))
        arg_parts = _pieces(raw, split)
        steps = []
        for i in range(max(len(id_parts), len(name_parts), len(arg_parts))):
            delta: dict[str, Any] = {"index": index}
            if i < len(id_parts):
                delta["id"] = id_parts[i]
                delta["type"] = "function"
            function = {}
            if i < len(name_parts):
                function["name"] = name_parts[i]
            if i < len(arg_parts):
                function["arguments"] = arg_parts[i]
            delta["function"] = function
            steps.append(chunk({"tool_calls": [delta]}))
        streams.append(steps)
    if interleave:
        longest = max((len(s) for s in streams), default=0)
        out += [s[i] for i in range(longest) for s in streams if i < len(s)]
    else:
        out += [step for steps in streams for step in steps]
    out.append(chunk({}, finish or ("tool_calls" if calls else "stop")))
    if usage is not None:
        out.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                    "model": model, "choices": [],
                    "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                              "total_tokens": usage[0] + usage[1]}})
    return out


class FakeOpenAI:
    """The server. `replies`: the scripted replies in order, or a function of the request body
    (and the number of the request, from 0) that returns one."""

    def __init__(self, replies: Iterable[Reply] | Callable[[dict[str, Any], int], Reply] = (),
                 *, models: Sequence[dict[str, Any] | str] = ("fake-model",),
                 port: int = 0) -> None:
        self.script = replies if callable(replies) else list(replies)
        self.models = [m if isinstance(m, dict) else {"id": m} for m in models]
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        self.closed_early = threading.Event()
        self.holding = threading.Event()  # a held stream is waiting
        self.received = threading.Event()  # a chat request came in
        self.sent = 0  # bytes of `Raw` replies written
        self._lock = threading.Lock()
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL (ends in /v1)."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            number = len(self.requests)
            self.requests.append(body)
            self.received.set()
            if callable(self.script):
                return self.script(body, number)
            if number < len(self.script):
                return self.script[number]
        return Error(500, f"the fake server has no reply number {number + 1}")

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._json(200, {"object": "list", "data": [
                {"object": "model", "owned_by": "fake", "created": 0, **m}
                for m in self.server_fake.models]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        self.server_fake.headers.append(dict(self.headers))
        reply = self.server_fake.next_reply(body)
        if isinstance(reply, Error):
            self._send(reply.status, reply.payload(), reply.headers)
            return
        if isinstance(reply, Raw):
            self._raw(reply)
            return
        self._stream(reply)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode())

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(_framed(data))
        self.wfile.flush()

    def _stream(self, reply: Stream) -> None:
        fake = self.server_fake
        if reply.delay:
            fake.release.wait(reply.delay)  # a slow server (released early when stopped)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for number in range(len(reply.events)):
                if reply.cut_after is not None and number >= reply.cut_after:
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if number == reply.hold_after and self._hold():
                    return
                self.wfile.write(reply.framed(number))  # one write a chunk, as servers do
                self.wfile.flush()
                if reply.pace:
                    time.sleep(reply.pace)
            if reply.done:
                self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            fake.closed_early.set()
            self.close_connection = True

    def _raw(self, reply: Raw) -> None:
        fake = self.server_fake
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for piece in reply.pieces():
                if fake.release.is_set():  # the server is stopping
                    break
                self.wfile.write(_framed(piece))
                fake.sent += len(piece)
            self._chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            fake.closed_early.set()
        self.close_connection = True

    def _hold(self) -> bool:
        """Wait until released or the client leaves; True if it left."""
        fake = self.server_fake
        fake.holding.set()
        sock = self.connection
        while not fake.release.is_set():
            readable, _, _ = select.select([sock], [], [], 0.02)
            if readable:
                try:
                    gone = sock.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    gone = True
                if gone:
                    fake.closed_early.set()
                    self.close_connection = True
                    return True
        return False


# -- the sample project's fix, as a real model might play it -----------------------------------

def sample_fix_replies(python: str = "python", *, pace: float = 0.0) -> list[Reply]:
    """The replies that fix `sample_project` (engine_adapter/engines/builtin): look, run the
    tests, read the code, ask to edit, declare the checks, fix the off-by-one, finish."""
    def reply(text: str, calls: Sequence[Call], reasoning: str = "",
              usage: tuple[int, int] = (900, 60)) -> Stream:
        return Stream(chunks(text, reasoning=reasoning, calls=calls, usage=usage,
                             text_pieces=max(1, len(text) // 6)), pace=pace)

    old = "    return (ordered[mid] + ordered[mid + 1]) / 2\n"
    new = "    return (ordered[mid - 1] + ordered[mid]) / 2\n"
    return [
        reply("Let me look at the project and its README first.",
              [("list_dir", {"path": "."}), ("read_file", {"path": "README.md"})],
              reasoning="A new project: the layout and the README say how tests run."),
        reply("Running the test suite to see what fails.",
              [("shell", {"command": f"{python} -m unittest"})], usage=(1500, 40)),
        reply("`test_even_count` fails. Reading the test and `median()`.",
              [("read_file", {"path": "tests/test_core.py"}),
               ("read_file", {"path": "stats/core.py"})], usage=(2100, 50)),
        reply("For an even count `median()` averages `ordered[mid]` and `ordered[mid + 1]`: "
              "off by one. I'm asking to edit.",
              [("switch_to_editing", {"reason": "fix the off-by-one in median() "
                                                "(stats/core.py)"})],
              reasoning="The middle pair is ordered[mid - 1] and ordered[mid].",
              usage=(2600, 70)),
        reply("First the verification plan: the unit tests and the doctests.",
              [("declare_verification", {"checks": [
                  {"id": "unit-tests", "name": "unit tests", "command": f"{python} -m unittest"},
                  {"id": "doctests", "name": "doctests",
                   "command": f"{python} -m doctest stats/core.py"}]})], usage=(2800, 90)),
        reply("Now the fix.", [("edit", {"path": "stats/core.py", "old": old, "new": new})],
              usage=(3000, 80)),
        reply("Done.", [("finish", {"result": "Fixed the off-by-one in stats.median() for an "
                                              "even number of values."})], usage=(3200, 30)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server that plays "
                                     "the fix of the sample project.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--pace", type=float, default=0.03, help="seconds between chunks")
    parser.add_argument("--python", default=sys.executable, help="the python the checks run")
    args = parser.parse_args(argv)
    replies = sample_fix_replies(args.python, pace=args.pace)

    def play(body: dict[str, Any], number: int) -> Reply:
        said = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return replies[min(said, len(replies) - 1)]  # each new run starts from the top

    server = FakeOpenAI(play, port=args.port).start()
    print(f"fake OpenAI server at {server.url} (model: fake-model); Ctrl-C stops it", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
