"""Saved-grant files: written atomically, read with clear errors, never partially trusted.

Every hostile value here is data in a TOML file: nothing is ever run.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine_adapter.grants import GrantFileError
from engine_adapter.grants.grant_file import (
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    GrantFile,
    dump_grant_file,
    read_grant_file,
    update_grant_file,
)
from engine_adapter.grants.records import DenyRule, SavedGrant

WHEN = datetime(2025, 6, 1, 10, 0, tzinfo=UTC)


def grant(gid: str = "g-00000001", prefix: str = "git status", tier: int = 3,
          tool: str = "shell", note: str = "") -> SavedGrant:
    return SavedGrant(id=gid, scope="user", tool=tool, prefix=prefix, max_tier=tier,
                      created=WHEN, note=note)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o600)
    return path


GOOD = """version = 1

[grant.g-00000001]
tool = "shell"
prefix = "git status"
max_tier = 3
created = 2025-06-01T10:00:00Z

[deny.d-00000001]
tool = "*"
prefix = "git push"
created = 2025-06-01T10:00:00Z
"""


def test_a_file_round_trips(tmp_path) -> None:
    path = tmp_path / "user.toml"
    found = GrantFile(path, "user")
    found.grants["g-1"] = grant("g-1", note='quotes " and \\ and ünïcode')
    found.grants["g-2"] = grant("g-2", prefix="npm test", tier=2)
    found.grants["g-2"] = found.grants["g-2"].used(WHEN)
    found.denies["d-1"] = DenyRule(id="d-1", scope="user", tool="*", prefix="git push",
                                   created=WHEN)
    write(path, dump_grant_file(found))
    again = read_grant_file(path, "user")
    assert again.broken is None and again.problems == []
    assert again.grants == found.grants and again.denies == found.denies


def test_a_missing_file_is_empty_not_a_problem(tmp_path) -> None:
    found = read_grant_file(tmp_path / "none.toml", "user")
    assert found.broken is None and not found.grants and found.stamp is None


@pytest.mark.parametrize(("text", "says"), [
    ("version = 1\n[grant.g-1\ntool = 'shell'\n", "line 2"),  # TOML syntax
    ("version = 1\n\n[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = 3\n"
     "created = 2025-06-01T10:00:00Z\ncolour = \"red\"\n", "line 3: [grant.g-1] unknown key"),
    ("[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = \"3\"\n"
     "created = 2025-06-01T10:00:00Z\n", "max_tier must be int"),
    ("[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = true\n"
     "created = 2025-06-01T10:00:00Z\n", "max_tier must be int"),
    ("[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = 3\n", "created is missing"),
    ("[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = 4\n"
     "created = 2025-06-01T10:00:00Z\n", "tier 4 is never granted"),
    ("[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = 0\n"
     "created = 2025-06-01T10:00:00Z\n", "max_tier must be 1, 2 or 3"),
    ("[grant.\"g 1; x\"]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = 3\n"
     "created = 2025-06-01T10:00:00Z\n", "an id is letters"),
    ("version = 2\n", "version must be 1"),
    ("project = \"/elsewhere\"\n", "names no project"),
    ("owner = \"agent\"\n", "unknown setting 'owner'"),
    ("grant = 3\n", "grant must be tables"),
    ("[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\u202e\"\nmax_tier = 3\n"
     "created = 2025-06-01T10:00:00Z\n", "control or invisible character"),
    ("[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = 3\n"
     "created = 2025-06-01T10:00:00Z\nnote = \"a\\u0000b\"\n", "control or invisible"),
    ("[grant.g-1]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = 3\ncreated = \"yesterday\"\n",
     "created must be a date-time"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", ""),
])
def test_a_broken_file_is_reported_with_its_line_and_allows_nothing(tmp_path, text,
                                                                     says) -> None:
    path = write(tmp_path / "user.toml", GOOD + "\n" + text if text.startswith("[") else text)
    found = read_grant_file(path, "user")
    assert found.broken is not None and str(path) in found.broken
    assert says in found.broken, found.broken
    assert found.grants == {}


def test_a_broken_file_still_denies_what_it_can_read(tmp_path) -> None:
    """Never partially trusted to allow; a deny it holds still denies (a broken file never
    makes cockpit allow more)."""
    path = write(tmp_path / "user.toml", GOOD + "\n[grant.g-2]\ntool = \"shell\"\n"
                 "prefix = \"ls\"\nmax_tier = 9\ncreated = 2025-06-01T10:00:00Z\n")
    found = read_grant_file(path, "user")
    assert "line 14" in (found.broken or "")
    assert found.grants == {} and list(found.denies) == ["d-00000001"]


def test_not_utf8_names_the_line(tmp_path) -> None:
    path = tmp_path / "user.toml"
    path.write_bytes(GOOD.encode() + b"\n# \xff\xfe\n")
    os.chmod(path, 0o600)
    found = read_grant_file(path, "user")
    assert found.broken is not None and "line 14: not UTF-8" in found.broken


def test_a_huge_file_is_not_read(tmp_path) -> None:
    path = write(tmp_path / "user.toml", GOOD + "#" * (MAX_FILE_BYTES + 10) + "\n")
    found = read_grant_file(path, "user")
    assert found.broken is not None and "larger than" in found.broken


def test_too_many_entries_are_refused(tmp_path) -> None:
    tables = "".join(f"[grant.g-{n}]\ntool = \"shell\"\nprefix = \"ls\"\nmax_tier = 3\n"
                     "created = 2025-06-01T10:00:00Z\n" for n in range(MAX_ENTRIES + 1))
    path = write(tmp_path / "user.toml", tables)
    found = read_grant_file(path, "user")
    assert found.broken is not None and "more than" in found.broken


def test_a_symlinked_grants_file_is_not_read(tmp_path) -> None:
    target = write(tmp_path / "workspace" / "grants.toml", GOOD)
    link = tmp_path / "cfg" / "user.toml"
    link.parent.mkdir()
    link.symlink_to(target)
    found = read_grant_file(link, "user")
    assert found.broken is not None and "symbolic link" in found.broken
    assert found.grants == {} and found.denies == {}


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_file_others_can_write_is_not_trusted(tmp_path, mode) -> None:
    path = write(tmp_path / "user.toml", GOOD)
    os.chmod(path, mode)
    found = read_grant_file(path, "user")
    assert found.broken is not None and "chmod 600" in found.broken
    assert found.grants == {}


def test_a_project_file_for_another_project_is_refused(tmp_path) -> None:
    path = write(tmp_path / "p.toml", 'project = "/a"\n' + GOOD.replace("version = 1\n", ""))
    assert read_grant_file(path, "project", "/a").broken is None
    other = read_grant_file(path, "project", "/a-other")
    assert other.broken is not None and "never applies to another project" in other.broken
    assert other.grants == {}


# -- grants the current rules would not give ----------------------------------------------------

HOSTILE_PREFIXES = [
    "git status; rm -rf ~",
    "git status && curl x | sh",
    "git -c core.pager=sh log",
    "bash -c",
    "python3 -c",
    "sudo git",
    "env",
    "GIT_EXTERNAL_DIFF=x git diff",
    "git status $(id)",
    "git status\nrm x",
    "ls *",
    "./evil status extra words that grant_prefix never keeps",
    "git push --force",
    " ",
]


@pytest.mark.parametrize("prefix", HOSTILE_PREFIXES)
def test_a_prefix_grant_prefix_would_not_produce_is_ignored_and_reported(tmp_path,
                                                                         prefix) -> None:
    found = GrantFile(tmp_path / "user.toml", "user")
    found.grants["g-bad"] = grant("g-bad", prefix=prefix)
    found.grants["g-ok"] = grant("g-ok")
    text = dump_grant_file(found)
    path = write(tmp_path / "user.toml", text)
    again = read_grant_file(path, "user")
    if again.broken is not None:  # a control character: the file is not trusted at all
        assert again.grants == {}
        return
    assert list(again.grants) == ["g-ok"]
    assert "g-bad" in again.ignored
    assert any("g-bad" in p and "ignored" in p for p in again.problems)


@pytest.mark.parametrize("tool", ["alter_verification", "*", " shell", ""])
def test_a_grant_for_an_ungrantable_tool_is_ignored(tmp_path, tool) -> None:
    text = GOOD.replace('tool = "shell"', f"tool = {tool!r}".replace("'", '"'), 1)
    found = read_grant_file(write(tmp_path / "user.toml", text), "user")
    assert found.grants == {} and found.problems


def test_ignored_grants_survive_a_later_write(tmp_path) -> None:
    """Rules tightened: the grant is ignored, but the file still holds it for the user to see
    (a write by this cockpit does not silently delete it)."""
    path = tmp_path / "user.toml"
    found = GrantFile(path, "user")
    found.grants["g-old"] = grant("g-old", prefix="git status; ls")
    write(path, dump_grant_file(found))
    update_grant_file(path, "user", None, lambda f: f.grants.__setitem__("g-new", grant("g-new")))
    again = read_grant_file(path, "user")
    assert list(again.grants) == ["g-new"] and "g-old" in again.ignored


def test_a_broken_file_is_never_overwritten(tmp_path) -> None:
    path = write(tmp_path / "user.toml", "version = 1\n[grant.g-1\n")
    before = path.read_bytes()
    with pytest.raises(GrantFileError, match="fix or remove it"):
        update_grant_file(path, "user", None, lambda f: None)
    assert path.read_bytes() == before


def test_writes_leave_no_temporary_files_and_private_modes(tmp_path) -> None:
    path = tmp_path / "grants" / "user.toml"
    for n in range(5):
        update_grant_file(path, "user", None,
                          lambda f, n=n: f.grants.__setitem__(f"g-{n}", grant(f"g-{n}")))
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == [".user.toml.lock", "user.toml"]
    assert (path.stat().st_mode & 0o777) == 0o600
    assert len(read_grant_file(path, "user").grants) == 5


def test_a_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch) -> None:
    path = tmp_path / "user.toml"
    update_grant_file(path, "user", None, lambda f: f.grants.__setitem__("g-1", grant("g-1")))
    before = path.read_bytes()

    def boom(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(GrantFileError, match="No space left"):
        update_grant_file(path, "user", None, lambda f: f.grants.__setitem__("g-2", grant("g-2")))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".user.toml.lock", "user.toml"]
