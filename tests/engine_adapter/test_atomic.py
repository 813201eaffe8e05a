"""The one atomic write: all or nothing, durable, and never wider in its mode than it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine_adapter.atomic import replace_file


def test_a_new_file_is_its_owners_alone(tmp_path: Path) -> None:
    target = tmp_path / "grants.toml"
    replace_file(target, "x = 1\n")
    assert target.read_text(encoding="utf-8") == "x = 1\n"
    assert target.stat().st_mode & 0o777 == 0o600


def test_an_existing_file_keeps_its_mode_unless_one_is_given(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_text("old\n")
    target.chmod(0o644)
    replace_file(target, "new ✓\n")
    assert target.read_text(encoding="utf-8") == "new ✓\n"
    assert target.stat().st_mode & 0o777 == 0o644
    replace_file(target, b"bytes\n", mode=0o600)
    assert target.read_bytes() == b"bytes\n"
    assert target.stat().st_mode & 0o777 == 0o600


def test_a_failed_rename_leaves_the_old_file_and_no_temporary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "manifest.json"
    target.write_text("old")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        replace_file(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]


def test_a_symlink_target_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    link = tmp_path / "config.toml"
    link.symlink_to(elsewhere)
    replace_file(link, "new")
    assert elsewhere.read_text() == "keep"
    assert not link.is_symlink() and link.read_text() == "new"
