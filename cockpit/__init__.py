"""cockpit: the Textual application and the command line over an `engine_adapter.Session`."""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # Imported on first use, so `cockpit --help` and the headless printer never load Textual.
    if name == "ReplayApp":
        from .replay import ReplayApp

        return ReplayApp
    raise AttributeError(f"module 'cockpit' has no attribute {name!r}")
