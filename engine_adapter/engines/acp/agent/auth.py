"""Logging in to an agent: which of the methods it declares the cockpit can satisfy, and what to
tell the human when none can.

The agents declare their methods in three shapes: the standard `EnvVarAuthMethod`
(`type="env_var"`, `vars=[…]`: satisfied when those variables are set), an untyped method that
reads an API key (codex-acp's `api-key`, gemini's `gemini-api-key`: marked `_meta["api-key"]`,
or a description naming the variable; the catalogue names what each known agent reads), and
`type="terminal"`, a login the human runs in a terminal (Claude's). The cockpit calls
`authenticate` only with a method whose variables are set; the others are shown, with what to
do. Nothing the agent sends is run: a terminal login is shown as a command for the human.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acp import RequestError
from acp.schema import AuthMethodAgent, EnvVarAuthMethod, InitializeResponse, TerminalAuthMethod

from engine_adapter.engines.acp.catalogue import AgentSpec
from engine_adapter.engines.acp.text import clean

__all__ = [
    "AUTH_REQUIRED",
    "AuthChoice",
    "asks_login",
    "auth_hint",
    "choose_auth_method",
    "method_variables",
]

AUTH_REQUIRED = -32000
"""ACP's error code for "authentication required" (JSON-RPC's generic server error too)."""

_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:KEY|TOKEN)\b")

AuthMethod = EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent


@dataclass(frozen=True)
class AuthChoice:
    """A method the cockpit can satisfy: its id and name, and the variable that satisfies it."""

    method_id: str
    name: str
    variable: str


def _meta(method: AuthMethod) -> dict[str, Any]:
    meta = method.field_meta
    if meta is None:
        extra = method.model_extra or {}
        meta = extra.get("_meta")
    return meta if isinstance(meta, dict) else {}


def method_variables(method: AuthMethod, spec: AgentSpec) -> tuple[str, ...]:
    """The environment variables that satisfy `method` (empty: none does, e.g. a browser or
    terminal login). Any one of them suffices, except for an `env_var` method, which needs all
    its required ones."""
    if isinstance(method, EnvVarAuthMethod):
        return tuple(clean(v.name, 100) for v in method.vars if not v.optional)
    if isinstance(method, TerminalAuthMethod):
        return ()
    known = spec.auth_vars.get(method.id)
    if known:
        return known
    named = tuple(dict.fromkeys(_VARIABLE.findall(method.description or "")))
    if named:
        return named
    if "api-key" in _meta(method):  # an API-key method of an agent the catalogue does not know
        return tuple(v for v in spec.env if _VARIABLE.fullmatch(v))
    return ()


def choose_auth_method(init: InitializeResponse, env: Mapping[str, str],
                       spec: AgentSpec) -> AuthChoice | None:
    """The first method the agent declares whose variables are set in `env` (an `env_var`
    method first: the standard way), or None."""
    methods = list(init.auth_methods or [])
    methods.sort(key=lambda m: not isinstance(m, EnvVarAuthMethod))
    for method in methods:
        variables = method_variables(method, spec)
        if not variables:
            continue
        present = [v for v in variables if env.get(v)]
        enough = len(present) == len(variables) if isinstance(method, EnvVarAuthMethod) \
            else bool(present)
        if enough:
            return AuthChoice(clean(method.id, 200), clean(method.name, 200), present[0])
    return None


def asks_login(exc: BaseException) -> bool:
    """Whether a request failed because the agent wants a login first: ACP's auth error code
    with words of logging in (claude-agent-acp opens a session without a login and fails the
    prompt so). The code alone is JSON-RPC's generic server error, which other failures use."""
    if not isinstance(exc, RequestError) or exc.code != AUTH_REQUIRED:
        return False
    said = f"{exc} {exc.data!r}".casefold()
    return any(word in said for word in _LOGIN_WORDS)


_LOGIN_WORDS = ("auth", "log in", "login", "logged in", "sign in", "credential", "api key")


def _one_line(arg: object) -> str:
    """An argument for a command shown on one line: unsafe characters and line breaks escaped."""
    return clean(str(arg), 200).replace("\n", "\\n").replace("\t", "\\t")


def _terminal_command(method: TerminalAuthMethod, spec: AgentSpec) -> str:
    """The login command a terminal method stands for: the agent's own program with the
    method's arguments (never a program the agent names: that is shown, not trusted)."""
    args = [_one_line(a) for a in (method.args or [])][:20]
    return shlex.join([*spec.argv, *args])


def auth_hint(init: InitializeResponse, spec: AgentSpec) -> str:
    """What the human can do when the agent asks to log in: each method it declares with what
    satisfies it, how to pass the variables it asked for that it does not get by itself, and
    (a catalogue agent) the variables it gets when they are set. Never a fixed list of other
    agents' keys."""
    lines = []
    for method in list(init.auth_methods or [])[:10]:
        name = clean(method.name or method.id, 200)
        description = clean(method.description or "", 300).strip()
        what = f"{name}" + (f" ({description})" if description else "")
        variables = method_variables(method, spec)
        if isinstance(method, TerminalAuthMethod):
            what += (f": log in in a terminal with: {_terminal_command(method, spec)} (then run "
                     "again)")
        elif variables:
            joiner = " and " if isinstance(method, EnvVarAuthMethod) else " or "
            what += f": set {joiner.join(variables)}"
        else:
            what += ": log in with the agent's own CLI first"
        lines.append(f"  - {what}")
    message = ""
    if lines:
        message += "\nthe agent offers these ways to log in:\n" + "\n".join(lines)
    # The variables the agent itself asked for that it does not get unasked: say how.
    asked = dict.fromkeys(v for m in list(init.auth_methods or [])[:10]
                          for v in method_variables(m, spec))
    unpassed = [v for v in asked if v not in spec.env]
    if unpassed:
        message += (f"\n{spec.name} gets none of {', '.join(unpassed[:10])} unless you pass it: "
                    f"--pass-env {unpassed[0]} (from your shell) or --env {unpassed[0]}=VALUE")
    if spec.env:
        message += (f"\n{spec.name} reads {', '.join(spec.env)}; a variable set in your shell "
                    "is passed on; else --env NAME=VALUE, --pass-env NAME, or "
                    f"[agents.{spec.name}.env] in config.toml")
    return message
