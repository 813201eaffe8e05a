"""cockpit: the Textual application and the command line over an `engine_adapter.Session`."""

__version__ = "0.1.0"
