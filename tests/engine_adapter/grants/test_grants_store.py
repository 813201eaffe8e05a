"""The grant store: a project is its real path, saved grants live outside the workspace, and
concurrent cockpits (real processes) never lose a grant or tear the file."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from support.event_loop import run
from support.paths import ROOT
from support.steps import StepRunner

from engine_adapter import Session, TaskState
from engine_adapter.grants import GrantFileError, GrantStore, project_identity
from engine_adapter.grants.grant_file import read_grant_file


@pytest.fixture
def places(tmp_path):
    """A grants folder outside two sibling projects, `/a` and `/a-other`, and a link to `/a`."""
    grants = tmp_path / "config" / "grants"
    a = tmp_path / "src" / "a"
    other = tmp_path / "src" / "a-other"
    a.mkdir(parents=True)
    other.mkdir()
    link = tmp_path / "link-to-a"
    link.symlink_to(a)
    return grants, a, other, link


def test_a_project_is_its_real_path(places) -> None:
    _, a, _, link = places
    assert project_identity(a) == (str(a), None)
    assert project_identity(str(a) + "/.") == (str(a), None)
    real, why = project_identity(link)
    assert real is None and "symbolic link" in why and str(a) in why
    real, why = project_identity(link / "sub")
    assert real is None


def test_a_grant_for_a_never_applies_in_a_other_or_through_a_link(places) -> None:
    grants, a, other, link = places
    GrantStore(grants, project=a).add_grant("project", "shell", "git status", 3)
    assert GrantStore(grants, project=a).match("shell", "git status", 3) is not None
    for elsewhere in (other, link, a.parent, a / "sub"):
        (a / "sub").mkdir(exist_ok=True)
        store = GrantStore(grants, project=elsewhere)
        assert store.match("shell", "git status", 3) is None, elsewhere
        assert store.grants() == []
    assert "symbolic link" in (GrantStore(grants, project=link).unavailable("project") or "")


def test_project_files_record_their_project_and_differ(places) -> None:
    grants, a, other, _ = places
    store_a, store_o = GrantStore(grants, project=a), GrantStore(grants, project=other)
    assert store_a.path("project") != store_o.path("project")
    store_a.add_grant("project", "shell", "npm test", 3)
    path = store_a.path("project")
    assert path is not None and f'project = "{a}"' in path.read_text()
    # The file copied to the other project's name is refused: it names /a.
    target = store_o.path("project")
    assert target is not None
    target.write_bytes(path.read_bytes())
    os.chmod(target, 0o600)
    again = GrantStore(grants, project=other)
    assert again.grants() == [] and any("another project" in p for p in again.problems)


def test_user_grants_apply_in_every_project(places) -> None:
    grants, a, other, link = places
    GrantStore(grants, project=a).add_grant("user", "shell", "git log", 3)
    for where in (a, other, link):
        assert GrantStore(grants, project=where).match("shell", "git log", 3) is not None


@pytest.mark.parametrize("inside", ["grants", ".config/cockpit/grants", "."])
def test_a_grants_folder_inside_the_workspace_is_never_read(tmp_path, inside) -> None:
    workspace = tmp_path / "home"
    folder = workspace / inside
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "user.toml").write_text(
        "[grant.g-1]\ntool = \"shell\"\nprefix = \"git push\"\nmax_tier = 3\n"
        "created = 2025-06-01T10:00:00Z\n")
    os.chmod(folder / "user.toml", 0o600)
    store = GrantStore(folder, project=workspace)
    assert store.grants() == [] and store.match("shell", "git push", 3) is None
    assert store.off is not None and "inside the workspace" in store.off
    with pytest.raises(GrantFileError, match="inside the workspace"):
        store.add_grant("user", "shell", "git status", 3)


@pytest.mark.parametrize("linked", ["grants", "grants/projects", "config"])
def test_a_grants_folder_a_link_puts_in_the_workspace_is_never_read(places, linked) -> None:
    """A link (the grants folder, its `projects/`, or a folder above them) that leads into the
    workspace makes that file one the agent can write: its scope is off, said so."""
    grants, a, _, _ = places
    config = grants.parent
    target = a / ".forged"
    target.mkdir()
    if linked == "config":
        config.parent.mkdir(parents=True, exist_ok=True)
        config.symlink_to(target)
        (target / "grants" / "projects").mkdir(parents=True)
    elif linked == "grants":
        config.mkdir(parents=True)
        grants.symlink_to(target)
        (target / "projects").mkdir()
    else:
        grants.mkdir(parents=True)
        (grants / "projects").symlink_to(target)
    path = GrantStore(grants, project=a).path("project")
    assert path is not None
    (path.parent / path.name).write_text(f'version = 1\nproject = "{a}"\n' + FORGED.split(
        "\n", 1)[1])
    os.chmod(path, 0o600)
    store = GrantStore(grants, project=a)
    assert store.grants() == [] and store.match("shell", "curl", 3) is None
    why = store.unavailable("project")
    assert why is not None and "workspace" in why and any("workspace" in p
                                                          for p in store.problems)
    with pytest.raises(GrantFileError, match="workspace"):
        store.add_grant("project", "shell", "git status", 3)
    if linked == "grants/projects":  # only the project file is reached through the link
        assert store.unavailable("user") is None
        store.add_grant("user", "shell", "git status", 3)


HOSTILE_NAMES = [".cockpit/grants.toml", "grants.toml", "user.toml", ".cockpit/user.toml",
                 "grants/user.toml", ".config/cockpit/grants/user.toml",
                 "projects/a.toml", ".cockpitrc"]
FORGED = ("version = 1\n[grant.g-forged]\ntool = \"shell\"\nprefix = \"curl\"\nmax_tier = 3\n"
          "created = 2025-06-01T10:00:00Z\n")


def test_the_agent_writing_files_in_the_workspace_never_changes_what_is_granted(places):
    grants, a, _, _ = places
    GrantStore(grants, project=a).add_grant("project", "shell", "git status", 3)

    async def forge(r: StepRunner) -> None:  # what an agent with write access would try
        for name in HOSTILE_NAMES:
            path = a / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(FORGED)
            os.chmod(path, 0o600)
        await r.ask("c1", "shell", {"command": "curl -s https://example.com"})
        await r.ask("c2", "shell", {"command": "git status"})

    store = GrantStore(grants, project=a)
    before = store.grants()
    session = Session(StepRunner(forge), TaskState(task="t", cwd=str(a)), unattended=True,
                      grant_store=store)
    run(session.run())
    resolved = {e.approval_id: e for e in session.history if e.type == "approval_resolved"}
    assert resolved["c1"].via == "auto" and not resolved["c1"].allowed  # asked, not granted
    assert resolved["c2"].via == "grant" and resolved["c2"].scope == "project"
    assert [g.id for g in GrantStore(grants, project=a).grants()] == [g.id for g in before]


def test_revoke_clear_and_deny(places) -> None:
    grants, a, _, _ = places
    store = GrantStore(grants, project=a)
    g1 = store.add_grant("project", "shell", "git status", 3)
    g2 = store.add_grant("user", "shell", "npm test", 2)
    d1 = store.add_deny("user", "shell", "git push")
    assert store.add_grant("project", "shell", "git status", 3).id == g1.id  # no twin
    assert store.revoke(g2.id).prefix == "npm test"
    assert store.match("shell", "npm test", 2) is None
    with pytest.raises(GrantFileError, match="no saved grant"):
        store.revoke(g2.id)
    assert store.clear("project") == 1
    assert store.grants() == [] and [d.id for d in store.denies()] == [d1.id]
    store.revoke(d1.id)
    assert store.denies() == []


@pytest.mark.parametrize(("tool", "prefix", "says"), [
    ("shell", "", "blank"), ("shell", "git push; ls", "plain words"),
    ("shell", "$(x)", "plain words"), ("shell", "'git' push", "plain words"),
    ("shell", " ".join(["w"] * 9), "at most 8"), ("", "git push", "tool"),
    ("shell", "git\u202epush", "invisible"),
])
def test_a_deny_rule_is_plain_words(places, tool, prefix, says) -> None:
    grants, a, _, _ = places
    with pytest.raises(GrantFileError, match=says):
        GrantStore(grants, project=a).add_deny("user", tool, prefix)


@pytest.mark.parametrize(("scope", "tool", "prefix", "tier", "says"), [
    ("project", "shell", "git status; ls", 3, "would not grant"),
    ("project", "alter_verification", "x", 3, "never granted"),
    ("user", "shell", "rm", 4, "tier 4"),
    ("session", "shell", "ls", 3, "not saved"),
    ("galaxy", "shell", "ls", 3, "unknown scope"),
])
def test_add_grant_holds_the_session_rules(places, scope, tool, prefix, tier, says) -> None:
    grants, a, _, _ = places
    with pytest.raises(GrantFileError, match=says):
        GrantStore(grants, project=a).add_grant(scope, tool, prefix, tier)


def test_another_cockpits_grant_is_seen_at_the_next_look(places) -> None:
    grants, a, _, _ = places
    mine, theirs = GrantStore(grants, project=a), GrantStore(grants, project=a)
    theirs.add_deny("user", "shell", "git push")
    assert mine.stale() and mine.refresh()
    assert mine.deny_for("shell", {"command": "git push"}) is not None
    assert not mine.stale()


def test_last_use_is_written_and_merged(places) -> None:
    grants, a, _, _ = places
    store = GrantStore(grants, project=a)
    grant = store.add_grant("user", "shell", "git log", 3)
    other = GrantStore(grants, project=a)
    other.add_grant("user", "shell", "git diff", 3)  # written meanwhile by another cockpit
    store.record_use(grant)
    assert store.has_unsaved_usage()
    store.save_usage()
    path = store.path("user")
    assert path is not None
    found = read_grant_file(path, "user")
    assert found.grants[grant.id].last_used is not None
    assert {g.prefix for g in found.grants.values()} == {"git log", "git diff"}


WRITER = textwrap.dedent("""
    import sys
    from engine_adapter.grants import GrantStore
    folder, project, who, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = GrantStore(folder, project=project)
    for n in range(count):
        store.add_grant("user", "shell", f"prog{who}x{n}", 3)
        store.add_grant("project", "shell", f"prog{who}y{n}", 3)
""")
READER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from engine_adapter.grants.grant_file import read_grant_file
    path, rounds = Path(sys.argv[1]), int(sys.argv[2])
    torn = 0
    for _ in range(rounds):
        if read_grant_file(path, "user").broken is not None:
            torn += 1
    print(torn)
""")


def test_concurrent_cockpits_writing_the_same_file_lose_nothing(places) -> None:
    """Four real processes add grants to the same two files while a fifth reads: every grant
    lands, and no read ever sees half a file."""
    grants, a, _, _ = places
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers, count = 4, 15
    GrantStore(grants, project=a).add_grant("user", "shell", "seed", 3)
    user = grants / "user.toml"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(user), "400"], env=env,
                              stdout=subprocess.PIPE, text=True)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(grants), str(a), str(w),
                               str(count)], env=env) for w in range(writers)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    out, _ = reader.communicate(timeout=120)
    assert out.strip() == "0"
    store = GrantStore(grants, project=a)
    assert store.problems == []
    prefixes = {g.prefix for g in store.grants()}
    expected = {f"prog{w}{kind}{n}" for w in range(writers) for n in range(count)
                for kind in "xy"} | {"seed"}
    assert prefixes == expected
