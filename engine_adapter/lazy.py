"""Package faces that load each name on first use (PEP 562), so importing a package costs
nothing until one of its names is read (`from engine_adapter import Session` loads the session
and what it needs, not the journal, the view or the engines).

    _HOMES = {"Session": "engine_adapter.session", ...}
    __getattr__, __dir__ = lazy_face(__name__, _HOMES)

A face names its members in `__all__` and, for type checkers, imports them under
`if TYPE_CHECKING:`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_face"]


def lazy_face(package: str, homes: Mapping[str, str]
              ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of a face whose names live in `homes` (name -> the
    module it is imported from on first use)."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)  # found once: later reads are plain
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return __getattr__, __dir__
