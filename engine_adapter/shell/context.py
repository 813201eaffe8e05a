"""Where a command line is read, and word helpers: the workspace, the directory relative paths
start from, whether a path may land outside the workspace, and how options give their values.

Shared by the classifier and its per-program rules.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine_adapter.files import runs_later_by_name
from engine_adapter.shell.lexer import Word

__all__ = ["Context", "has_long", "has_short", "non_options", "option_values", "outside",
           "runs_later_target"]

# Work (characters lexed, words judged) one call may cost before it counts as unreadable:
# wrappers and nested lines are read again at every word that may start a command, so a
# hostile line could otherwise cost minutes.
_WORK_LIMIT = 50_000
_OVERHEAD = 16  # a call costs this much besides its length
_REALPATH_COST = 64


@dataclass
class _Work:
    done: int = 0


@dataclass
class Context:
    """Where the shell is while a line is read: the workspace `root`, the directory relative
    paths start from (`None` once a `cd` went somewhere the classifier cannot follow), and
    whether anything read so far removes files (for `find -exec` / `xargs`)."""

    root: Path
    base: Path | None
    depth: int = 0
    removes: bool = False
    work: _Work = field(default_factory=_Work)

    def child(self) -> Context:
        """A context for a nested line: same place, one level deeper, same work budget."""
        return Context(self.root, self.base, self.depth + 1, work=self.work)

    @property
    def exhausted(self) -> bool:
        """Whether the work budget is spent (every further step answers tier 4)."""
        return self.work.done > _WORK_LIMIT

    def spend(self, amount: int) -> bool:
        """Count `amount` of work; False once the budget is spent."""
        self.work.done += amount + _OVERHEAD
        return self.work.done <= _WORK_LIMIT


# -- words ---------------------------------------------------------------------------------------

_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
_UNKNOWN = Word("", "", True)


def outside(word: Word, ctx: Context, *, opens_for_write: bool = False) -> bool:
    """Whether a path word may resolve outside the workspace. A device such as `/dev/null` is
    harmless only where the command opens it to write (a redirection, an output option): as
    an operand of `rm`, `mv` or `chmod` it would be removed or replaced."""
    text = word.text
    if text == "-" and not word.opaque:
        return False
    if opens_for_write and not word.opaque and (text in _DEVICES
                                                or text.startswith("/dev/fd/")):
        return False
    if word.opaque or text.startswith("~") or not text:
        return True
    if not text.startswith("/") and ctx.base is None:
        return True
    base = ctx.base or ctx.root
    ctx.spend(_REALPATH_COST)  # a file-system walk: counted, so a hostile line stays cheap
    try:
        real = Path(os.path.realpath(os.path.join(base, text)))
    except ValueError:  # a NUL in the path: no file has that name, so judge it the worst way
        return True
    return not (real == ctx.root or real.is_relative_to(ctx.root))


def runs_later_target(word: Word, ctx: Context) -> str | None:
    """Why a path a command writes lands in a file that runs later by itself (the git dir, a
    start-up file, `.envrc`: `engine_adapter.files.runs_later_by_name`), or None. A path
    known only when it runs is `outside`'s to judge."""
    text = word.text
    if word.opaque or not text or text.startswith("~") or (
            ctx.base is None and not text.startswith("/")):
        return None
    ctx.spend(_REALPATH_COST)
    joined = os.path.join(ctx.base or ctx.root, text)
    if "\0" in joined:  # no file has that name (`outside` judges it the worst way)
        return None
    return runs_later_by_name(ctx.root, os.path.realpath(joined), joined)


def has_short(words: Sequence[Word], letters: str) -> bool:
    """Whether a short option cluster (`-rf`) holds any of `letters`."""
    return any(w.text.startswith("-") and not w.text.startswith("--")
               and any(letter in w.text[1:] for letter in letters) for w in words)


def has_long(words: Sequence[Word], *names: str) -> bool:
    """A `--name` option, or any abbreviation of it (GNU getopt and git accept unique ones)."""
    for w in words:
        if w.text.startswith("--") and len(w.text) > 2:
            given = w.text.split("=", 1)[0]
            if any(name.startswith(given) for name in names):
                return True
    return False


def non_options(words: Sequence[Word]) -> list[Word]:
    """The words that are not options (`-` counts as an operand)."""
    return [w for w in words if not w.text.startswith("-") or w.text == "-"]


def option_values(args: Sequence[Word], letters: str, longs: Sequence[str]) -> list[Word]:
    """The values given to the named options: `-o x`, `-ox`, `-so x`, `--output x`,
    `--output=x`, `--out=x` (an abbreviation), `-output=x` (a single-dash long option)."""
    values: list[Word] = []
    lowered = [name.lower() for name in longs]
    for j, word in enumerate(args):
        text = word.text
        following = args[j + 1] if j + 1 < len(args) else _UNKNOWN
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            name = name.lower()
            if name and any(long.startswith(name) for long in lowered):
                values.append(Word(value, value, word.opaque) if eq else following)
        elif text.startswith("-") and len(text) > 1:
            name, eq, value = text[1:].partition("=")
            if len(name) > 1 and name.lower() in lowered:
                values.append(Word(value, value, word.opaque) if eq else following)
                continue
            for k, letter in enumerate(text[1:], start=1):
                if letter in letters:
                    rest = text[k + 1:]
                    values.append(Word(rest, rest, word.opaque) if rest else following)
                    break
    return values
