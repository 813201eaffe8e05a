"""The version of both packages, `engine_adapter` and `cockpit` (the build reads it too)."""

__version__ = "0.1.0"
