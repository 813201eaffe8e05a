"""An agent's earlier conversations: the sessions `cockpit sessions` lists (the agent's own list
where it offers `session/list`, else the sessions the local journals know) and what `cockpit
resume` continues (a journal's agent session, or an id the human names); `resume_problem`, why
the replay viewer cannot resume a journal's run.

A journal is untrusted: `resume` takes from it only the session id and the workspace, and the
agent only by its catalogue name. A command line written in a journal is never started — the
human names the agent (`--agent`) for anything the catalogue does not know.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cockpit.journals import JournalSummary, list_journals
from cockpit.launch.factory import SetupError
from cockpit.paths import in_journal_dir
from engine_adapter.events import format_ts

if TYPE_CHECKING:  # the ACP engine (and its SDK) is imported only when an agent is asked
    from engine_adapter.engines.acp import AcpRunner, AgentSpec

__all__ = [
    "KnownSession",
    "Resumable",
    "agent_sessions",
    "journal_sessions",
    "resumable",
    "resume_problem",
]

SCAN = 2000  # journals looked at, newest first


@dataclass(frozen=True)
class KnownSession:
    """One of an agent's sessions: where it was found ("agent": its `session/list`; "journal":
    a local journal), its id, agent, title, last activity, workspace, and journal if any."""

    session_id: str
    agent: str
    source: str
    title: str | None = None
    updated: str | None = None
    cwd: str | None = None
    journal: str | None = None


@dataclass(frozen=True)
class Resumable:
    """What `cockpit resume` continues: the agent session's id, its agent (a catalogue name,
    when the journal's agent is one), its workspace, and the journal it came from."""

    session_id: str
    agent: str | None
    cwd: str | None
    journal: Path | None

    def require_agent(self) -> str:
        """The agent to start: its catalogue name; `SetupError` when the journal names none
        (the human must: a command line is never taken from a journal)."""
        if self.agent is None:
            raise SetupError("the journal's agent is not in the catalogue: name it with --agent "
                             "\"COMMAND ARGS\" (cockpit never starts a command read from a "
                             "journal)")
        return self.agent

    def workspace(self) -> Path | None:
        """The journal's workspace, when the journal is one of this cockpit's own (in the
        journal folder) and the directory still exists; else None: here (or `--cwd`). A
        journal from elsewhere does not choose where the agent may read and write."""
        if not self.cwd or self.journal is None or not in_journal_dir(self.journal):
            return None
        path = Path(self.cwd)
        return path if path.is_absolute() and path.is_dir() else None


def resume_problem(journal: Path) -> str | None:
    """Why the run of `journal` cannot be resumed from the viewer (one line), or None."""
    try:
        resumable(journal, None).require_agent()
    except SetupError as exc:
        return str(exc).replace("name it with --agent", "resume it with `cockpit resume "
                                "JOURNAL --agent`, giving")
    return None


def _agent_of(engine: str | None) -> str:
    return (engine or "").removeprefix("acp:")


def _when(ts: float | None) -> str | None:
    return format_ts(ts, "%Y-%m-%dT%H:%M:%S") if ts else None


def _with_session(directory: Path | None = None) -> list[JournalSummary]:
    return [s for s in list_journals(directory, limit=SCAN)
            if s.facts.acp_session_id and (s.facts.agent or "").startswith("acp:")]


def journal_sessions(agent: str | None = None,
                     directory: Path | None = None) -> list[KnownSession]:
    """The agent sessions local journals know (of `agent` only, when given), newest first; a
    session continued over several journals is listed once, with its newest."""
    seen: dict[tuple[str, str], KnownSession] = {}
    for summary in _with_session(directory):
        facts = summary.facts
        name = _agent_of(facts.agent)
        if agent is not None and name != agent:
            continue
        key = (name, facts.acp_session_id or "")
        if key in seen:
            continue
        seen[key] = KnownSession(session_id=key[1], agent=name, source="journal",
                                 title=facts.title, updated=_when(summary.started),
                                 cwd=facts.cwd, journal=str(summary.path))
    return list(seen.values())


def agent_sessions(spec: AgentSpec, runner: AcpRunner,
                   cwd: str | None) -> list[KnownSession] | None:
    """The agent's own list (`session/list`, in `cwd` when given), each with its journal when
    one is known; None when the agent offers no list. Raises `SetupError` when the agent
    cannot be asked (its words)."""
    from engine_adapter.engines.acp import AgentFailure
    from engine_adapter.engines.acp.agent import SessionsNotOffered

    known = {s.session_id: s.journal for s in journal_sessions(spec.name)}

    async def ask() -> list[KnownSession] | None:
        try:
            listed = await runner.list_sessions(cwd)
        except SessionsNotOffered:
            return None
        except AgentFailure as exc:
            raise SetupError(f"cannot list {spec.name}'s sessions: {exc}") from None
        finally:
            await runner.close()
        return [KnownSession(session_id=s.session_id, agent=spec.name, source="agent",
                             title=s.title, updated=s.updated_at, cwd=s.cwd,
                             journal=known.get(s.session_id)) for s in listed]

    return asyncio.run(ask())


def resumable(journal: Path | None, agent: str | None) -> Resumable:
    """The conversation a journal holds (without one: the newest agent run's, of `agent` when
    given); `SetupError` when there is none."""
    if journal is not None:
        from cockpit.journals import summarize

        path = journal.expanduser()
        if not path.is_file():
            raise SetupError(f"no journal at {str(path)!r}; `cockpit journals --agent NAME` "
                             "lists agent runs")
        summary = summarize(path)
        if summary.foreign is not None:
            raise SetupError(summary.foreign.message(repr(str(path))))
        facts = summary.facts
        if not facts.acp_session_id or not (facts.agent or "").startswith("acp:"):
            raise SetupError(f"{str(path)!r} is not the journal of an agent (ACP) run with a "
                             "session: nothing to resume")
    else:
        from engine_adapter.engines.acp import load_catalogue

        catalogue = load_catalogue()
        # A catalogue name picks its runs; a command line, the runs of agents it does not know
        # (an agent's own name is known only once it has answered `initialize`).
        wanted = None if agent is None else agent if agent in catalogue else ""
        found = [s for s in _with_session() if wanted is None
                 or _agent_of(s.facts.agent) == wanted
                 or (wanted == "" and _agent_of(s.facts.agent) not in catalogue)]
        if not found:
            who = f"{agent} " if agent in catalogue else "agent "
            raise SetupError(f"no {who}run in the journals to resume; give JOURNAL, or "
                             "--agent NAME --session ID")
        summary = found[0]
        path, facts = summary.path, summary.facts
    from engine_adapter.engines.acp import load_catalogue

    name = _agent_of(facts.agent)
    return Resumable(session_id=facts.acp_session_id or "",
                     agent=name if name in load_catalogue() else None, cwd=facts.cwd,
                     journal=path)
