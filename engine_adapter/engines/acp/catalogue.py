"""The shipped catalogue of known ACP agents (`agents.toml`), and how `--agent` picks one.

`resolve_agent("codex")` is the catalogue's entry; `resolve_agent("my-agent --acp")` is any other
command. `agent_env(spec)` is the environment the agent gets: a small base listed by name
(`BASE_ENV`: home, path, locale, terminal, temp dir, config dirs, proxies and certificates) plus,
for a catalogue agent, its own authentication variables (API keys) when they are set, and what
the catalogue sets for the workspace the human chose (Gemini's folder trust) — nothing else of
the caller's environment. A command-line agent gets no key at all. Whatever else the human
passes on purpose (`--env`, `--pass-env`, `[agents.NAME.env]`) comes on top.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BASE_ENV",
    "CATALOGUE_PATH",
    "AgentSpec",
    "AgentSpecError",
    "agent_env",
    "load_catalogue",
    "resolve_agent",
]

CATALOGUE_PATH = Path(__file__).with_name("agents.toml")

BASE_ENV = frozenset({
    # who and where: the agent's home (its login state), its program path, its shell
    "HOME", "LOGNAME", "USER", "PATH", "SHELL", "TMPDIR", "TZ", "VIRTUAL_ENV",
    # the terminal and the language it writes in
    "TERM", "COLORTERM", "NO_COLOR", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
    "LC_COLLATE", "LC_NUMERIC", "LC_TIME", "LC_MONETARY",
    # where its own configuration lives (not XDG_RUNTIME_DIR: it points at the user's sockets,
    # the D-Bus session bus and systemd --user, which the agent has no business reaching)
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
    # how it reaches its model's API
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
    "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
})
"""What every agent gets of the caller's environment, by name (no prefix matching): nothing
that is a key, a token, or points at a socket."""


class AgentSpecError(ValueError):
    """A bad `--agent` value or a broken catalogue; the message says what to do."""


@dataclass(frozen=True)
class AgentSpec:
    """How to start one ACP agent."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    title: str = ""
    install: str | None = None
    env: tuple[str, ...] = ()
    docs: str | None = None
    known: bool = True  # from the catalogue (False: a command given on the command line)
    version: str | None = None  # the version whose launch arguments the catalogue was checked on
    auth_vars: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    """Per login method id the agent declares: the variables that satisfy it (any one)."""
    workspace_env: dict[str, str] = field(default_factory=dict, hash=False)
    """Set for the agent because the human chose the workspace it runs in (folder trust)."""
    model_args: tuple[str, ...] = ()
    """Arguments that choose the agent's model at launch (`{model}` is replaced), for an agent
    that offers no model setting in the protocol."""
    state: tuple[str, ...] = ()
    """Where the agent keeps its own state (`~/.claude`, …, `~` the home directory): writable
    for it inside the sandbox."""

    def state_paths(self, home: str | None = None) -> list[str]:
        """`state` as absolute paths, `~` replaced by `home` (default: this user's)."""
        home = os.path.expanduser("~") if home is None else home
        return [os.path.normpath(home + path[1:] if path == "~" or path.startswith("~/")
                                 else path) for path in self.state]

    @property
    def argv(self) -> list[str]:
        """The command line that starts the agent."""
        return [self.command, *self.args]

    def launch_argv(self, model: str | None = None) -> list[str]:
        """The command line, choosing `model` through `model_args` when the agent has them."""
        if model is None or not self.model_args:
            return self.argv
        return [*self.argv, *(arg.replace("{model}", model) for arg in self.model_args)]

    @property
    def display(self) -> str:
        """The command line as one shell-quoted string."""
        return shlex.join(self.argv)

    def installed(self) -> str | None:
        """The program's path if it can be started (on PATH, or an existing file), else None."""
        found = shutil.which(self.command)
        if found is None and os.sep in self.command and os.access(self.command, os.X_OK):
            found = self.command
        return found


def _spec(name: str, table: object) -> AgentSpec:
    if not isinstance(table, dict):
        raise AgentSpecError(f"catalogue entry {name!r} is not a table")
    command = table.get("command")
    if not isinstance(command, str) or not command:
        raise AgentSpecError(f"catalogue entry {name!r} has no command")
    args, env = table.get("args", []), table.get("env", [])
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise AgentSpecError(f"catalogue entry {name!r}: args must be a list of strings")
    if not (isinstance(env, list) and all(isinstance(e, str) for e in env)):
        raise AgentSpecError(f"catalogue entry {name!r}: env must be a list of names")
    return AgentSpec(name=name, command=command, args=tuple(args),
                     title=str(table.get("title", "")), install=table.get("install"),
                     env=tuple(env), docs=table.get("docs"), version=table.get("version"),
                     auth_vars=_names_table(name, table.get("auth_methods", {})),
                     workspace_env=_string_table(name, "workspace_env",
                                                 table.get("workspace_env", {})),
                     model_args=_strings(name, "model_args", table.get("model_args", [])),
                     state=_state(name, table.get("state", [])))


def _state(name: str, value: object) -> tuple[str, ...]:
    paths = _strings(name, "state", value)
    for path in paths:
        if not (path.startswith("~/") or os.path.isabs(path)) or ".." in path.split("/"):
            raise AgentSpecError(f"catalogue entry {name!r}: state path {path!r} must be "
                                 "absolute or start with ~/, without '..'")
    return paths


def _strings(name: str, key: str, value: object) -> tuple[str, ...]:
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise AgentSpecError(f"catalogue entry {name!r}: {key} must be a list of strings")
    return tuple(value)


def _string_table(name: str, key: str, value: object) -> dict[str, str]:
    if not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
        raise AgentSpecError(f"catalogue entry {name!r}: {key} must be a table of strings")
    return dict(value)


def _names_table(name: str, value: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise AgentSpecError(f"catalogue entry {name!r}: auth_methods must be a table")
    return {str(k): _strings(name, f"auth_methods.{k}", v) for k, v in value.items()}


def load_catalogue(path: str | os.PathLike[str] | None = None) -> dict[str, AgentSpec]:
    """The agents of a catalogue file (the shipped `agents.toml` by default), by name."""
    source = Path(path) if path is not None else CATALOGUE_PATH
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise AgentSpecError(f"cannot read the agent catalogue {source}: {exc}") from None
    agents = data.get("agents", {})
    if not isinstance(agents, dict):
        raise AgentSpecError(f"{source}: [agents] must be a table of agents")
    return {name: _spec(name, table) for name, table in agents.items()}


def resolve_agent(value: str, catalogue: Mapping[str, AgentSpec] | None = None) -> AgentSpec:
    """The agent `--agent value` means: a catalogue name, or a command line to start."""
    catalogue = load_catalogue() if catalogue is None else catalogue
    text = value.strip()
    if text in catalogue:
        return catalogue[text]
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise AgentSpecError(f"--agent {value!r} is not a valid command line ({exc}); quote it "
                             "like a shell command") from None
    if not words:
        names = ", ".join(sorted(catalogue)) or "none"
        raise AgentSpecError(f"--agent needs an agent name ({names}) or a command that speaks "
                             "ACP on stdin/stdout, e.g. --agent \"my-agent --acp\"")
    if len(words) == 1 and os.sep not in words[0] and shutil.which(words[0]) is None:
        names = ", ".join(sorted(catalogue))
        raise AgentSpecError(f"unknown agent {words[0]!r}: not in the catalogue ({names}) and "
                             "not a program on PATH; see `cockpit agents`")
    # A command of our own: it gets no provider's key unless the human passes it on purpose
    # (`--pass-env`, `--env`): which one it needs, only it can say (its `authMethods`).
    return AgentSpec(name=os.path.basename(words[0]), command=words[0], args=tuple(words[1:]),
                     title="", env=(), known=False)


def agent_env(spec: AgentSpec, extra: Mapping[str, str] | None = None,
              environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment to start `spec` with: the base variables and the agent's own
    authentication variables taken from `environ` (the process environment by default), the
    catalogue's `workspace_env`, then `extra` (what the human passed on purpose) on top."""
    environ = os.environ if environ is None else environ
    env = {name: value for name, value in environ.items() if name in BASE_ENV}
    for name in spec.env:
        if name in environ:
            env[name] = environ[name]
    env.update(spec.workspace_env)
    if extra:
        env.update(extra)
    return env
