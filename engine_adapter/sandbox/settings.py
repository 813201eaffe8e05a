"""The sandbox settings a user chooses (`--sandbox MODE`, `--sandbox-network`, `[sandbox]` in
config.toml), and the words every view uses for the state a command ran in."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = [
    "BYPASSED",
    "ENV_VARIABLE",
    "MODES",
    "NO_SANDBOX",
    "OFF",
    "READ_ONLY",
    "UNAVAILABLE",
    "WORKSPACE_WRITE",
    "SandboxSettings",
    "agent_place_label",
    "default_settings",
    "is_sandboxed",
    "path_list_problem",
    "sandbox_label",
]

WORKSPACE_WRITE = "workspace-write"
"""Mode: the workspace and a private temp dir are writable, everything else read-only."""
READ_ONLY = "read-only"
"""Mode: only a private temp dir is writable."""
OFF = "off"
"""Mode (the user's explicit choice) and state: commands run with the user's full access."""
UNAVAILABLE = "unavailable"
"""State only: a sandbox was wanted but this machine has none (so every command asks)."""
BYPASSED = "bypassed"
"""State only: one command the human approved to run outside the sandbox (tier 4)."""

MODES = (WORKSPACE_WRITE, READ_ONLY, OFF)
"""What `--sandbox` and `[sandbox] mode` accept."""

ENV_VARIABLE = "COCKPIT_SANDBOX"
"""Names the mode when nothing else does (no `--sandbox`, no settings passed): e.g. `off` on a
machine that cannot have a sandbox, said once for every run."""

NO_SANDBOX = " — no sandbox on this machine: it runs with your full access"
"""Added to every ask for a command that would have run in the sandbox, were there one."""


@dataclass(frozen=True)
class SandboxSettings:
    """What the user asked for: a mode (`MODES`), whether commands may use the network, the
    paths to hide from commands beyond the default credential places (`read_deny`) or to show
    them after all (`read_allow`): absolute, or below the home directory (`~/…`);
    `pass_env`: variables commands get although they look like secrets (`--pass-env`);
    `withhold_env`: variables commands never get, whatever their name (the model's key)."""

    mode: str = WORKSPACE_WRITE
    network: bool = False
    read_deny: tuple[str, ...] = ()
    read_allow: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()
    withhold_env: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"sandbox mode {self.mode!r}: use one of {', '.join(MODES)}")
        for key in ("read_deny", "read_allow"):
            problem = path_list_problem(key, getattr(self, key))
            if problem:
                raise ValueError(problem)
            object.__setattr__(self, key, tuple(getattr(self, key)))


def path_list_problem(key: str, values: object) -> str | None:
    """What is wrong with a `read_deny` / `read_allow` value (a list of absolute or `~/…`
    paths), in one line that says what to write instead; None when it is right."""
    example = f'{key} = ["~/.config/secret-tool", "/srv/keys"]'
    if isinstance(values, str) or not isinstance(values, (list, tuple)):
        return f"[sandbox] {key} must be a list of paths, e.g. {example}"
    for value in values:
        if not isinstance(value, str) or not value.strip():
            return f"[sandbox] {key}: {value!r} is not a path; e.g. {example}"
        if "\0" in value or not value.isprintable():
            return f"[sandbox] {key}: {value!r} holds characters a path cannot have"
        if not (value.startswith("/") or value == "~" or value.startswith("~/")):
            return (f"[sandbox] {key}: {value!r} is not an absolute path; write it from / "
                    f"or from your home directory as ~/…")
        if key == "read_deny" and value.rstrip("/") in ("", "~"):
            return (f"[sandbox] {key}: {value!r} would hide every file; name the folders "
                    "or files themselves")
    return None


def default_settings() -> SandboxSettings:
    """The settings when none are given: the mode `$COCKPIT_SANDBOX` names, else
    `workspace-write`; no network. A value that is not a mode is a `ValueError`."""
    mode = os.environ.get(ENV_VARIABLE, "").strip()
    if mode and mode not in MODES:
        raise ValueError(f"{ENV_VARIABLE}={mode!r}: use one of {', '.join(MODES)}")
    return SandboxSettings(mode=mode or WORKSPACE_WRITE)


def is_sandboxed(state: str | None) -> bool:
    """Whether a command that ran in `state` (an event's `sandbox` field) was in a sandbox."""
    return state in (WORKSPACE_WRITE, READ_ONLY)


def sandbox_label(state: str | None, network: bool | None = None) -> str:
    """A few words for a command's (or a run's) sandbox state: "sandbox", "sandbox read-only",
    "sandbox +network", "no sandbox (off)", …; "" for no state (not a command, old journal)."""
    if not state:
        return ""
    if is_sandboxed(state):
        label = "sandbox" if state == WORKSPACE_WRITE else f"sandbox {state}"
        return label + (" +network" if network else "")
    # Never the journal's own words: a state this version does not know is just "unknown".
    why = {OFF: "off", UNAVAILABLE: "unavailable", BYPASSED: "approved"}.get(state, "unknown")
    return f"no sandbox ({why})"


def agent_place_label(state: str | None) -> str:
    """Where the agent process runs, in a few words: "agent: sandbox", "agent: no sandbox
    (off)", "agent: no sandbox (unavailable)"; "" when unknown (an older journal)."""
    if not state:
        return ""
    if is_sandboxed(state):
        return "agent: sandbox"
    why = {OFF: "off", UNAVAILABLE: "unavailable"}.get(state, "unknown")
    return f"agent: no sandbox ({why})"
