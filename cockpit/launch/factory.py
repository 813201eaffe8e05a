"""The Sessions of one conversation, from the options a run was asked for.

- `RunOptions`: the journal, approval and sandbox options of a run; `SetupError`: what stops a
  run before it starts (one line for the user).
- `SessionFactory` builds the Sessions of one conversation: the same session id, the same
  grants (`SessionState.grants`), journals by one policy, the same approval options. Calling it
  with a task's text gives that task's `Session`; the live cockpit calls it for "next task",
  and `fresh()` for `/clear` (a new conversation, the grants kept).
- `make_sandbox`: where a conversation's commands run.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import pwd
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.journals import remember_journal
from cockpit.paths import (
    checkpoint_dir,
    config_dir,
    data_dir,
    free_journal_name,
    grants_dir,
    journal_dir,
    new_journal_path,
    own_paths,
)
from engine_adapter import GrantStore, JsonlEventJournal, Session, SessionState, TaskState
from engine_adapter.checkpoints import Checkpointer, CheckpointSettings, CheckpointStore
from engine_adapter.events import DEFAULT_MODE, PermissionMode
from engine_adapter.journal import writer_alive
from engine_adapter.sandbox import Sandbox, SandboxSettings

__all__ = [
    "ALLOW_HOME_FLAG",
    "RunOptions",
    "SessionFactory",
    "SetupError",
    "check_workspace",
    "make_sandbox",
]

ALLOW_HOME_FLAG = "--allow-home-workspace"
"""The flag that lets a run's workspace be `/`, a home folder or a folder holding one."""

# Makes the runner for a conversation's `index`-th task (1-based) from the task's text.
RunnerMaker = Callable[[str, int], Any]


class SetupError(Exception):
    """A run could not be set up (bad engine spec, bad directory); the message is one line for
    the user."""


@dataclass(frozen=True)
class RunOptions:
    """The journal and approval options shared by `cockpit run` and `cockpit demo`.

    `journal`: the first task's journal file (later tasks: `<stem>-<n><suffix>` beside it);
    `None` writes under the user's data directory. `policy`: an approval policy (`--policy`).
    `project`: the directory the run is in as the user named it (default: the workspace);
    its saved grants apply only when it is its own canonical path. `saved_grants`: read and
    keep saved grants and deny rules (in `grants_dir()`). `sandbox`: where the built-in
    engine's commands and an ACP agent's terminals run (`None`: `$COCKPIT_SANDBOX`, else
    `workspace-write`). `checkpoints`: checkpoint the workspace at each turn and at each run's
    end into `checkpoint_dir()` (`None`, or not `enabled`: none are taken).
    """

    journal: Path | None = None
    unattended: bool = False
    approval_timeout: float | None = None
    auto_approve: bool = False
    mode: PermissionMode = DEFAULT_MODE  # the permission mode the first task starts in
    policy: Any = None
    project: Path | None = None
    saved_grants: bool = True
    sandbox: SandboxSettings | None = None
    allow_home_workspace: bool = False
    checkpoints: CheckpointSettings | None = None


def _homes() -> list[str]:
    """The user's home folders, real paths: `$HOME` and the account's own."""
    homes = {os.path.realpath(os.path.expanduser("~"))}
    with contextlib.suppress(KeyError, OSError):
        homes.add(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    return sorted(h for h in homes if h)


def check_workspace(root: str | Path, *, allowed: bool = False) -> None:
    """A workspace may not be `/`, your home folder or a folder that holds it (as named or
    through links) unless `allowed` (`--allow-home-workspace`): a command there could change
    what runs at your next login. `SetupError` saying what and how otherwise."""
    if allowed:
        return
    real = os.path.realpath(root)
    shown = str(root)
    if real == "/":
        what = "the root of the file system"
    else:
        homes = [h for h in _homes() if h == real or h.startswith(real.rstrip("/") + "/")]
        if not homes:
            return
        what = ("your home folder" if homes[0] == real
                else f"a folder that holds your home folder {homes[0]}")
    via = f" ({real})" if real != os.path.abspath(shown) else ""
    raise SetupError(
        f"the workspace {shown!r}{via} is {what}: commands and file tools could change your "
        "shell start-up files, git and ssh settings and the cockpit's own; run in a project "
        f"folder (--cwd DIR), or pass {ALLOW_HOME_FLAG} to work there anyway (start-up files "
        "and the cockpit's settings then stay read-only)")


def make_sandbox(options: RunOptions, root: str | Path) -> Sandbox:
    """The sandbox of a conversation in `root`, checked: the options' settings, and the
    cockpit's own settings (saved grants among them) and journals read-only even when the
    workspace holds them. Refuses a workspace `check_workspace` refuses."""
    check_workspace(root, allowed=options.allow_home_workspace)
    own = [config_dir(), grants_dir(), data_dir()]
    workspace = os.path.realpath(root)
    for folder in own:
        # A folder that does not exist yet cannot be bound read-only: a sandboxed command
        # could make it (and write grants there). One inside the workspace is made first.
        if os.path.realpath(folder).startswith(workspace.rstrip(os.sep) + os.sep):
            with contextlib.suppress(OSError):
                folder.mkdir(parents=True, exist_ok=True)
    return Sandbox(options.sandbox, workspace=root, read_only=own).check()


def _holds_a_run(path: Path) -> bool:
    """Whether `path` is a regular file with something in it (a stream such as /dev/stdout, or
    an empty file, holds no run)."""
    try:
        held = path.is_file() and path.stat().st_size > 0
    except OSError:
        return False
    # One another run is writing now: opening it says so, naming that process (its lock).
    return held and not writer_alive(path)


def _journal_guard(path: Path, workspace: str) -> Path:
    """What keeps a journal safe from the run's own commands and file tools: its folder (so it
    can be neither rewritten, replaced nor moved away with its folder, and no journal of a
    later task planted beside it) when that lies inside the workspace, else the file alone (a
    folder that is or holds the workspace must stay writable). The folders above become mount
    points (`engine_adapter.sandbox.guards.mount_plan`): they cannot be moved away either."""
    folder = path.absolute().parent
    root = os.path.realpath(workspace)
    if os.path.realpath(folder).startswith(root.rstrip(os.sep) + os.sep):
        return folder
    return path.absolute()  # in the workspace's own folder, or outside it (read-only anyway)


class SessionFactory:
    """The Sessions of one conversation: call it with a task's text for that task's `Session`.

    Every Session shares `conversation.grants` (an `[a] always` holds for later tasks), the
    saved grants (`grant_store`), the approval policy and `session_id`, and gets its own
    journal (`journals` lists every path so far). `sandbox`: the one its runners' commands
    run in (each journal is kept read-only in it).
    """

    def __init__(self, make_runner: RunnerMaker, *, cwd: str | Path,
                 options: RunOptions = RunOptions(),
                 conversation: SessionState | None = None,
                 sandbox: Sandbox | None = None) -> None:
        check_workspace(cwd, allowed=options.allow_home_workspace)
        self.make_runner = make_runner
        self.cwd = str(cwd)
        self.options = options
        self.sandbox = sandbox
        self.agent = False  # an external agent's conversation (its process in `sandbox` too)
        self.conversation = conversation if conversation is not None else SessionState()
        self.journals: list[Path] = []
        self.sessions: list[Session] = []  # every Session made, in order
        self._runners: list[Any] = []  # each distinct runner made, for `aclose`
        self.grant_store: GrantStore | None = None
        if options.saved_grants:
            project = options.project if options.project is not None else self.cwd
            self.grant_store = GrantStore(grants_dir(), project=project, workspace=self.cwd)

    @property
    def session_id(self) -> str | None:
        return self.conversation.session_id

    @property
    def mode(self) -> PermissionMode:
        """The permission mode the next task starts in: the last task's (the mode key may have
        changed it), else `--mode`'s."""
        return self.sessions[-1].mode if self.sessions else self.options.mode

    def journal_path(self, index: int, session_id: str) -> Path:
        """Where the `index`-th task (1-based) writes its journal: never into one that holds
        a run already (a journal is one run). `--journal PATH` holding one is a `SetupError`
        (`check_journal_path` says so before anything starts); a later task writes
        `<stem>-<n>`, n its number, or the next name after it that does not exist yet."""
        chosen = self.options.journal
        if chosen is None:
            return new_journal_path(session_id if index == 1 else f"{session_id}-{index}")
        if index == 1 and not self.journals:  # (a later conversation's first: the next name)
            if _holds_a_run(chosen):
                raise SetupError(f"--journal {str(chosen)!r} already holds a run; a journal "
                                 "holds one run: give a new path, e.g. --journal "
                                 f"{str(free_journal_name(chosen))!r}")
            return chosen
        return free_journal_name(chosen, start=max(index, len(self.journals) + 1))

    def __call__(self, task: str) -> Session:
        conversation = self.conversation
        index = len(self.sessions) + 1  # (a rewind may have taken tasks out of the conversation)
        session_id = conversation.session_id or uuid.uuid4().hex[:12]
        runner = self.make_runner(task, index)
        if not any(r is runner for r in self._runners):
            self._runners.append(runner)
        path = self.journal_path(index, session_id)
        journal = JsonlEventJournal(path)  # a bad path: JournalError, before anything runs
        if path.parent.absolute() != journal_dir().absolute():
            remember_journal(path)  # so that listings find it (`cockpit.journals`)
        if self.sandbox is not None:
            self.sandbox.protect(_journal_guard(path, self.cwd))
        state = TaskState(task=task, cwd=self.cwd, earlier=tuple(conversation.tasks))
        options = self.options
        session = Session(runner, state, session_id=session_id, journal=journal,
                          grants=conversation.grants, unattended=options.unattended,
                          approval_timeout=options.approval_timeout,
                          auto_approve=options.auto_approve, grant_store=self.grant_store,
                          approval_policy=options.policy, checkpoints=self._checkpointer(path),
                          mode=self.mode)
        conversation.session_id = session_id
        conversation.tasks.append(state)
        self.journals.append(path)
        self.sessions.append(session)
        return session

    def rewind_note(self, task: int, turn: int) -> str:
        """What a rewind to the start of the `task`-th Session's (1-based) turn `turn` means
        for the conversation, one line for the user: the built-in engine continues from that
        turn; an agent keeps its own conversation, later turns and all (ACP's `session/fork`,
        unstable, copies a whole conversation: it cannot drop the later turns either)."""
        if not 1 <= task <= len(self.sessions):
            return ""
        if self.agent:
            return "the agent's own conversation still holds the later turns"
        if getattr(self.sessions[task - 1].runner, "engine", None) == "builtin":
            return f"the next task continues from the start of turn {turn}"
        return ("the next task is told the conversation was rewound (TaskState.rewound_to); "
                "what the engine remembers itself is its own")

    def rewound(self, task: int, turn: int) -> str:
        """The workspace was rewound to the start of the `task`-th Session's turn `turn`: the
        conversation goes back there too (`SessionState.rewind_to`); returns `rewind_note`."""
        if not 1 <= task <= len(self.sessions):
            return ""
        state = self.sessions[task - 1].state
        if not any(earlier is state for earlier in self.conversation.tasks):
            return "that task's conversation was cleared (/clear): the next task starts afresh"
        self.conversation.rewind_to(state, turn)
        return self.rewind_note(task, turn)

    def fresh(self) -> None:
        """Start a new conversation (`/clear`): the next call gives a Session with no earlier
        task, under a new session id, so its journals are new files that hold only the new
        conversation (`cockpit resume` of one continues that conversation alone). An external
        agent opens a new session (on the same process while it runs). The grants the human
        gave (`conversation.grants`, the same list) and the saved ones are kept."""
        self.conversation = SessionState(grants=self.conversation.grants)
        for runner in self._runners:
            renew = getattr(runner, "new_conversation", None)
            if callable(renew):
                renew()

    def _checkpointer(self, journal: Path) -> Checkpointer | None:
        """The checkpoints of the run writing `journal` (named by its file's stem)."""
        settings = self.options.checkpoints
        if settings is None or not settings.enabled:
            return None
        # The cockpit's own folders, and this journal (`--journal` may put it in the
        # workspace), are never recorded nor rewound.
        store = CheckpointStore(checkpoint_dir(), keep_out=(*own_paths(), journal))
        return Checkpointer(store, self.cwd, run=journal.stem, settings=settings)

    async def aclose(self) -> None:
        """Close every runner that can be closed (an ACP agent: its stdin is closed so it can
        exit on its own, then its process group is stopped). Call it once the conversation is
        over, in the event loop the runs used. Idempotent."""
        runners, self._runners = self._runners, []
        for runner in runners:
            close = getattr(runner, "close", None)
            if close is not None and inspect.iscoroutinefunction(close):
                await close()
