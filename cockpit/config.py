"""The user's settings in `config_dir()/config.toml`: the remembered theme, a keymap, and what
alerts the human (see `cockpit.notify`).

```toml
theme = "cockpit-light"

[keymap]          # binding id (see cockpit/keys.py) = key(s)
approve = "Y"
cancel = "ctrl+x"

[notify]          # true, false, or a list of: approval, question, done, failed
bell = ["approval", "failed"]
```

Reading never fails the cockpit: a missing or broken file means defaults (the problem is
returned for the caller to show). Writing keeps the keys it does not know about.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .notify import NotifySettings, parse_notify
from .paths import config_dir

__all__ = ["Config", "config_path", "load_config", "save_theme"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class Config:
    """What cockpit remembers between runs."""

    theme: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    notify: NotifySettings = field(default_factory=NotifySettings)
    error: str | None = None  # why the file could not be read, if it could not
    warnings: list[str] = field(default_factory=list)  # settings read but ignored, and why


def config_path() -> Path:
    """The settings file."""
    return config_dir() / "config.toml"


def _read_raw(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def load_config(path: Path | None = None) -> Config:
    """The settings, or defaults (with `error` set) when the file is missing or unreadable."""
    path = path or config_path()
    if not path.exists():
        return Config()
    try:
        raw = _read_raw(path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Config(error=f"{path}: {exc}")
    theme = raw.get("theme")
    keymap = raw.get("keymap", {})
    keymap = {str(k): v for k, v in keymap.items() if isinstance(v, str)} \
        if isinstance(keymap, dict) else {}
    notify, warnings = parse_notify(raw.get("notify"))
    return Config(theme=theme if isinstance(theme, str) else None, keymap=keymap,
                  notify=notify, warnings=warnings)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return json.dumps(value, ensure_ascii=False)  # a JSON array of scalars is TOML too
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a valid TOML string


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _dump(raw: dict[str, Any]) -> str:
    lines = [f"{_key(k)} = {_toml_value(v)}" for k, v in raw.items()
             if not isinstance(v, dict)]
    for table, values in raw.items():
        if isinstance(values, dict):
            lines.append(f"\n[{_key(table)}]")
            lines += [f"{_key(k)} = {_toml_value(v)}" for k, v in values.items()
                      if not isinstance(v, dict)]
    return "\n".join(lines) + "\n"


def save_theme(name: str, path: Path | None = None) -> str | None:
    """Remember `name` as the theme. Returns an error message instead of raising."""
    path = path or config_path()
    try:
        raw = _read_raw(path) if path.exists() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        raw = {}  # a broken file is replaced rather than left to break every start
    raw["theme"] = name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".toml.tmp")
        tmp.write_text(_dump(raw), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        return f"could not save the theme choice to {path}: {exc}"
    return None
