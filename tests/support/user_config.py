"""The user's own config.toml, written for a test."""

from __future__ import annotations


def write_config(tmp_path, text: str) -> None:
    """`text` as the user's config.toml (under the test's COCKPIT_HOME)."""
    folder = tmp_path / "home" / "config"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text, encoding="utf-8")

