"""Where cockpit keeps its files: journals and workspace checkpoints under the user's data
directory, settings, user
themes and saved grants under the config directory. `COCKPIT_HOME` puts both under one folder
(tests, sandboxes)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import platformdirs

__all__ = ["checkpoint_dir", "config_dir", "data_dir", "grants_dir", "journal_dir",
           "new_journal_path"]


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


def grants_dir() -> Path:
    """Where saved grants and deny rules live (`user.toml`, `projects/`): the config directory,
    never a workspace (see `engine_adapter.grants.store`)."""
    return config_dir() / "grants"


def journal_dir() -> Path:
    """Where runs write their journals unless `--journal` says otherwise."""
    return data_dir() / "journals"


def checkpoint_dir() -> Path:
    """The checkpoint store of every run (`engine_adapter.checkpoints`): in the data directory,
    never in a workspace, read-only to the run's own commands (as the journals are)."""
    return data_dir() / "checkpoints"


def new_journal_path(session_id: str, *, now: float | None = None) -> Path:
    """A fresh journal path for a run: `<journal_dir>/<YYYYmmdd-HHMMSS>-<session_id>.jsonl`,
    so a plain listing sorts oldest first."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return journal_dir() / f"{stamp}-{session_id}.jsonl"
