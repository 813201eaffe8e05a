"""What `cockpit replay`, `cockpit journals` and `cockpit export` do, behind the typer layer.

Each returns the process exit code and prints any problem as one line on stderr: the exit code
is non-zero only when nothing at all could be read.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TextIO

from cockpit.journals import (
    CRASHED,
    CRASHED_LEGEND,
    CRASHED_TEXT,
    JournalSummary,
    describe_length,
    list_journals,
    open_status,
)
from cockpit.paths import journal_dir
from engine_adapter import JournalError
from engine_adapter.events import format_ts
from engine_adapter.journal import JournalIndex
from engine_adapter.text import escaped, plural

__all__ = ["STATUSES", "check_journal", "list_recent", "matches", "print_lines", "run_export",
           "run_replay"]


_SPACES = re.compile(r"[ \t\r\n]+")  # only CR of a line break is left unescaped


def _printable(text: str, width: int | None = None) -> str:
    """`text` for one line of a listing: unsafe characters escaped (`\\x1b`, `\\u200b`, see
    `engine_adapter.text`), runs of spaces and line breaks as one space, cut to `width` with
    `…`."""
    text = _SPACES.sub(" ", escaped(text)).strip()
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text


def _error(message: str) -> None:
    print(f"cockpit: {message}", file=sys.stderr)


def check_journal(path: str) -> str | None:
    """Why `path` cannot be replayed at all (one line), or `None` when something is readable.

    A journal with some good events and some bad lines is readable: the viewer marks the gaps.
    """
    file = Path(path).expanduser()
    if not file.exists():
        return f"no journal at {path!r}; check the path, or run `cockpit journals` to list " \
               "recent ones"
    if file.is_dir():
        return f"{path!r} is a directory; give a journal file (.jsonl) inside it, e.g. " \
               "from `cockpit journals`"
    try:
        with JournalIndex(file) as index:
            index.scan(max_bytes=4 << 20)
            if not len(index):
                index.settle()
            if len(index) == 0:
                if index.size == 0:
                    return f"{path!r} is empty: there is nothing to replay yet (a run that " \
                           "just started writes its first event within a second)"
                return f"{path!r} has no journal events (torn or not a cockpit journal)"
            good = sum(1 for code in index.codes[:1000] if code != 0x3F)
            if not good and len(index) <= 1000:
                return f"{path!r} is not a cockpit journal: no line is an event " \
                       "(JSON Lines with a \"type\" field)"
    except JournalError as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot read {path!r}: {exc.strerror or exc}"
    return None


def print_lines(path: str, out: TextIO | None = None) -> int:
    """Print the run in `path` one line per event, as `--headless` shows a live run (for a pipe
    or a file: `cockpit replay J | less`). Returns the exit code."""
    from cockpit.headless import LinePrinter, use_color
    from engine_adapter.journal import read_journal

    out = out if out is not None else sys.stdout
    file = Path(path).expanduser()
    printer = LinePrinter(out, color=use_color(out))
    reader = read_journal(file, strict=False)
    ended = False
    try:
        for event in reader:
            printer.handle(event)
            ended = event.type == "agent_end"
        if not ended:
            status = open_status(file)
            printer.line("journal", CRASHED_TEXT if status == CRASHED else
                         "no final event yet: a run is still writing it (`cockpit replay` in a "
                         "terminal follows it)")
        printer.close()
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to show
        _silence_stdout()
        return 0
    finally:
        reader.close()
    for n in reader.bad_lines[:5]:
        _error(f"warning: line {n} of {path} is corrupt and was skipped")
    if reader.torn_tail:
        _error(f"warning: the last line of {path} was torn (a crash mid-write) and skipped")
    return 0


def _silence_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null, so the interpreter's last flush at exit
    does not print a BrokenPipeError of its own."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def run_replay(path: str | None, *, theme: str | None = None) -> int:
    """Open the viewer (or the picker without a path). Returns the exit code.

    Without a terminal (`cockpit replay J | cat`) the run is printed as lines instead, and
    without a path the recent journals are listed."""
    from cockpit.launch import use_tui

    if path is not None:
        problem = check_journal(path)
        if problem:
            _error(problem)
            return 1
    if not use_tui(False):
        if path is None:
            _error("no terminal for the picker: recent journals below; give one: "
                   "`cockpit replay PATH`")
            return list_recent()
        return print_lines(path)
    from cockpit.replay import ReplayApp

    try:
        app = ReplayApp(Path(path).expanduser() if path else None, theme=theme)
    except ValueError as exc:  # an unknown theme
        _error(str(exc))
        return 2
    result = app.run()
    from cockpit.launch import ResumeRequest

    if isinstance(result, ResumeRequest):  # `r`: continue the run shown, in the cockpit
        from cockpit.launch import resume_in_cockpit

        return resume_in_cockpit(result.journal, theme=theme)
    return 0


STATUSES = ("completed", "failed", "cancelled", "running", "crashed")
"""The run statuses `cockpit journals --status` takes ("running": no end yet and still being
written, or perhaps; "crashed": no end, and nothing writes it any more)."""


def _tokens(count: int) -> str:
    return f"{count / 1e6:.1f}M" if count >= 1e6 else f"{count / 1e3:.1f}k" if count >= 1e4 \
        else f"{count:,}"


def _agent_name(engine: str | None) -> str:
    return (engine or "").removeprefix("acp:")


def matches(summary: JournalSummary, *, agent: str | None = None, status: str | None = None,
            search: str | None = None) -> bool:
    """Whether a journal passes `cockpit journals`' filters: its agent (a catalogue name, or
    the engine as shown), its status, and TEXT in its task, its session's title or its path."""
    facts = summary.facts
    if agent is not None:
        wanted = agent.casefold()
        engine = (facts.agent or "").casefold()
        if wanted not in (engine, _agent_name(engine)):
            return False
    if status is not None and summary.status.rstrip("?") != status:
        return False
    if search is not None:
        text = search.casefold()
        if not any(text in (value or "").casefold() for value in (
                summary.task, facts.title, str(summary.path))):
            return False
    return True


def list_recent(limit: int = 20, *, agent: str | None = None, status: str | None = None,
                search: str | None = None) -> int:
    """Print recent journals (those passing the filters), newest first: start, status, agent,
    tokens and cost, the session's title or the task, path."""
    if status is not None and status not in STATUSES:
        _error(f"--status {status!r}: use one of {', '.join(STATUSES)}")
        return 2
    folder = journal_dir()
    filtered = agent is not None or status is not None or search is not None
    scan = sys.maxsize if not limit else max(limit * 10, 500) if filtered else limit  # 0: all
    summaries = [s for s in list_journals(folder, limit=scan)
                 if matches(s, agent=agent, status=status, search=search)][:limit or None]
    if not summaries:
        if filtered:
            print(f"no journal in {folder} matches")
        else:
            print(f"no journals in {folder} yet: `cockpit demo` writes one")
        return 0
    for s in summaries:
        facts = s.facts
        started = format_ts(s.started, "%Y-%m-%d %H:%M").ljust(16)
        events = (plural(s.events, "event") if s.exact and s.status != "unreadable"
                  else f"{describe_length(s)} events")
        spent = f"{_tokens(facts.input_tokens)}/{_tokens(facts.output_tokens)}"
        cost = f"${facts.cost_usd:.4f}" if facts.cost_usd is not None else "-"
        if not facts.complete:
            spent += "+"
        what = s.task or ""
        if facts.title:
            what = f"{facts.title} — {what}" if what else facts.title
        name = _printable(_agent_name(facts.agent), 18) or "-"
        print(f"{started}  {_printable(s.status, 10):<10} {name:<18} {spent:>13} {cost:>9} "
              f"{events:>16}  {_printable(what, 60):<60}  {_printable(str(s.path))}")
    if any(s.status == CRASHED for s in summaries):
        print(CRASHED_LEGEND)
    return 0


def run_export(path: str, fmt: str, output: str | None) -> int:
    """Write the report to `output` (or stdout)."""
    from cockpit.export import FORMATS, export_journal

    if fmt not in FORMATS:
        _error(f"unknown format {fmt!r}; use --format markdown or --format html")
        return 2
    problem = check_journal(path)
    if problem:
        _error(problem)
        return 1
    size = Path(path).expanduser().stat().st_size
    if size > 20_000_000:  # seconds of work: say so (on stderr, the report may be on stdout)
        print(f"reading {size / 1e6:,.0f} MB of journal…", file=sys.stderr, flush=True)
    result = export_journal(Path(path).expanduser(), fmt)
    if output:
        try:
            Path(output).write_text(result.text, encoding="utf-8")
        except OSError as exc:
            _error(f"cannot write {output!r}: {exc.strerror or exc}")
            return 1
        print(f"wrote {output} ({plural(result.events, 'event')})", file=sys.stderr)
    else:
        sys.stdout.write(result.text + "\n")
    for n in result.corrupt_lines[:5]:
        _error(f"warning: line {n} of {path} is corrupt and was skipped")
    if result.torn_tail:
        _error(f"warning: the last line of {path} was torn (a crash mid-write) and skipped")
    return 0
