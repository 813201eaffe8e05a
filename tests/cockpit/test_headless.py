"""The headless line view: one line per event, untrusted text made safe, colour only on a
terminal."""

from __future__ import annotations

import io
import tempfile

import pytest
from support.event_loop import run

from cockpit.headless import (
    ASK_LINE,
    MAX_LINE,
    MESSAGE_CHARS,
    THOUGHT_CHARS,
    LinePrinter,
    approval_mode,
    format_event,
    run_headless,
    sanitize,
    use_color,
)
from cockpit.launch import RunOptions, start_demo
from engine_adapter import (
    AgentEnd,
    ApprovalRequested,
    ApprovalResolved,
    ModelUpdate,
    Session,
    TaskState,
    ToolEnd,
    ToolStart,
    TurnStart,
)


@pytest.fixture(autouse=True)
def cockpit_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def printed(*events, color: bool = False) -> list[str]:
    out = io.StringIO()
    printer = LinePrinter(out, color=color)
    for event in events:
        printer.handle(event)
    printer.close()
    return out.getvalue().splitlines()


@pytest.mark.parametrize(("raw", "shown"), [
    ("plain text", "plain text"),
    ("two\nlines\r\n\tand tab", "two lines  and tab"),
    ("over\rwrite", "over\\x0dwrite"),  # a lone CR would overwrite the line
    ("\x1b[2J\x1b]0;pwned\x07", "\\x1b[2J\\x1b]0;pwned\\x07"),
    ("del\x7f nul\x00 c1\x9b", "del\\x7f nul\\x00 c1\\x9b"),
    ("evil\u202etxt.exe", "evil\\u202etxt.exe"),  # a bidi override
    ("zero\u200bwidth", "zero\\u200bwidth"),
    ("line\u2028sep", "line\\u2028sep"),  # a line break only for some readers: shown
    ("no\xa0break\u3000wide", "no\xa0break\u3000wide"),  # spaces are visible: kept
    ("soft\xadhyphen bom\ufeff tag\U000e0041", "soft\\xadhyphen bom\\ufeff tag\\U000e0041"),
    ("⚠\ufe0f ok, x\ufe0f not", "⚠\ufe0f ok, x\\ufe0f not"),
    ("héllo 世界 ✔", "héllo 世界 ✔"),
])
def test_sanitize(raw, shown) -> None:
    assert sanitize(raw) == shown


def test_hostile_output_cannot_reach_the_terminal() -> None:
    nasty = "ok\n\x1b[31mred\x1b[0m\n\x1b]52;c;cGF3bmVk\x07"
    lines = printed(ToolEnd(call_id="c1", tool="shell", ok=False, output=nasty,
                            error="exit 1\x1b[2J"), color=False)
    assert len(lines) == 1
    assert "\x1b" not in lines[0] and "\x07" not in lines[0]
    assert "\\x1b" in lines[0]


def test_lines_are_capped() -> None:
    (line,) = printed(ToolEnd(call_id="c1", tool="shell", ok=False, output="", error="e" * 5000))
    assert len(line) < MAX_LINE + 40
    assert line.endswith("more characters dropped")
    stream = printed(*[ModelUpdate(turn=1, text="word " * 1000) for _ in range(10)])
    assert len(stream) == 1 and len(stream[0]) < MESSAGE_CHARS + 50
    assert stream[0].endswith("… 30,000 more characters dropped")
    thought = printed(ModelUpdate(turn=1, text="x\n" * 5000, channel="thought"))
    assert len(thought) == THOUGHT_CHARS // 2  # its line breaks kept, up to its cap
    assert thought[-1].endswith("… 4,000 more lines (8,000 characters) dropped")


def test_streamed_text_is_one_line_per_message() -> None:
    lines = printed(ModelUpdate(turn=1, text="I think", channel="thought"),
                    ModelUpdate(turn=1, text=" so.", channel="thought"),
                    ModelUpdate(turn=1, text="Hello"), ModelUpdate(turn=1, text=" world"),
                    TurnStart(turn=2), ModelUpdate(turn=2, text="Again"))
    assert lines == ["thinking  I think so.", "model     Hello world", "turn      2",
                     "model     Again"]


def test_colour_only_when_asked() -> None:
    events = (ToolStart(call_id="c1", tool="shell", tool_input={"command": "ls"}, tier=3),
              ToolEnd(call_id="c1", tool="shell", ok=True, output="a\nb\n"))
    assert not any("\x1b[" in line for line in printed(*events, color=False))
    assert all("\x1b[" in line for line in printed(*events, color=True)[1:])


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_use_color_needs_a_terminal_and_no_NO_COLOR(monkeypatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert not use_color(io.StringIO())
    assert use_color(FakeTTY())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(FakeTTY())


def test_asks_say_what_always_would_allow() -> None:
    def ask(tier: int, prefix: str, **verdict: object) -> str:
        return format_event(ApprovalRequested(
            approval_id="c1", tool="shell", reason="runs x", tool_input={"command": "x y"},
            tier=tier, prefix=prefix, **verdict))[1]

    # The Session's verdict, shown as it is (even where it disagrees with the prefix).
    assert ask(3, "x", grantable=True).endswith("[a] always would allow: x")
    assert ask(3, "x", grantable=False, ungrantable_reason="runs python3, an interpreter"
               ).endswith("[a] always: cannot be granted: runs python3, an interpreter")
    assert ask(4, "", grantable=False, ungrantable_reason="tier 4: destructive commands are "
               "asked every time").endswith("cannot be granted: tier 4: destructive commands "
                                            "are asked every time")
    # A journal written before the verdict travelled in the event: the prefix (and the tier).
    assert ask(3, "x").endswith("[a] always would allow: x")
    assert ask(3, "").endswith("[a] always: cannot be granted")
    assert ask(4, "x").endswith("[a] always: cannot be granted")
    label, text, _ = format_event(ApprovalResolved(approval_id="c1", tool="shell", allowed=True,
                                                   via="human", remember=True))
    assert (label, text) == ("allowed", "c1 shell: always allowed by you")


def test_approval_mode_lines() -> None:
    runner = object()
    assert "denied automatically" in approval_mode(
        Session(runner, TaskState(task="t"), unattended=True))  # type: ignore[arg-type]
    assert "tier 4 denied" in approval_mode(
        Session(runner, TaskState(task="t"), unattended=True,  # type: ignore[arg-type]
                auto_approve=True))
    assert approval_mode(Session(runner, TaskState(task="t"),  # type: ignore[arg-type]
                                 approval_timeout=5)).endswith("after 5 s")


def test_a_demo_run_prints_one_line_per_event(tmp_path) -> None:
    _, session = start_demo(speed=0, options=RunOptions(journal=tmp_path / "j.jsonl",
                                                        unattended=True, auto_approve=True))
    out = io.StringIO()
    state = run(run_headless(session, out=out, color=False))
    assert state.status == "completed"
    every = out.getvalue().splitlines()
    lines = [line for line in every if not line.startswith(" ")]  # indented: under a line
    history = list(session.history)
    streams = sum(1 for i, e in enumerate(history) if e.type == "model_update" and not (
        i and history[i - 1].type == "model_update" and history[i - 1].channel == e.channel))
    others = sum(1 for e in history if e.type != "model_update")
    assert len(lines) == 1 + streams + others  # + the approvals line at the top
    assert lines[0].startswith("cockpit   approvals:")
    assert lines[-1] == "end       completed"
    # The built-in engine's reply is not streamed: the end shows it, and what changed.
    assert every[-3:] == ["          reply:",
                          "          Fixed the off-by-one in stats.median() for an even number "
                          "of values.", "          changed stats/core.py  +1 −1"]
    assert all(len(line) < (ASK_LINE if line.startswith("ask ?") else MAX_LINE) + 60
               for line in lines)


def test_a_broken_printer_does_not_stop_the_run(tmp_path) -> None:
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    _, session = start_demo(speed=0, options=RunOptions(journal=tmp_path / "j.jsonl",
                                                        unattended=True, auto_approve=True))
    state = run(run_headless(session, out=Closed(), color=False))
    assert state.status == "completed"


def test_unknown_end_and_events_still_print() -> None:
    (line,) = printed(AgentEnd(status="failed", error="boom"))
    assert line == "end       failed: boom"


class _StalledOut(io.StringIO):
    """A stdout whose reader has stopped reading: every write blocks until released."""

    def __init__(self) -> None:
        super().__init__()
        import threading

        self.release = threading.Event()
        self.blocked = threading.Event()

    def write(self, text: str) -> int:
        self.blocked.set()
        self.release.wait()
        return super().write(text)

    def isatty(self) -> bool:
        return False


def test_a_reader_that_stops_reading_never_blocks_the_run() -> None:
    import asyncio

    from support.steps import StepRunner

    from cockpit.headless import run_headless
    from engine_adapter import ModelUpdate, Session, TaskState

    async def say(runner: StepRunner) -> None:
        runner.emit(ModelUpdate(text="chunk", turn=1))

    out = _StalledOut()

    async def main() -> tuple[str, str]:
        session = Session(StepRunner(*[say] * 500), TaskState(task="t"))
        printing = asyncio.create_task(run_headless(session, out=out))
        # The run ends while the printer is stuck in its first write...
        await asyncio.wait_for(_until_done(session), 30)
        assert out.blocked.is_set() and not printing.done()
        out.release.set()  # ...and once the reader reads again, every line arrives.
        state = await asyncio.wait_for(printing, 30)
        return state.status, out.getvalue()

    async def _until_done(session: Session) -> None:
        while not session.done:
            await asyncio.sleep(0)

    status, text = asyncio.run(main())
    assert status == "completed"
    # Nothing lost or reordered: the same lines as with a reader that never stalls.
    plain = io.StringIO()
    asyncio.run(run_headless(Session(StepRunner(*[say] * 500), TaskState(task="t")), out=plain))
    assert text == plain.getvalue() and "end       completed" in text


def test_model_text_keeps_its_line_breaks_as_indented_lines() -> None:
    lines = printed(ModelUpdate(turn=1, text="First line.\nSecond"), ModelUpdate(turn=1,
                    text=" line.\n\nAfter a blank.\n"), TurnStart(turn=2))
    assert lines == ["model     First line.", "          Second line.", "",
                     "          After a blank.", "turn      2"]
    # A line of model text cannot pass for an event's line: it is indented under its label.
    forged = printed(ModelUpdate(turn=1, text="ok\ntool ✔   c9 shell: all good"))
    assert forged == ["model     ok", "          tool ✔   c9 shell: all good"]


def test_a_failed_run_ends_with_its_error_then_stderr_then_the_partial_reply() -> None:
    end = AgentEnd(status="failed", result="about to crash",
                   error="the agent exited with code 3", stderr=["boom", "gave up"])
    streamed = printed(TurnStart(turn=1), ModelUpdate(turn=1, text="about to crash"), end)
    assert streamed[-4:] == [
        "end       failed: the agent exited with code 3 · the partial reply is above",
        "          last lines the agent wrote to stderr:", "            boom",
        "            gave up"]
    unstreamed = printed(TurnStart(turn=1), end)
    assert unstreamed[-6:] == [
        "end       failed: the agent exited with code 3",
        "          last lines the agent wrote to stderr:", "            boom",
        "            gave up", "          partial reply:", "          about to crash"]


def test_a_journal_write_failure_is_said_plainly() -> None:
    error = "journal write failed: [Errno 28] No space left on device"
    from engine_adapter import CancellationObserved

    lines = printed(CancellationObserved(reason=error),
                    AgentEnd(status="failed", error=error))
    assert lines == [f"stopping  {error}", f"end       failed: {error}"]


def test_the_end_lists_the_files_the_task_changed() -> None:
    from engine_adapter.files import unified_diff

    diff = unified_diff("a\n", "b\nc\n", "app.py")
    lines = printed(ToolStart(call_id="e1", tool="edit", tool_input={"path": "app.py",
                                                                      "diff": diff}, tier=2),
                    ToolEnd(call_id="e1", tool="edit", ok=True, output="edited app.py"),
                    ToolStart(call_id="e2", tool="edit", tool_input={"path": "b.py"}, tier=2),
                    ToolEnd(call_id="e2", tool="edit", ok=False, error="refused",
                            diff=unified_diff("x\n", "y\n", "b.py")),
                    AgentEnd(status="completed"))
    assert lines[-2:] == ["end       completed", "          changed app.py  +2 −1"]


def test_a_tool_duration_leaves_out_the_wait_for_you() -> None:
    def at(event, seq: int, ts: float):
        return event.model_copy(update={"seq": seq, "ts": ts})

    lines = printed(
        at(ToolStart(call_id="x1", tool="execute", tool_input={"command": "make"}, tier=3),
           0, 100.0),
        at(ApprovalRequested(approval_id="x1", tool="execute", reason="r", tier=3,
                             tool_input={"command": "make"}), 1, 100.1),
        at(ApprovalResolved(approval_id="x1", tool="execute", allowed=True, via="human"),
           2, 112.1),
        at(ToolEnd(call_id="x1", tool="execute", ok=True, output="ok",
                   duration_ms=12_400.0), 3, 112.5))
    assert lines[2] == "allowed   x1 execute: allowed by you after 12.0 s"
    assert lines[3] == "tool ✔    x1 execute 400 ms: ok"


def test_an_input_changed_after_approval_is_printed_with_both() -> None:
    from support.changed_input import changed_input_events

    lines = printed(*changed_input_events())
    line = next(line for line in lines if "input changed" in line)
    assert "⚠ input changed after you approved it (approved: $ ls)" in line
    assert "rm -rf ~/work" in line
