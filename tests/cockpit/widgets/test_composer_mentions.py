"""`@` in the message box: a fuzzy list of the workspace's files (git-aware: what git ignores is
left out), `up`/`down` move, `tab` or `enter` completes to `@path` (quoted when the path has a
space), `escape` closes the list and never cancels the run, an `@` inside a word (an e-mail
address) opens nothing, and the files are listed once, off the loop, then again after a turn.
Pilot tests on the live cockpit over a real git repository."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.event_loop import run
from support.live_app import hold, make_app, settle, turn

from cockpit.widgets.file_matches import FileIndex
from engine_adapter.files.mentions import find_mentions

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    for name in ("src/app.py", "src/apply_patch.py", "README.md", "my notes.md", "build.log"):
        (root / name).write_text("x\n")
    (root / ".gitignore").write_text("*.log\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    return root


def _app(repo):
    return make_app(turn(1), hold(), cwd=str(repo), next_steps=lambda text: [turn(1)])


def _listed(app):
    composer = app.composer
    return [m.path for m in composer._file_matches]


async def _open(pilot, app, text):
    """Into the box, type `text` (holding an `@`) and wait for the workspace's files."""
    await settle(pilot, lambda: app.view.live)
    await pilot.press("t")
    await _type(pilot, text)
    await settle(pilot, lambda: app.composer.files is not None)


def _label(app):
    return str(app.composer.query_one("#composer-label").render())


async def _type(pilot, text):
    await pilot.press(*[{" ": "space", "@": "at", "/": "slash", ".": "full_stop"}.get(c, c)
                        for c in text])


def test_at_opens_the_list_filters_moves_and_tab_completes(repo):
    async def main():
        app = _app(repo)
        async with app.run_test(size=SIZE) as pilot:
            await _open(pilot, app, "fix @")
            assert "build.log" not in app.composer.files.paths  # ignored by git
            assert ".gitignore" in app.composer.files.paths  # untracked, not ignored
            await _type(pilot, "app")
            assert _listed(app) == ["src/app.py", "src/apply_patch.py"]
            assert "mention a file 2 matches among 5 files" in _label(app)
            await pilot.press("down")
            await pilot.press("tab")
            assert app.composer.box.value == "fix @src/apply_patch.py "
            assert not app.composer.completing
            assert _label(app).startswith("message to the agent")
            assert app.steering.queue.items == ()  # tab never sends
    run(main())


def test_enter_completes_while_the_list_is_open_then_sends(repo):
    async def main():
        app = _app(repo)
        async with app.run_test(size=SIZE) as pilot:
            await _open(pilot, app, "read @")
            await _type(pilot, "notes")
            assert _listed(app) == ["my notes.md"]
            await pilot.press("enter")
            assert app.composer.box.value == 'read @"my notes.md" '
            assert find_mentions(app.composer.box.value) == ["my notes.md"]
            await pilot.press("enter")
            assert app.steering.queue.items == ('read @"my notes.md"',)
    run(main())


def test_escape_closes_the_list_and_does_not_cancel_the_run(repo):
    async def main():
        app = _app(repo)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t")
            await _type(pilot, "@rea")
            await settle(pilot, lambda: bool(_listed(app)))
            assert _listed(app) == ["README.md"]
            await pilot.press("escape")
            assert not app.composer.completing and app.composer.box.value == "@rea"
            await pilot.press("escape")  # now it leaves the box; the run goes on
            assert app.view.live and not app.session.cancel_token.cancelled
    run(main())


def test_an_at_inside_a_word_opens_nothing(repo):
    async def main():
        app = _app(repo)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t")
            await _type(pilot, "mail ada@src")
            assert not app.composer.completing and app.composer.files is None  # never listed
    run(main())


def test_the_files_are_listed_again_only_after_a_turn(repo):
    async def main():
        app = _app(repo)
        async with app.run_test(size=SIZE) as pilot:
            await _open(pilot, app, "@")
            first = app.composer.files
            await _type(pilot, "src x @READ")  # more keys, another @: the same list
            assert app.composer.files is first
            (repo / "NEW.md").write_text("new")
            app.composer.box.value = ""
            app.session.cancel()  # the task ends: a turn went by
            await settle(pilot, lambda: not app.view.live)
            await _type(pilot, "@NEW")
            await settle(pilot, lambda: app.composer.files is not first)
            await settle(pilot, lambda: _listed(app) == ["NEW.md"])
    run(main())


def test_the_list_shows_at_most_ten_and_a_hostile_name_escaped(repo):
    for n in range(15):
        (repo / f"mod{n:02d}.py").write_text("")
    (repo / "evil\x1b[31m.py").write_text("")

    async def main():
        app = _app(repo)
        async with app.run_test(size=(40, 12)) as pilot:
            await _open(pilot, app, "@")
            await _type(pilot, "py")
            assert len(_listed(app)) == 10
            await pilot.press("backspace", "backspace")
            await _type(pilot, "evil")
            listing = app.composer.query_one("#commands")
            row = str(listing.get_option_at_index(0).prompt)
            assert row == "evil\\x1b[31m.py"
            await pilot.press("tab")
            assert app.composer.box.value == '@"evil\\x1b[31m.py" '
    run(main())


def test_fuzzy_ranking_name_start_then_name_then_path_then_letters():
    index = FileIndex(["docs/app-notes.md", "src/app.py", "lib/mapper.py", "a/p/p.txt",
                       "zapp.py"])
    assert [m.path for m in index.match("app", 10)] == [
        "src/app.py", "docs/app-notes.md", "zapp.py", "lib/mapper.py", "a/p/p.txt"]
    assert [m.path for m in FileIndex([".gitignore", "my notes.md"]).match("no")] == [
        "my notes.md", ".gitignore"]  # a word of the name starts with it
    assert FileIndex(["my notes.md"]).match("no")[0].positions == (3, 4)
    assert index.match("app", 1)[0].positions == (4, 5, 6)
    assert index.match("x" * 300) == []


def test_snapshot_of_the_open_list_at_80x24(snap_compare, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # the workspace reads as ~/projects/greeter
    root = tmp_path / "projects" / "greeter"
    (root / "src" / "greeter").mkdir(parents=True)
    for name in ("src/greeter/app.py", "src/greeter/apply.py", "tests/test_app.py",
                 "docs/api.md", "README.md", "pyproject.toml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    app = make_app(turn(1, "Looking at the code."), hold(), cwd=str(root), clock=None,
                   next_steps=lambda text: [turn(1)])

    async def run_before(pilot):
        await settle(pilot, lambda: pilot.app.view.live)
        await pilot.press("t")
        await _type(pilot, "explain @")
        await settle(pilot, lambda: pilot.app.composer.files is not None)
        await _type(pilot, "ap")
        pilot.app.composer.box.cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


PATHS = st.lists(st.text(st.sampled_from("abAB/_. -x"), min_size=1, max_size=12), max_size=40,
                 unique=True)


@given(PATHS, st.text(st.sampled_from("abAB/_. -x"), max_size=4))
def test_every_match_is_a_subsequence_marked_where_it_matched(paths, query):
    found = FileIndex(paths).match(query, 50)
    for match in found:
        assert match.path in paths
        if query:
            assert len(match.positions) == len(query)
            assert list(match.positions) == sorted(set(match.positions))
            assert "".join(match.path[i] for i in match.positions).lower() == query.lower()
    expected = {p for p in paths
                if re.search(".*?".join(map(re.escape, query.lower())), p.lower())}
    assert len(found) == min(50, len(expected)) and {m.path for m in found} <= expected


@given(PATHS, st.text(st.sampled_from("abx/."), min_size=1, max_size=3), st.randoms())
def test_the_ranking_does_not_depend_on_the_listing_order(paths, query, rnd):
    shuffled = list(paths)
    rnd.shuffle(shuffled)
    assert FileIndex(paths).match(query) == FileIndex(shuffled).match(query)


def test_an_at_and_ten_thousand_letters_lists_nothing_and_sends_as_text(repo):
    async def main():
        app = _app(repo)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.view.live)
            await pilot.press("t", "at")
            await settle(pilot, lambda: app.composer.files is not None)
            app.composer.box.value = "@" + "a" * 10_000
            await pilot.pause()
            assert not app.composer.completing
            await pilot.press("enter")
            assert app.steering.queue.items == ("@" + "a" * 10_000,)
    run(main())


def test_outside_git_a_walk_capped_and_said(tmp_path, monkeypatch):
    from cockpit.live import mention_files

    monkeypatch.setattr(mention_files, "FILES_LIMIT", 3)
    root = tmp_path / "plain"
    (root / ".venv").mkdir(parents=True)
    (root / ".venv" / "big.py").write_text("")
    (root / "linked").symlink_to(tmp_path)  # a link to a folder: never walked into
    for name in ("a.py", "b.py", "c.py", "d.py"):
        (root / name).write_text("")

    async def main():
        app = _app(root)
        async with app.run_test(size=SIZE) as pilot:
            await _open(pilot, app, "@")
            paths = app.composer.files.paths
            assert len(paths) == 3 and not any(p.startswith((".venv", "linked/"))
                                               for p in paths)
            notes = [str(n.message) for n in app._notifications]
            assert any("the workspace has more than 3 files: the @ list holds 3 of them" in n
                       for n in notes), notes
    run(main())


@given(PATHS, st.lists(st.text(st.sampled_from("abx/."), max_size=4), max_size=6))
def test_typing_on_gives_what_a_fresh_index_gives(paths, queries):
    typed = FileIndex(paths)  # one index, the queries one after another (narrowing)
    for query in queries:
        assert typed.match(query) == FileIndex(paths).match(query)


def _ranked_by_definition(paths: list[str], query: str, limit: int) -> list[str]:
    """The ranking as the module states it, every path ranked: the reference the tiered,
    early-stopping search must give."""
    q = query.lower()
    ranked = []
    for path in paths:
        lower = path.lower()
        name = lower[lower.rfind("/") + 1:]
        letters = ".*?".join(map(re.escape, q))
        if name.startswith(q):
            tier = 0
        elif q in name:
            tier = 1 if re.search(r"[ \t_.\-]" + re.escape(q), name) else 2
        elif q in lower:
            tier = 3
        elif re.search(letters, name, re.DOTALL):
            tier = 4
        elif re.search(letters, lower, re.DOTALL):
            tier = 5
        else:
            continue
        ranked.append((tier, len(path), path))
    return [path for *_, path in sorted(ranked)[:limit]]


@given(st.lists(st.text(st.sampled_from("abAB/_. -x\n"), min_size=1, max_size=12),
                max_size=60, unique=True),
       st.text(st.sampled_from("abAB/_. -x"), min_size=1, max_size=4),
       st.integers(1, 12))
def test_the_tiers_stop_early_but_rank_as_defined(paths, query, limit):
    found = [m.path for m in FileIndex(paths).match(query, limit)]
    assert found == _ranked_by_definition(paths, query, limit)


def test_a_big_list_is_matched_off_the_loop_and_a_fast_tab_still_completes_what_is_typed(
        repo):
    """Over FILES_AT_ONCE files the matching runs in a thread: the rows come when it answers,
    the newest keystroke's; a tab pressed before the answer completes what is typed."""
    from cockpit.widgets.composer import FILES_AT_ONCE

    many = [f"pkg{i // 100}/mod{i}.py" for i in range(FILES_AT_ONCE + 500)] + ["src/app.py"]

    async def main():
        app = _app(repo)
        async with app.run_test(size=SIZE) as pilot:
            await _open(pilot, app, "fix @")
            app.composer.set_files(many)
            await _type(pilot, "mod12")
            await settle(pilot, lambda: app.composer._matching is None)
            assert _listed(app)[0] == "pkg0/mod12.py"
            assert all(re.search("m.*o.*d.*1.*2", path) for path in _listed(app))
            # and tab before the thread answers (here: a thread that never does)
            app.composer._match_in_thread = lambda index, query: None
            await _type(pilot, "34")
            assert app.composer._matching == "mod1234" and app.composer.completing
            await pilot.press("tab")
            assert app.composer.box.value == "fix @pkg12/mod1234.py "
    run(main())
