"""The listing's filter: `keep` over many paths (git's ten thousand at once, judged over the
distinct names they use when it can) keeps exactly the paths the filter keeps one by one:
ignored names and suffixes at any depth, patterns, paths kept out and what is below them,
empty, `.`, `..` and `.git` parts, absolute paths and NULs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine_adapter.checkpoints.listing import DEFAULT_IGNORE, _Filter

PARTS = st.sampled_from(["a", "b", "src", "x.py", "y.pyc", "__pycache__", ".git", ".gitignore",
                         "node_modules", "", ".", "..", "keep", "out", "build", "mod.txt",
                         "a\0b", "tmp~", ".cache"])
PATHS = st.lists(st.lists(PARTS, min_size=1, max_size=4).map("/".join), max_size=30)
PATTERNS = st.lists(st.sampled_from(["*.pyc", "*~", "build", "tmp*", "*.t?t", ".cache"]),
                    max_size=3)
OUT = st.lists(st.sampled_from(["out", "a/out", "src/keep", "b"]), max_size=2)


@settings(max_examples=300, deadline=None)
@given(paths=PATHS, patterns=PATTERNS, out=OUT)
def test_keep_is_the_filter_path_by_path(paths, patterns, out) -> None:
    kept = _Filter((*DEFAULT_IGNORE, *patterns), out)
    one_by_one = [path for path in paths if _Filter((*DEFAULT_IGNORE, *patterns), out)(path)]
    assert kept.keep(paths) == one_by_one


def test_a_clean_listing_is_kept_whole_and_one_ignored_part_anywhere_drops_its_path() -> None:
    paths = [f"pkg{i}/mod{j}.py" for i in range(20) for j in range(20)]
    assert _Filter(DEFAULT_IGNORE).keep(paths) == paths
    for bad in ("pkg3/__pycache__/mod1.py", "pkg3/mod1.pyc", "/etc/passwd", "pkg3//x",
                "pkg3/../x", ".git/config", "out/x", "pkg3/x\0y"):
        assert _Filter(DEFAULT_IGNORE, ["out"]).keep([*paths, bad]) == paths, bad
