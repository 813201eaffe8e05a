"""cockpit: the Textual application and the command line over an `engine_adapter.Session`.

`from cockpit import CockpitApp, ReplayApp` imports either app on first use, so `cockpit --help`
and the headless printer never load Textual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = ["CockpitApp", "ReplayApp", "__version__"]

if TYPE_CHECKING:
    from .app import CockpitApp
    from .replay import ReplayApp


def __getattr__(name: str) -> object:
    if name == "CockpitApp":
        from .app import CockpitApp

        return CockpitApp
    if name == "ReplayApp":
        from .replay import ReplayApp

        return ReplayApp
    raise AttributeError(f"module 'cockpit' has no attribute {name!r}")
