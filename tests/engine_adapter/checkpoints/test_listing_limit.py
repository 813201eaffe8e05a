"""The walk (outside git) stops at `limit` files, never enters a folder the ignore list drops
(what it holds would be dropped anyway: `.venv` must not use up the limit), and never follows a
link; git's listing is as it was."""

from __future__ import annotations

from engine_adapter.checkpoints import list_paths


def _tree(root):
    for n in range(30):
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / f"m{n:02d}.py").write_text("")
    (root / ".venv" / "lib").mkdir(parents=True)
    for n in range(50):
        (root / ".venv" / "lib" / f"v{n}.py").write_text("")
    (root / "outside").symlink_to("/etc")


def test_the_walk_stops_at_the_limit_and_skips_ignored_folders(tmp_path):
    _tree(tmp_path)
    listing = list_paths(str(tmp_path), limit=10)
    assert listing.source == "folder"
    assert len(listing.paths) == 10
    assert all(p.startswith("src/") or p == "outside" for p in listing.paths)
    whole = list_paths(str(tmp_path))
    assert len(whole.paths) == 31 and "outside" in whole.paths  # the link as a file, not /etc
    assert not any(p.startswith((".venv", "outside/")) for p in whole.paths)
