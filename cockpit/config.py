"""The user's settings in `config_dir()/config.toml`: the remembered theme, a keymap, model
providers, what cockpit knows of models (price, context window), and what alerts the human (see
`cockpit.notify`).

```toml
theme = "cockpit-light"

[keymap]          # binding id (see cockpit/keys.py) = key(s)
approve = "Y"
cancel = "ctrl+x"

[providers.ollama]            # `--model ollama:qwen3-coder`
base_url = "http://localhost:11434/v1"
api_key_env = "OLLAMA_API_KEY" # optional: the variable holding its key
context_window = 32768        # optional: tokens its models take in

[models."gpt-4.1-mini"]       # by the model's id (or the name as typed, `openai:gpt-4.1-mini`)
input_price = 0.40            # US dollars per million tokens
output_price = 1.60
context_window = 1047576

[notify]                      # true, false, or a list of: approval, question, done, failed
bell = ["approval", "failed"]

[sandbox]                     # where commands run (`--sandbox`, `--sandbox-network` win)
mode = "workspace-write"      # or "read-only", or "off"
network = false
read_deny = ["~/.config/secret-tool", "/srv/keys"]  # hidden from commands, beside the defaults
read_allow = ["~/.npmrc"]     # a default credential place commands may read after all
pass_env = ["GH_TOKEN"]       # variables commands get although they look like secrets

[checkpoints]                 # the workspace at each turn's start, for `cockpit rewind`
enabled = true
max_store_mb = 2048           # the store's cap; past it the oldest runs are pruned
prune = true                  # false: keep old runs, take no new checkpoints past the cap
large_file_mb = 16            # bigger files are recorded by size and hash, not copied
ignore = ["*.log", "build"]   # names never recorded, beside the default caches

[hosts]                       # other machines' hosts in the fleet view (`cockpit attach`)
buildbox = "ssh buildbox cockpit host --stdio"   # name = the command whose stdio reaches it
```

Reading never fails the cockpit: a missing or broken file means defaults (the problem is
returned for the caller to show, with the line to fix). Writing (the theme) edits the file in
place with `tomlkit`, so comments, layout and every other setting stay; a file that does not
read is never written.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.notify import NotifySettings, parse_notify
from cockpit.paths import config_dir
from engine_adapter.atomic import replace_file

if TYPE_CHECKING:
    from engine_adapter.checkpoints import CheckpointSettings

__all__ = ["LOCAL_HOST", "Config", "ModelConfig", "ProviderConfig", "broken", "config_path",
           "load_config", "save_theme"]


@dataclass(frozen=True)
class ProviderConfig:
    """A named model provider: where it is, which variable holds its key, its window."""

    base_url: str | None = None
    api_key_env: str | None = None
    context_window: int | None = None


@dataclass(frozen=True)
class ModelConfig:
    """What is known of one model: prices (US dollars per million tokens) and its window."""

    input_price: float | None = None
    output_price: float | None = None
    context_window: int | None = None


@dataclass
class Config:
    """What cockpit remembers between runs."""

    theme: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    providers: dict[str, ProviderConfig] = field(default_factory=dict)
    models: dict[str, ModelConfig] = field(default_factory=dict)
    notify: NotifySettings = field(default_factory=NotifySettings)
    sandbox_mode: str | None = None  # `[sandbox] mode`, checked
    sandbox_network: bool | None = None
    sandbox_read_deny: tuple[str, ...] = ()  # `[sandbox] read_deny`, checked
    sandbox_read_allow: tuple[str, ...] = ()
    sandbox_pass_env: tuple[str, ...] = ()  # `[sandbox] pass_env`, checked
    checkpoints: CheckpointSettings | None = None  # `[checkpoints]`, checked (None: defaults)
    hosts: dict[str, str] = field(default_factory=dict)  # `[hosts]`: name -> via command
    error: str | None = None  # why the file could not be read, if it could not
    problems: list[str] = field(default_factory=list)  # entries skipped, and why

    def warnings(self) -> list[str]:
        """What in the file could not be used, one line each: a broken file (all of it then
        ignored), else each setting skipped (the rest still applies)."""
        return ([self.error] if self.error else []) + [
            f"config.toml: {problem} (skipped)" for problem in self.problems]


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
    except (OSError, UnicodeDecodeError) as exc:
        return Config(error=f"{path}: cannot be read ({exc}); every setting in it is ignored "
                      "and defaults apply")
    except tomllib.TOMLDecodeError as exc:
        return Config(error=broken(path, exc))
    theme = raw.get("theme")
    keymap = raw.get("keymap", {})
    keymap = {str(k): v for k, v in keymap.items() if isinstance(v, str)} \
        if isinstance(keymap, dict) else {}
    problems: list[str] = []
    providers = _tables(raw, "providers", ProviderConfig, problems)
    models = _tables(raw, "models", ModelConfig, problems)
    notify, notify_problems = parse_notify(raw.get("notify"))
    problems += notify_problems
    mode, network = _sandbox(raw, problems)
    read_deny, read_allow = _sandbox_paths(raw, problems)
    pass_env = _pass_env(raw, problems)
    checkpoints = _checkpoints(raw, problems)
    hosts = _hosts(raw, problems)
    return Config(theme=theme if isinstance(theme, str) else None, keymap=keymap,
                  checkpoints=checkpoints, hosts=hosts, providers=providers, models=models,
                  notify=notify, sandbox_mode=mode,
                  sandbox_network=network, sandbox_read_deny=read_deny,
                  sandbox_read_allow=read_allow, sandbox_pass_env=pass_env, problems=problems)


LOCAL_HOST = "local"
"""The name the fleet gives this machine's own host (so `[hosts]` cannot take it)."""
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")


def _hosts(raw: dict[str, Any], problems: list[str]) -> dict[str, str]:
    """`[hosts]`: name = the command whose stdio reaches that host (`--via`); a bad entry is
    skipped with a problem noted."""
    table = raw.get("hosts", {})
    if not isinstance(table, dict):
        problems.append("[hosts] must be a table of name = \"command\"")
        return {}
    hosts: dict[str, str] = {}
    for name, command in table.items():
        if not _HOST_NAME.fullmatch(str(name)):
            problems.append(f"[hosts] {str(name)[:40]!r}: a name is letters, digits, '.', '_' "
                            "or '-' (at most 32)")
        elif name == LOCAL_HOST:
            problems.append(f"[hosts] {name!r} names this machine's own host: pick another name")
        elif not isinstance(command, str) or not command.strip():
            problems.append(f"[hosts] {name}: the command must be a non-empty string, e.g. "
                            '"ssh box cockpit host --stdio"')
        else:
            hosts[str(name)] = command
    return hosts


def _sandbox(raw: dict[str, Any], problems: list[str]) -> tuple[str | None, bool | None]:
    """`[sandbox] mode` and `network`; a bad value is skipped with a problem noted."""
    from engine_adapter.sandbox import MODES

    table = raw.get("sandbox", {})
    if not isinstance(table, dict):
        problems.append("[sandbox] must be a table")
        return None, None
    mode, network = table.get("mode"), table.get("network")
    for key in table:
        if key not in ("mode", "network", "read_deny", "read_allow", "pass_env"):
            problems.append(f"[sandbox] has no setting {key!r}")
    if mode is not None and mode not in MODES:
        problems.append(f"[sandbox] mode must be one of {', '.join(MODES)}")
        mode = None
    if network is not None and not isinstance(network, bool):
        problems.append("[sandbox] network must be true or false")
        network = None
    return mode, network


def _sandbox_paths(raw: dict[str, Any],
                   problems: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`[sandbox] read_deny` and `read_allow`; a bad list is skipped whole, with a problem
    noted that says what to write (a deny list half read would hide less than asked)."""
    from engine_adapter.sandbox import path_list_problem

    table = raw.get("sandbox", {})
    lists: list[tuple[str, ...]] = []
    for key in ("read_deny", "read_allow"):
        values = table.get(key, []) if isinstance(table, dict) else []
        problem = path_list_problem(key, values)
        if problem:
            problems.append(problem)
            values = []
        lists.append(tuple(values))
    return lists[0], lists[1]


def _pass_env(raw: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    """`[sandbox] pass_env`: variable names commands get although they look like secrets."""
    table = raw.get("sandbox", {})
    names = table.get("pass_env", []) if isinstance(table, dict) else []
    if not isinstance(names, list) or not all(
            isinstance(n, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names):
        problems.append("[sandbox] pass_env must be a list of variable names")
        return ()
    return tuple(names)


_CHECKPOINT_KEYS = ("enabled", "max_store_mb", "prune", "large_file_mb", "ignore")


def _checkpoints(raw: dict[str, Any], problems: list[str]) -> CheckpointSettings | None:
    """`[checkpoints]`; a bad value is skipped (its default applies) with a problem noted."""
    from engine_adapter.checkpoints import CheckpointSettings

    table = raw.get("checkpoints")
    if table is None:
        return None
    if not isinstance(table, dict):
        problems.append("[checkpoints] must be a table")
        return None
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _CHECKPOINT_KEYS:
            problems.append(f"[checkpoints] has no setting {key!r} (known: "
                            f"{', '.join(_CHECKPOINT_KEYS)})")
        elif key in ("enabled", "prune"):
            if isinstance(value, bool):
                values[key] = value
            else:
                problems.append(f"[checkpoints] {key} must be true or false")
        elif key == "ignore":
            if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
                values[key] = tuple(value)
            else:
                problems.append("[checkpoints] ignore must be a list of names or patterns")
        elif isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            problems.append(f"[checkpoints] {key} must be a positive number of megabytes")
        else:
            name = "max_store_bytes" if key == "max_store_mb" else "large_bytes"
            values[name] = int(value * (1 << 20))
    return CheckpointSettings(**values)


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "base_url": (str,), "api_key_env": (str,), "context_window": (int,),
    "input_price": (int, float), "output_price": (int, float),
}


def _tables(raw: dict[str, Any], name: str, kind: type[ProviderConfig] | type[ModelConfig],
            problems: list[str]) -> dict[str, Any]:
    """`[name.<key>]` tables as `kind`; a bad entry is skipped with a problem noted."""
    tables = raw.get(name, {})
    if not isinstance(tables, dict):
        problems.append(f"[{name}] must be a table of tables")
        return {}
    found: dict[str, Any] = {}
    names = {f.name for f in fields(kind)}
    for key, table in tables.items():
        if not isinstance(table, dict):
            problems.append(f"[{name}.{key}] must be a table")
            continue
        values: dict[str, Any] = {}
        for field_name, value in table.items():
            types = _FIELD_TYPES.get(field_name, ())
            if field_name not in names:
                problems.append(f"[{name}.{key}] has no setting {field_name!r}")
            elif isinstance(value, bool) or not isinstance(value, types):
                problems.append(f"[{name}.{key}] {field_name}: wrong type {type(value).__name__}")
            elif field_name == "context_window" and isinstance(value, int) and value <= 0:
                problems.append(f"[{name}.{key}] context_window must be positive")
            else:
                values[field_name] = value
        found[str(key)] = kind(**values)
    return found


def save_theme(name: str, path: Path | None = None) -> str | None:
    """Remember `name` as the theme, editing `config.toml` in place: its comments, layout and
    every other setting stay as they were. Returns why it did not (the caller keeps the theme
    for this session only), never raises. A file that cannot be read (broken TOML, not UTF-8,
    `theme` not a name) is left alone rather than replaced; nothing is written that would not
    read back; the write is atomic (a temporary file renamed over it, its mode kept) and goes
    through a symbolic link to the file it names (a dotfiles checkout stays linked)."""
    import tomlkit

    path = path or config_path()
    unchanged = f"the theme {name!r} applies to this session only"
    target = path.resolve() if path.is_symlink() else path
    try:
        text = target.read_text(encoding="utf-8") if target.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        return f"could not read {path} ({exc}); {unchanged}"
    try:
        before = tomllib.loads(text)
        document = tomlkit.parse(text)
    except (tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError) as exc:
        return f"{broken(path, exc)}; {unchanged}"
    if before.get("theme") == name:
        return None
    if "theme" in before and not isinstance(before["theme"], str):
        return (f"{path}: `theme` must be a theme's name (it is a "
                f"{type(before['theme']).__name__}); fix it; {unchanged}")
    document["theme"] = name
    new = tomlkit.dumps(document)
    try:  # never write what would not read back as the same settings with the new theme
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        after = None
    if after != {**before, "theme": name}:
        return f"could not edit {path} safely (please set theme = {name!r} in it); {unchanged}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        replace_file(target, new)
    except OSError as exc:
        return f"could not save the theme choice to {path}: {exc}; {unchanged}"
    return None


_POSITION = re.compile(r"\s*\(?at line (\d+), column (\d+)\)?\s*$|"
                       r"\s*at line (\d+) col (\d+)\s*$")


def broken(path: Path, error: Exception) -> str:
    """What is wrong with a `config.toml` that does not parse, where, and what to do."""
    message = str(error)
    found = _POSITION.search(message)
    where = ""
    if found is not None:
        line, column = (found.group(1), found.group(2)) if found.group(1) else (
            found.group(3), found.group(4))
        where = f" line {line}, column {column}:"
        message = message[:found.start()]
    return (f"{path}:{where} {message.strip() or 'not valid TOML'} — fix it (until then "
            "every setting in it is ignored and defaults apply)")
