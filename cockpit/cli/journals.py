"""The commands that read journals: `cockpit replay`, `cockpit journals` and `cockpit export`,
and what they do behind the typer layer.

Each returns the process exit code and prints any problem as one line on stderr: the exit code
is non-zero only when nothing at all could be read. Light at import (`cockpit --help` loads
it): the journal readers, the viewer and the exporters are imported by the command using them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from cockpit.cli.preflight import check_theme, user_errors, warn_config

if TYPE_CHECKING:
    from cockpit.journals import JournalSummary

__all__ = ["EXPORT_HELP", "REPLAY_HELP", "STATUSES", "check_agent_view", "check_journal",
           "export", "journals", "list_recent", "matches", "print_lines", "replay",
           "replay_agent_session", "resume_problem", "run_export", "run_replay"]


REPLAY_HELP = (
    "Review a run from its journal: step, jump, search and filter its events. A journal that "
    "is still being written is followed live (watch a running agent from a second terminal). "
    "Without JOURNAL: pick from recent journals. With --agent NAME --session ID: an agent's own "
    "past session, as the agent replays it. Keys: space play/pause, +/- speed, ←/→ one "
    "event, [ ] tool calls, { } approvals, e/E errors, home/end, / search (n/N), f filter, "
    "enter raw event, ? help, q quit.")
"""The help of `cockpit replay` (one paragraph: typer keeps a docstring's line breaks)."""

EXPORT_HELP = (
    "Write a readable report of a run: task, turns, tool calls (outputs trimmed), approvals "
    "with who decided, verification and usage. Exits non-zero only when nothing could be read.")
"""The help of `cockpit export`."""


def replay(
    journal: str | None = typer.Argument(
        None, help="The journal file (.jsonl). Without one: pick from recent journals."),
    theme: str | None = typer.Option(None, help="Theme name (default: the remembered one)."),
    agent: str | None = typer.Option(
        None, "--agent", metavar='NAME|"COMMAND ARGS"', help="With --session: view one of this "
        "agent's own past sessions (it replays it by session/load, in the sandbox; nothing "
        "else is sent to it)."),
    session: str | None = typer.Option(
        None, "--session", metavar="ID", help="The agent's session id (see `cockpit sessions "
        "--agent NAME`)."),
    cwd: Annotated[Path | None, typer.Option(
        "--cwd", metavar="DIR", help="With --agent: the directory the session was in "
        "(agents keep sessions by directory; default: here).")] = None,
) -> None:
    """Review a run from its journal (its help text, one paragraph: `REPLAY_HELP`)."""
    with user_errors():
        check_theme(theme)
        if agent is not None or session is not None or cwd is not None:
            check_agent_view(journal, agent, session)
    warn_config()
    if agent is not None and session is not None:
        raise typer.Exit(replay_agent_session(agent, session, cwd, theme=theme))
    raise typer.Exit(run_replay(journal, theme=theme))


def check_agent_view(journal: str | None, agent: str | None, session: str | None) -> None:
    """`--agent`, `--session` and `--cwd` go together, without a JOURNAL; `SetupError` says
    what is missing."""
    from cockpit.launch import SetupError

    if journal is not None:
        raise SetupError("give either JOURNAL or --agent NAME --session ID, not both")
    if agent is None and session is None:
        raise SetupError("--cwd DIR goes with --agent NAME --session ID (a journal's directory "
                         "is its own)")
    if agent is None:
        raise SetupError("--session ID needs --agent NAME (see `cockpit sessions --agent NAME`)")
    if session is None:
        raise SetupError(f"--agent {agent} needs --session ID: `cockpit sessions --agent "
                         f"{agent}` lists them")


def replay_agent_session(agent: str, session: str, cwd: Path | None, *,
                         theme: str | None = None) -> int:
    """Have `agent` load its session `session` (in `cwd`) into a journal of its own, then view
    it as any journal (lines without a terminal); the journal is a temporary file, gone on
    exit. Returns the exit code (2, with one line, when the session cannot be read)."""
    import tempfile

    from cockpit.launch import read_agent_session

    with tempfile.TemporaryDirectory(prefix="cockpit-agent-session-") as folder:
        with user_errors():
            path = read_agent_session(agent, session, cwd=cwd,
                                      journal=Path(folder) / "session.jsonl",
                                      say=lambda text: typer.echo(text, err=True))
        return run_replay(str(path), theme=theme)


def journals(
    limit: int = typer.Option(20, help="How many to list (newest first); 0 lists all."),
    agent: str | None = typer.Option(
        None, "--agent", metavar="NAME", help="Only runs of this agent (codex, claude, gemini, "
        "an agent's own name) or engine."),
    status: str | None = typer.Option(
        None, "--status", metavar="STATUS", help="Only runs that ended so: completed, failed, "
        "cancelled; running (no end yet), or crashed (no end, nothing writes it)."),
    search: str | None = typer.Option(
        None, "--search", metavar="TEXT", help="Only runs whose task, session title or path "
        "holds TEXT (any case)."),
) -> None:
    """List recent journals: start, status, agent, tokens, cost, title, task, events, path."""
    from cockpit.launch import check_limit

    with user_errors():
        check_limit("--limit", limit)
    raise typer.Exit(list_recent(limit, agent=agent, status=status, search=search))


def export(
    journal: str = typer.Argument(..., help="The journal file (.jsonl) to report on."),
    format: str = typer.Option("markdown", "--format", "-f",
                               help="markdown or html."),
    output: str | None = typer.Option(None, "--output", "-o",
                                      help="Write here instead of standard output."),
) -> None:
    """Write a report of a run (its help text, one paragraph: `EXPORT_HELP`)."""
    raise typer.Exit(run_export(journal, format, output))


def _error(message: str) -> None:
    print(f"cockpit: {message}", file=sys.stderr)


def check_journal(path: str) -> str | None:
    """Why `path` cannot be replayed at all (one line), or `None` when something is readable.

    A journal with some good events and some bad lines is readable: the viewer marks the gaps.
    Another tool's session file (Claude Code, Codex, Gemini CLI, inspect_ai) is named as such,
    with how to view it.
    """
    from engine_adapter import JournalError
    from engine_adapter.journal import JournalIndex, detect_foreign

    file = Path(path).expanduser()
    if not file.exists():
        return f"no journal at {path!r}; check the path, or run `cockpit journals` to list " \
               "recent ones"
    if file.is_dir():
        return f"{path!r} is a directory; give a journal file (.jsonl) inside it, e.g. " \
               "from `cockpit journals`"
    foreign = detect_foreign(file)  # another tool's session: say what it is, and how to view it
    if foreign is not None:
        return foreign.message(repr(path))
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
    from cockpit.journals import CRASHED, CRASHED_TEXT, open_status
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
    from cockpit.cli.run import use_tui

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
    from cockpit.replay import ReplayApp, ResumeRequest

    try:
        app = ReplayApp(Path(path).expanduser() if path else None, theme=theme,
                        resume_check=resume_problem)
    except ValueError as exc:  # an unknown theme
        _error(str(exc))
        return 2
    result = app.run()
    if isinstance(result, ResumeRequest):  # `r`: continue the run shown, in the cockpit
        from cockpit.cli.conversations import resume_in_cockpit

        return resume_in_cockpit(result.journal, theme=theme)
    return 0


def resume_problem(journal: Path) -> str | None:
    """Why the viewer cannot resume the run of `journal` (one line), or None: the resume check
    the viewer is handed (launch, which knows, is loaded only when `r` is pressed)."""
    from cockpit.launch import resume_problem as problem

    return problem(journal)


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
    from cockpit.journals import (
        CRASHED,
        CRASHED_LEGEND,
        describe_length,
        list_journals,
    )
    from cockpit.paths import journal_dir
    from engine_adapter.events import format_ts
    from engine_adapter.text import plural, printable

    if status is not None and status not in STATUSES:
        _error(f"--status {status!r}: use one of {', '.join(STATUSES)}")
        return 2
    folder = journal_dir()
    filtered = agent is not None or status is not None or search is not None
    scan = sys.maxsize if not limit else max(limit * 10, 500) if filtered else limit  # 0: all
    summaries = [s for s in list_journals(limit=scan)
                 if matches(s, agent=agent, status=status, search=search)][:limit or None]
    if not summaries:
        if filtered:
            print(f"no journal in {folder} matches")
        else:
            print(f"no journals in {folder} yet: `cockpit demo` writes one")
        return 0
    print(f"{'started':<16}  {'status':<10} {'agent':<18} {'tokens in/out':>13} {'cost':>9} "
          f"{'events':>16}  {'task':<60}  path")
    for s in summaries:
        facts = s.facts
        started = format_ts(s.started, "%Y-%m-%d %H:%M").ljust(16)
        events = (plural(s.events, "event") if s.exact and s.status != "unreadable"
                  else f"{describe_length(s)} events")
        spent = (f"{_tokens(facts.input_tokens)}/{_tokens(facts.output_tokens)}"
                 if facts.tokens_reported else "unknown")
        cost = f"${facts.cost_usd:.4f}" if facts.cost_usd is not None else "-"
        if not facts.complete:
            spent += "+"
        what = s.task or ""
        if facts.title:
            what = f"{facts.title} — {what}" if what else facts.title
        name = printable(_agent_name(facts.agent), 18) or "-"
        print(f"{started}  {printable(s.status, 10):<10} {name:<18} {spent:>13} {cost:>9} "
              f"{events:>16}  {printable(what, 60):<60}  {printable(str(s.path))}")
    if any(s.status == CRASHED for s in summaries):
        print(CRASHED_LEGEND)
    return 0


def run_export(path: str, fmt: str, output: str | None) -> int:
    """Write the report to `output` (or stdout)."""
    from cockpit.export import FORMATS, export_journal
    from engine_adapter.text import plural

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
    if result.changed:
        _error(f"warning: {path} was changed after the run: {result.chain}")
    return 0
