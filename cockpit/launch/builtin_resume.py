"""`cockpit resume JOURNAL` of a built-in engine's run: the conversation rebuilt from its journal
(the task, what the model said of it, how it ended: `SessionState.tasks` and the model's
messages), in the same workspace, continued by the next task.

A journal is untrusted: the workspace it names is used only when the journal is one of this
cockpit's own (in the journal folder) and the directory still exists (else `--cwd DIR`); what
the model said is put before the next task as the model's earlier reply, capped, never as an
instruction of the cockpit's. Its grants are not read (the saved ones apply as for any run). A
scripted model (the demo's) continues with the demo's follow-up script; a real model is the
one `--model` names, else the one the journal names, through the user's own providers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from cockpit.launch.factory import RunOptions, SessionFactory, SetupError, make_sandbox
from cockpit.paths import in_journal_dir
from engine_adapter import JournalError, SessionState, TaskState, read_journal
from engine_adapter.engines.builtin import demo_runner
from engine_adapter.engines.builtin.conversation import seed
from engine_adapter.engines.builtin.demo import FOLLOWUP_SCENARIO
from engine_adapter.events import AgentEnd, AgentStart, ModelUpdate

__all__ = ["BuiltinRun", "builtin_factory", "is_builtin_journal", "read_builtin_run"]

SAID_LIMIT = 20_000  # characters of the model's earlier text kept for it to read again
CHAIN_LIMIT = 20  # journals of earlier resumes followed back, at most
BUILTIN = "builtin"


@dataclass(frozen=True)
class BuiltinRun:
    """A built-in engine's run as its journal tells it: the journal, the conversation's session
    id, its task as it ended, what the model said, its model and workspace."""

    journal: Path
    session_id: str
    task: TaskState
    said: str = ""
    model: str | None = None
    cwd: str | None = None
    tasks: list[TaskState] = field(default_factory=list)
    """Every task of the conversation so far, this one last (a resumed run's earlier ones
    first, read from the journals it continues)."""
    exchanges: list[tuple[str, str]] = field(default_factory=list)
    """(task, what the model said) of each of `tasks`."""

    def workspace(self) -> Path | None:
        """The run's workspace, when the journal is one of this cockpit's own and the folder
        exists; None otherwise (see `builtin_factory`)."""
        if not self.cwd or not in_journal_dir(self.journal):
            return None
        path = Path(self.cwd)
        return path if path.is_absolute() and path.is_dir() else None


def is_builtin_journal(path: Path) -> bool:
    """Whether the journal at `path` starts a built-in engine's run (its first line)."""
    try:
        with open(path, "rb") as handle:
            first = json.loads(handle.readline(64 << 10))
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and first.get("type") == "agent_start" \
        and first.get("engine") == BUILTIN


def read_builtin_run(journal: Path, *, depth: int = 0) -> BuiltinRun:
    """The built-in run `journal` holds; `SetupError` in one line when it cannot be continued:
    damaged, not a built-in run, unended (crashed or still running), or ended failed. A run
    that itself continued another (`resumes`) brings that conversation's tasks first, when its
    journal is one of this cockpit's own and still reads (up to `CHAIN_LIMIT` journals)."""
    shown = repr(str(journal))
    start: AgentStart | None = None
    end: AgentEnd | None = None
    said: list[str] = []
    size = 0
    try:
        for event in read_journal(journal):
            if start is None:
                if not isinstance(event, AgentStart):
                    raise SetupError(f"{shown} does not start with a run's agent_start: it is "
                                     "not a cockpit journal of a run")
                start = event
            elif isinstance(event, ModelUpdate) and event.channel == "message":
                if size < SAID_LIMIT:
                    said.append(event.text[:SAID_LIMIT - size])
                    size += len(said[-1])
            elif isinstance(event, AgentEnd):
                end = event
    except JournalError as exc:
        raise SetupError(f"{shown} cannot be read to continue it: {exc} (`cockpit verify "
                         "JOURNAL` checks it)") from None
    except OSError as exc:
        raise SetupError(f"cannot read {shown}: {exc.strerror or exc}") from None
    if start is None:
        raise SetupError(f"{shown} holds no run: nothing to continue")
    if start.engine != BUILTIN:
        raise SetupError(f"{shown} is a run of {start.engine[:80]!r}, not of the built-in "
                         "engine nor of an agent (ACP) with a session: nothing to resume")
    if end is None:
        raise SetupError(f"{shown} ends without agent_end: its run crashed or is still running "
                         "(`cockpit journals` says which); only an ended run is continued")
    if end.status == "failed":
        why = (end.error or "no reason given").splitlines()[0][:200]
        raise SetupError(f"the run in {shown} ended failed ({why}): its conversation is not "
                         "continued; start a new one with `cockpit run TASK`")
    task = TaskState(task=start.task, status=end.status, result=end.result, error=end.error,
                     cwd=start.cwd)
    tasks, exchanges = [task], [(start.task, "".join(said))]
    before = _continued(start.resumes, journal, depth)
    if before is not None:
        tasks, exchanges = [*before.tasks, *tasks], [*before.exchanges, *exchanges]
    return BuiltinRun(journal=journal, session_id=start.session_id, task=task,
                      said=exchanges[-1][1], model=start.model, cwd=start.cwd, tasks=tasks,
                      exchanges=exchanges)


def _continued(resumes: str | None, journal: Path, depth: int) -> BuiltinRun | None:
    """The run `journal` continued, when it names one that is this cockpit's own and reads
    (else None: the conversation starts at `journal`)."""
    if not resumes or depth >= CHAIN_LIMIT:
        return None
    earlier = Path(resumes)
    if not in_journal_dir(earlier) or earlier.resolve() == journal.resolve():
        return None
    try:
        return read_builtin_run(earlier, depth=depth + 1)
    except SetupError:
        return None


def builtin_factory(run: BuiltinRun, *, cwd: Path | None, options: RunOptions,
                    model: str | None = None, speed: float = 1.0) -> SessionFactory:
    """The Sessions that continue `run`'s conversation: in `cwd`, else its own workspace (a
    gone one is a `SetupError`: the demo's is removed at its end); the same session id (so the
    next journal is the conversation's next), its task as the first of the conversation, and
    what the model said before the next task in what the model reads."""
    root = cwd if cwd is not None else run.workspace()
    if root is None:
        if run.cwd and not in_journal_dir(run.journal):
            raise SetupError(f"{str(run.journal)!r} is not in the cockpit's journal folder, so "
                             "its workspace is not taken from it: name it with --cwd DIR")
        gone = f" {run.cwd!r}" if run.cwd else ""
        raise SetupError(f"the workspace{gone} of this run is gone (a demo's workspace is "
                         "removed when the demo ends): nothing to continue in; give --cwd DIR "
                         "to continue elsewhere")
    if not root.is_dir():
        raise SetupError(f"--cwd {str(root)!r} is not a directory")
    root = root.resolve()
    conversation = SessionState(tasks=list(run.tasks), session_id=run.session_id)
    seed(conversation.tasks, run.exchanges, source=str(run.journal))
    wanted = model or run.model
    if model is None and (wanted or "").startswith("scripted"):
        sandbox = make_sandbox(options, root)

        def make_runner(_task: str, _index: int) -> object:
            return demo_runner(root, speed=speed, scenario=FOLLOWUP_SCENARIO, sandbox=sandbox)

        return SessionFactory(make_runner, cwd=root, options=options, sandbox=sandbox,
                              conversation=conversation)
    if not wanted:
        raise SetupError("the journal names no model: give --model NAME to continue")
    from cockpit.launch.models import model_factory

    return model_factory(wanted, cwd=root, options=options,
                         conversation=conversation)
