"""`--detach`, the client's side: the command's options sent to the host, every path made
absolute, and the run id it answers printed (the host's side: `cockpit.cli.hosted`)."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, NoReturn

import typer

from cockpit.cli.options import AgentFlags, RunFlags
from cockpit.cli.preflight import EXIT_SETUP

__all__ = ["detached", "to_params"]

_PATHS = {"journal", "policy", "cwd"}
"""Options that name a path: made absolute by the client (the host has its own directory)."""


def _absolute(value: Any) -> Any:
    return os.path.abspath(value) if value is not None else None


def to_params(command: str, given: dict[str, Any]) -> dict[str, Any]:
    """A command's options as a `start` request's JSON params, paths absolute."""
    params: dict[str, Any] = {}
    for name, value in given.items():
        if isinstance(value, RunFlags | AgentFlags):
            value = {key: (_absolute(item) if key in _PATHS else item)
                     for key, item in asdict(value).items()}
            if "agent_state" in value and value["agent_state"] is not None:
                value["agent_state"] = [_absolute(item) for item in value["agent_state"]]
        elif name in _PATHS or isinstance(value, Path):
            value = _absolute(value)
        params[name] = value
    if command == "run" and params.get("cwd") is None:
        params["cwd"] = os.getcwd()
    extra = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    params["sys_path"] = [os.getcwd(), *(os.path.abspath(entry) for entry in extra)]
    return params


def detached(command: str, *, via: str | None = None, **given: Any) -> NoReturn:
    """Start the run in the host (started first if none runs; `via`: the one a command's
    stdio reaches), print its id alone on stdout, and exit 0; a refusal is one line on stderr
    and exit 2."""
    from cockpit.host import HostError, ensure_host

    try:
        with ensure_host(via) as client:
            reply = client.request("start", command=command, params=to_params(command, given))
    except (HostError, OSError) as exc:
        typer.echo(f"cockpit: error: {exc}", err=True)
        raise typer.Exit(EXIT_SETUP) from None
    typer.echo(str(reply["run"]))
    sys.stdout.flush()
    raise typer.Exit(0)
