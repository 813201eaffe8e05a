"""Real models on the command line: `cockpit run --model NAME [--base-url URL] [--api-key-env
VAR]` and `cockpit models`.

`resolve_model` turns the options and `config.toml` into an `Endpoint`: `provider:model` names
a provider (configured under `[providers.NAME]`, or one of the known local and cloud servers
below) unless the part before the colon is not one (Ollama's `qwen3:8b` is a model). The base
URL comes from `--base-url`, else the provider, else `$OPENAI_BASE_URL`, else OpenAI's. The key
comes from `--api-key-env`, else the provider's variable, else `$OPENAI_API_KEY`; a local
server (loopback or private address) needs none, and gets none unless a variable was named for
it (a cloud key is never sent to a local port by default).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cockpit.config import Config, ProviderConfig, load_config
from cockpit.launch.factory import (
    RunOptions,
    SessionFactory,
    SetupError,
    check_workspace,
    make_sandbox,
)
from cockpit.paths import config_dir
from engine_adapter import SessionState
from engine_adapter.engines.builtin import BuiltinRunner
from engine_adapter.engines.builtin.models.openai import OpenAIModel, Price, window_from_listing

__all__ = ["KNOWN_PROVIDERS", "Endpoint", "Server", "is_local", "list_models", "make_model",
           "model_factory", "resolve_model", "resolve_server", "system_prompt"]

OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_KEY_VARIABLE = "OPENAI_API_KEY"

KNOWN_PROVIDERS: dict[str, ProviderConfig] = {
    "openai": ProviderConfig(OPENAI_URL, "OPENAI_API_KEY"),
    "openrouter": ProviderConfig("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "ollama": ProviderConfig("http://localhost:11434/v1"),
    "llamacpp": ProviderConfig("http://localhost:8080/v1"),
    "vllm": ProviderConfig("http://localhost:8000/v1"),
    "lmstudio": ProviderConfig("http://localhost:1234/v1"),
}
"""Providers known without any configuration; `[providers.NAME]` overrides them."""


@dataclass(frozen=True)
class Endpoint:
    """A resolved model: what to send, where, with which key, and what it costs."""

    model: str  # the id the server knows
    shown: str  # the name as typed (shown in the cockpit)
    base_url: str
    api_key: str | None
    key_variable: str | None
    price: Price | None = None
    context_window: int | None = None


def is_local(url: str) -> bool:
    """Whether `url` is on this machine or a private network (no key needed)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "") or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _provider(name: str, config: Config) -> ProviderConfig | None:
    known, mine = KNOWN_PROVIDERS.get(name), config.providers.get(name)
    if mine is None:
        return known
    if known is None:
        return mine
    return ProviderConfig(mine.base_url or known.base_url, mine.api_key_env or known.api_key_env,
                          mine.context_window or known.context_window)


@dataclass(frozen=True)
class Server:
    """Where a server is and which key it gets."""

    base_url: str
    api_key: str | None
    key_variable: str | None
    provider: ProviderConfig | None


def resolve_server(provider_name: str | None = None, *, base_url: str | None = None,
                   api_key_env: str | None = None, config: Config | None = None,
                   environ: Mapping[str, str] | None = None) -> Server:
    """The server of a provider (or of the defaults) and its key; raises `SetupError`."""
    config = config if config is not None else load_config()
    env = os.environ if environ is None else environ
    provider = None
    if provider_name is not None:
        provider = _provider(provider_name, config)
        if provider is None:
            known = ", ".join(sorted({*KNOWN_PROVIDERS, *config.providers}))
            raise SetupError(f"no provider {provider_name!r} (known: {known}; add one under "
                             "[providers.NAME] in config.toml)")
    url = (base_url or (provider.base_url if provider else None) or env.get("OPENAI_BASE_URL")
           or OPENAI_URL).rstrip("/")
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise SetupError(f"--base-url {url!r}: expected an http(s) URL, e.g. "
                         "http://localhost:11434/v1")
    named = api_key_env or (provider.api_key_env if provider else None)
    variable: str | None = named or DEFAULT_KEY_VARIABLE
    key = (env.get(variable or "") or "").strip() or None
    if api_key_env and key is None:
        raise SetupError(f"--api-key-env {api_key_env}: ${api_key_env} is not set")
    if is_local(url):
        key = key if named else None  # never send the default cloud key to a local port
        variable = variable if key else None
    elif key is None:
        raise SetupError(f"no API key for {url}: set ${variable}, or name the variable that "
                         "holds it with --api-key-env (a local server needs none)")
    return Server(url, key, variable, provider)


def resolve_model(spec: str, *, base_url: str | None = None, api_key_env: str | None = None,
                  config: Config | None = None,
                  environ: Mapping[str, str] | None = None) -> Endpoint:
    """The endpoint of `--model spec`; raises `SetupError` saying what is missing."""
    config = config if config is not None else load_config()
    shown = spec.strip()
    head, colon, tail = shown.partition(":")
    is_provider = bool(colon) and _provider(head, config) is not None
    model = tail if is_provider else shown
    if not model:
        raise SetupError(f"--model {shown!r}: name a model, e.g. ollama:qwen3-coder")
    server = resolve_server(head if is_provider else None, base_url=base_url,
                            api_key_env=api_key_env, config=config, environ=environ)
    known = config.models.get(model) or config.models.get(shown)
    price = None
    if known and known.input_price is not None and known.output_price is not None:
        price = Price(float(known.input_price), float(known.output_price))
    provider = server.provider
    window = (known.context_window if known else None) or (
        provider.context_window if provider else None)
    return Endpoint(model, shown, server.base_url, server.api_key, server.key_variable, price,
                    window)


def system_prompt() -> str | None:
    """The user's own system prompt (`<config dir>/system_prompt.md`), if there is one."""
    path = config_dir() / "system_prompt.md"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(f"cannot read the system prompt {path}: {exc}") from None


def make_model(endpoint: Endpoint, **options: Any) -> OpenAIModel:
    """The built-in engine's model for `endpoint`."""
    return OpenAIModel(endpoint.model, base_url=endpoint.base_url, api_key=endpoint.api_key,
                       key_variable=endpoint.key_variable, name=endpoint.shown,
                       system_prompt=system_prompt(), price=endpoint.price,
                       context_window=endpoint.context_window, **options)


def model_factory(spec: str, *, base_url: str | None = None, api_key_env: str | None = None,
                  cwd: str | Path | None = None,
                  options: RunOptions | None = None,
                  conversation: SessionState | None = None) -> SessionFactory:
    """The sessions of `cockpit run --model spec` in `cwd` (default: here): the built-in engine
    driving the model, one conversation (`conversation`: the one `cockpit resume` continues,
    seeded with its messages)."""
    root = Path(cwd) if cwd is not None else Path.cwd()
    if not root.is_dir():
        raise SetupError(f"--cwd {str(root)!r} is not a directory")
    root = root.resolve()
    options = options if options is not None else RunOptions()
    check_workspace(root, allowed=options.allow_home_workspace)  # before any key is looked for
    endpoint = resolve_model(spec, base_url=base_url, api_key_env=api_key_env)
    model = make_model(endpoint)
    if endpoint.key_variable and options.sandbox is not None:
        # The key is the cockpit's (its model client has it); a command never gets it, whatever
        # the variable is called.
        options = replace(options, sandbox=replace(options.sandbox,
                                                   withhold_env=(endpoint.key_variable,)))
    sandbox = make_sandbox(options, root)
    return SessionFactory(lambda _task, _index: BuiltinRunner(model, cwd=root, sandbox=sandbox),
                          cwd=root, options=options, sandbox=sandbox, conversation=conversation)


async def list_models(server: Server) -> list[tuple[str, int | None]]:
    """The models the server offers, with the context window when it says; raises
    `SetupError` with the server's words when it cannot be asked."""
    import openai

    from engine_adapter.engines.builtin.models.openai import Where, judge, server_message

    model = OpenAIModel("-", base_url=server.base_url, api_key=server.api_key,
                        key_variable=server.key_variable, system_prompt="", timeout=30.0)
    try:
        async with model.client() as client:
            page = await client.models.list()
            return sorted((entry.id, window_from_listing(entry)) for entry in page.data)
    except openai.NotFoundError as exc:
        raise SetupError(f"{server.base_url} has no model listing (404): "
                         f"{server_message(exc)} (is the URL right? it usually ends in /v1)"
                         ) from None
    except Exception as exc:
        where = Where(server.base_url, "-", server.key_variable, server.api_key is not None)
        raise SetupError(judge(exc, where).message) from None
