"""`[checkpoints]` in config.toml: each setting read, each bad value skipped with its default
and a problem that says what to write, and `cockpit run`'s options taking them."""

from __future__ import annotations

import pytest

from cockpit.config import load_config
from engine_adapter.checkpoints import LARGE_BYTES, STORE_BYTES, CheckpointSettings


def _read(tmp_path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def test_no_table_means_the_defaults(tmp_path) -> None:
    config = _read(tmp_path, 'theme = "x"\n')
    assert config.checkpoints is None and not config.problems
    assert CheckpointSettings() == CheckpointSettings(True, STORE_BYTES, True, LARGE_BYTES, ())


def test_every_setting_is_read(tmp_path) -> None:
    config = _read(tmp_path, "[checkpoints]\nenabled = false\nmax_store_mb = 512\n"
                             "prune = false\nlarge_file_mb = 1.5\nignore = ['*.log', 'dist']\n")
    assert config.checkpoints == CheckpointSettings(
        enabled=False, max_store_bytes=512 << 20, prune=False, large_bytes=int(1.5 * (1 << 20)),
        ignore=("*.log", "dist"))
    assert not config.problems


@pytest.mark.parametrize(("line", "problem"), [
    ("enabled = 'no'", "enabled must be true or false"),
    ("enabled = 1", "enabled must be true or false"),
    ("prune = 'yes'", "prune must be true or false"),
    ("max_store_mb = 0", "max_store_mb must be a positive number"),
    ("max_store_mb = -5", "max_store_mb must be a positive number"),
    ("max_store_mb = true", "max_store_mb must be a positive number"),
    ("max_store_mb = '2GB'", "max_store_mb must be a positive number"),
    ("large_file_mb = []", "large_file_mb must be a positive number"),
    ("ignore = '*.log'", "ignore must be a list"),
    ("ignore = [1, 2]", "ignore must be a list"),
    ("ignore = ['']", "ignore must be a list"),
    ("keep = 3", "has no setting 'keep'"),
])
def test_a_bad_value_is_skipped_with_a_problem_and_its_default(tmp_path, line, problem) -> None:
    config = _read(tmp_path, f"[checkpoints]\n{line}\n")
    assert config.checkpoints == CheckpointSettings()
    assert any(problem in p for p in config.problems), config.problems
    assert all("[checkpoints]" in w for w in config.warnings())


def test_a_table_that_is_not_a_table_is_a_problem(tmp_path) -> None:
    config = _read(tmp_path, "checkpoints = 3\n")
    assert config.checkpoints is None
    assert config.problems == ["[checkpoints] must be a table"]
