"""Where cockpit keeps its files: journals and workspace checkpoints under the user's data
directory, settings, user
themes and saved grants under the config directory. `COCKPIT_HOME` puts both under one folder
(tests, sandboxes)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import platformdirs

__all__ = [
    "checkpoint_dir",
    "config_dir",
    "data_dir",
    "free_journal_name",
    "grants_dir",
    "in_journal_dir",
    "journal_dir",
    "new_journal_path",
    "own_paths",
    "runtime_dir",
    "state_dir",
]


def _home() -> Path | None:
    home = os.environ.get("COCKPIT_HOME")
    return Path(home).expanduser() if home else None


def data_dir() -> Path:
    """The user's cockpit data directory (not created here)."""
    home = _home()
    return home / "data" if home else Path(platformdirs.user_data_dir("cockpit", appauthor=False))


def config_dir() -> Path:
    """The user's cockpit config directory: `config.toml` and a `themes/` folder."""
    home = _home()
    return home / "config" if home else Path(platformdirs.user_config_dir("cockpit",
                                                                          appauthor=False))


def state_dir() -> Path:
    """The user's cockpit state directory: the host's log and its record of runs."""
    home = _home()
    return home / "state" if home else Path(platformdirs.user_state_dir("cockpit",
                                                                        appauthor=False))


def runtime_dir() -> Path:
    """Where the host's socket and lock live: `$XDG_RUNTIME_DIR/cockpit` (a folder the user
    alone can enter, emptied at logout), else `<state dir>/run`; `COCKPIT_HOME/run` under
    `COCKPIT_HOME`, so the socket moves with every other path."""
    home = _home()
    if home:
        return home / "run"
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    return Path(runtime) / "cockpit" if runtime else state_dir() / "run"


def grants_dir() -> Path:
    """Where saved grants and deny rules live (`user.toml`, `projects/`): the config directory,
    never a workspace (see `engine_adapter.grants.store`)."""
    return config_dir() / "grants"


def journal_dir() -> Path:
    """Where runs write their journals unless `--journal` says otherwise."""
    return data_dir() / "journals"


def in_journal_dir(path: Path) -> bool:
    """Whether `path` is in the folder where this cockpit writes its journals (only such a
    journal may choose a workspace for `cockpit resume`)."""
    try:
        return path.resolve().parent == journal_dir().resolve()
    except OSError:
        return False


def checkpoint_dir() -> Path:
    """The checkpoint store of every run (`engine_adapter.checkpoints`): in the data directory,
    never in a workspace, read-only to the run's own commands (as the journals are)."""
    return data_dir() / "checkpoints"


def own_paths() -> list[Path]:
    """Every folder of the cockpit's own: `COCKPIT_HOME` (when set), the data (journals,
    checkpoints), state, runtime and config directories. A checkpoint of a workspace that holds
    one never records it, and a rewind never touches it (see `checkpoint_store`): the store
    would record itself at every turn, and a rewind would bring back old journals and grants."""
    home = _home()
    found = [home] if home is not None else []
    found += [data_dir(), journal_dir(), checkpoint_dir(), state_dir(), runtime_dir(),
              config_dir()]
    return found


def new_journal_path(session_id: str, *, now: float | None = None) -> Path:
    """A fresh journal path for a run: `<journal_dir>/<YYYYmmdd-HHMMSS>-<session_id>.jsonl`,
    so a plain listing sorts oldest first; never one that exists (a conversation resumed in the
    second it was journaled keeps its id: `<…>-2.jsonl`)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    path = journal_dir() / f"{stamp}-{session_id}.jsonl"
    return free_journal_name(path) if path.exists() or path.is_symlink() else path


def free_journal_name(path: Path, start: int = 2) -> Path:
    """The first `<stem>-<n><suffix>` beside `path` (n = `start`, `start` + 1, …) that does not
    exist yet (a dangling link counts as existing: a journal is never written through one)."""
    n = start
    while True:
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
        n += 1
