"""What the cockpit can drive: `cockpit agents` (the ACP agents it knows by name, and the lines
it prints) and `cockpit models` (what an OpenAI-compatible server offers).

Light at import (`cockpit --help` loads it): the ACP catalogue and the OpenAI SDK are imported
by the command that asks them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from cockpit.cli.preflight import user_errors, warn_config

if TYPE_CHECKING:
    from engine_adapter.engines.acp import AgentSpec

__all__ = ["agents", "agents_listing", "models"]


def agents() -> None:
    """List the Agent Client Protocol agents cockpit knows by name.

    Each with whether it is installed, the keys it reads and how to install it.

    Drive one with `cockpit run --agent NAME TASK`."""
    for line in agents_listing():
        typer.echo(line)


def _auth_note(spec: AgentSpec) -> str:
    """Whether the agent's key is set here (the agent may be logged in with its own CLI)."""
    if not spec.env:
        return ""
    present = [name for name in spec.env if os.environ.get(name)]
    if present:
        return "key set: " + ", ".join(present)
    names = " or ".join(spec.env[:2]) + (", …" if len(spec.env) > 2 else "")
    return f"no key set ({names}), unless logged in with its own CLI"


def agents_listing(catalogue: dict[str, AgentSpec] | None = None) -> list[str]:
    """The lines `cockpit agents` prints: each known agent, whether it is installed (and where),
    its authentication variables, and how to install it."""
    from engine_adapter.engines.acp import load_catalogue

    agents = load_catalogue() if catalogue is None else catalogue
    lines = []
    for name, spec in sorted(agents.items()):
        path = spec.installed()
        lines.append(f"{name:<8} {spec.title}")
        lines.append(f"         command: {spec.display}")
        if path:
            lines.append(f"         installed: {path}")
        else:
            lines.append(f"         not installed: {spec.install}")
        note = _auth_note(spec)
        if note:
            lines.append(f"         auth: {note}")
    lines.append("")
    lines.append('Run one:  cockpit run --agent NAME "TASK"   (or --agent "COMMAND ARGS" for any '
                 "other ACP agent)")
    return lines


def models(
    provider: Annotated[str | None, typer.Argument(
        help="A provider: ollama, llamacpp, vllm, lmstudio, openai, openrouter or one from "
        "config.toml (default: --base-url, else $OPENAI_BASE_URL, else OpenAI).")] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", metavar="URL", help="The server's API root, e.g. http://localhost:8080/v1.")
    ] = None,
    api_key_env: Annotated[str | None, typer.Option(
        "--api-key-env", metavar="VAR", help="The environment variable holding the key.")
    ] = None,
) -> None:
    """List the models an OpenAI-compatible server offers (for `cockpit run --model`)."""
    import asyncio

    from cockpit.launch import list_models, resolve_server

    warn_config()
    with user_errors():
        server = resolve_server(provider, base_url=base_url, api_key_env=api_key_env)
        found = asyncio.run(list_models(server))
    if not found:
        typer.echo(f"{server.base_url} lists no models")
    for name, window in found:
        typer.echo(f"{name}" + (f"  (context {window:,} tokens)" if window else ""))
    prefix = f"{provider}:" if provider else ""
    extra = f" --base-url {server.base_url}" if base_url else ""
    typer.echo(f'\nRun one:  cockpit run "TASK" --model {prefix}NAME{extra}', err=True)
