"""Where things are: the checkout (for tests that read the source or start `cockpit` in a fresh
interpreter) and the tests' own folder (its fakes and golden journals)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
"""`tests/`: the folder that holds `support/`, `fakes/` and `golden/`."""
ROOT = TESTS.parent
"""The checkout: `cockpit/`, `engine_adapter/`, `themes/`, `README.md`."""
