"""A user's engine: `cockpit run --engine module:factory`, where `factory(cwd=..., task=...)`
returns an `AgentRunner` (how any Python engine gets a cockpit from the command line)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

from cockpit.launch.factory import RunOptions, SessionFactory, SetupError
from engine_adapter.text import a_or_an

__all__ = ["engine_factory", "load_engine"]


def load_engine(spec: str, *, cwd: str | Path, task: str) -> Any:
    """The runner built by a `module:factory` spec: `factory(cwd=..., task=...)`.

    The module is imported as `import module` would from the current directory. Raises
    `SetupError` naming what is wrong: the spec, the module, the attribute, the call, or a
    result that is not an `AgentRunner` (it needs an async `run(state)` method).
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise SetupError(f"--engine {spec!r}: expected module:factory, e.g. my_engine:make")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name or module_name.startswith(f"{exc.name}."):
            raise SetupError(f"--engine {spec!r}: no module named {exc.name!r}") from None
        raise SetupError(f"--engine {spec!r}: importing {module_name} failed: {exc}") from None
    except Exception as exc:
        raise SetupError(f"--engine {spec!r}: importing {module_name} failed: "
                         f"{type(exc).__name__}: {exc}") from None
    factory: Any = module
    for part in attr.split("."):
        if not hasattr(factory, part):
            raise SetupError(f"--engine {spec!r}: {module_name} has no attribute {attr!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        raise SetupError(f"--engine {spec!r}: {attr} is not callable")
    try:
        runner = factory(cwd=str(cwd), task=task)
    except Exception as exc:
        raise SetupError(f"--engine {spec!r}: {attr}(cwd=..., task=...) failed: "
                         f"{type(exc).__name__}: {exc}") from None
    if not callable(getattr(runner, "run", None)):
        raise SetupError(f"--engine {spec!r}: {attr}() returned {a_or_an(type(runner).__name__)}, "
                         "not an AgentRunner (it needs an async run(state) method)")
    return runner


def engine_factory(spec: str, *, cwd: str | Path | None = None,
                   options: RunOptions = RunOptions()) -> SessionFactory:
    """The sessions of `cockpit run --engine module:factory` in `cwd` (default: here)."""
    root = Path(cwd) if cwd is not None else Path.cwd()
    if not root.is_dir():
        raise SetupError(f"--cwd {str(root)!r} is not a directory")
    root = root.resolve()
    return SessionFactory(lambda task, _index: load_engine(spec, cwd=root, task=task), cwd=root,
                          options=options)
