"""Look-alike text in what a human approves: mixed scripts, full-width letters, invisibles.

`gіt` with a Cyrillic `і` reads as `git` and is a different program; a grant for it allows the
look-alike, never `git`. Text safety (`engine_adapter.text`) shows invisible characters as
markers, but a look-alike letter is visible and shows as itself: it needs saying in words.
`lookalike_marks(text)` finds, in a command (or any input value):

- a *word* (a run between spaces and shell punctuation) that mixes Latin with a script whose
  letters pass for Latin ones (Cyrillic, Greek, Armenian, Cherokee, …; `CONFUSABLE_SCRIPTS`),
  or two such scripts: the letters not of its main script;
- a *program word* (the first word of the text and each word after `|`, `;`, `&`, `(`, a
  backtick, `$(`, a newline) with any non-ASCII letter or digit at all: program names are
  ASCII in practice, so a wholly Cyrillic `сurl` is marked too;
- a letter or digit whose compatibility form is ASCII (full-width `ｇｉｔ`, mathematical `𝐠𝐢𝐭`,
  ligatures `ﬁ`), anywhere;
- a zero-width, joiner, bidi or other invisible format character (category Cf, and the
  default-ignorable fillers), anywhere — a joiner inside an emoji too: a command needs none.

Each mark names the word (its invisibles as `⟨U+200D⟩` markers) and each odd character with its
script and code point: `gіt (і is Cyrillic U+0456)`. Pure functions; no Textual, no I/O. The
scan is a C-speed regex over ASCII text (nearly every command), per character only where
a character is not ASCII, and capped (`SCAN_LIMIT`) so a huge value costs a bounded time.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from engine_adapter.text import marked, marker

__all__ = ["CONFUSABLE_SCRIPTS", "MAX_DISTINCT", "MAX_WORDS", "SCAN_LIMIT", "LookalikeMark",
           "OddCharacter", "lookalike_marks", "lookalike_scan", "marks_line", "script_of"]

SCAN_LIMIT = 200_000  # characters of one text scanned (the bar shows far fewer)
MAX_MARKS = 8  # marks reported for one text (then "and N more")
MAX_WORDS = 2_000  # words beyond ASCII looked at in one text (each costs a few µs) ...
MAX_DISTINCT = 300  # ... of which distinct (each costs tens of µs): some 20 ms a text at most

_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# Where a word ends: spaces and the shell's punctuation (quotes too: `"gіt"` is the word gіt).
_SEPARATORS = " \t\n\r|;&()<>`'\"$=,:/\\{}[]"
_WORD = re.compile("[^" + re.escape(_SEPARATORS) + "]+")
_SEPARATOR_SET = frozenset(_SEPARATORS)
# What puts the next word in a program's place (`$(` ends in `(`).
_PROGRAM_AFTER = frozenset("|;&(`\n")
# Scripts with letters that pass for Latin ones (Unicode's confusables: `і`, `ο`, `օ`, `Ꭺ`, …).
CONFUSABLE_SCRIPTS = frozenset({"Cyrillic", "Greek", "Armenian", "Cherokee", "Coptic", "Lisu",
                                "Canadian", "Georgian", "Gothic", "Old Italic", "Runic",
                                "Tifinagh", "Vai", "Osage", "Warang", "Deseret", "Adlam",
                                "Bamum", "Nko", "NKo", "Ol"})
# Invisible characters that are not Cf but render as nothing (default-ignorable fillers).
_FILLERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")


@dataclass(frozen=True, slots=True)
class OddCharacter:
    """One character worth naming: `what` is its script ("Cyrillic"), or "full-width",
    "mathematical", "invisible", "a bidi control"."""

    char: str
    what: str

    def describe(self) -> str:
        """`і is Cyrillic U+0456` (an invisible one by its marker: `⟨U+200D⟩ is invisible`)."""
        code = ord(self.char)
        if self.what in ("invisible", "a bidi control"):
            return f"{marker(self.char)} is {self.what}"
        return f"{self.char} is {self.what} U+{code:04X}"


@dataclass(frozen=True, slots=True)
class LookalikeMark:
    """A word and the odd characters in it."""

    word: str
    odd: tuple[OddCharacter, ...]

    def describe(self) -> str:
        """`gіt (і is Cyrillic U+0456)`: the word with its invisibles as markers."""
        return f"{marked(self.word)} ({', '.join(o.describe() for o in self.odd)})"


def script_of(ch: str) -> str:
    """The script a letter or digit belongs to, by its Unicode name ("Latin", "Cyrillic",
    "Greek"; "full-width", "mathematical"); "Common" for digits and modifier letters, "" for
    what is neither a letter nor a digit (spaces, punctuation, symbols, combining marks)."""
    if not unicodedata.category(ch).startswith(("L", "N")):
        return ""
    words = unicodedata.name(ch, "UNNAMED").split()
    first = words[0]
    if first in ("FULLWIDTH", "HALFWIDTH"):
        return "full-width"
    if first == "MATHEMATICAL":
        return "mathematical"
    if first in ("DIGIT", "MODIFIER", "SUPERSCRIPT", "SUBSCRIPT", "VULGAR", "ROMAN"):
        return "Common"
    if first == "OLD" and len(words) > 1:  # Old Italic, Old Persian, …
        return f"Old {words[1].title()}"
    return _SPELLED.get(first, first.title())


_SPELLED = {"CJK": "CJK", "NKO": "NKo"}


def _always_odd(ch: str) -> str | None:
    """What makes `ch` odd wherever it is: invisible, a bidi control, or a look-alike form of
    an ASCII letter or digit (full-width, mathematical, compatibility); None: nothing."""
    code = ord(ch)
    if 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069 or ch in "\u200e\u200f\u061c":
        return "a bidi control"
    if unicodedata.category(ch) == "Cf" or ch in _FILLERS:
        return "invisible"
    script = script_of(ch)
    if script in ("full-width", "mathematical"):
        return script
    folded = unicodedata.normalize("NFKC", ch)
    if folded != ch and folded.isascii() and folded.isalnum():
        return f"a look-alike of {folded}"
    return None


def _confusably_mixed(scripts: dict[str, int]) -> bool:
    """Whether a word's scripts mix letters that pass for each other: Latin with any script
    whose letters pass for Latin ones, or two such scripts. (Japanese mixes kanji and kana,
    and a word may hold kanji and Latin: neither passes for the other.)"""
    confusable = CONFUSABLE_SCRIPTS.intersection(scripts)
    return bool(confusable) and ("Latin" in scripts or len(confusable) > 1)


def _kind(ch: str) -> str:
    """What a character without a script is, in words ("a combining mark", "a symbol")."""
    category = unicodedata.category(ch)
    return {"M": "a combining mark", "S": "a symbol", "P": "punctuation",
            "Z": "a space"}.get(category[0], "not ASCII")


def _word_marks(word: str, program: bool) -> tuple[OddCharacter, ...]:
    odd: dict[str, OddCharacter] = {}
    scripts: dict[str, int] = {}
    for ch in word:
        if ch.isascii():
            if ch.isalpha():
                scripts["Latin"] = scripts.get("Latin", 0) + 1
            continue
        what = _always_odd(ch)
        if what is not None:
            odd.setdefault(ch, OddCharacter(ch, what))
            continue
        script = script_of(ch)
        if script and script != "Common":
            scripts[script] = scripts.get(script, 0) + 1
    if program:  # a program's name: every character that is not ASCII (a combining mark too)
        for ch in word:
            if not ch.isascii() and ch not in odd:
                odd[ch] = OddCharacter(ch, script_of(ch) or _kind(ch))
    elif _confusably_mixed(scripts):  # the letters not of the word's main script (Latin first)
        main = "Latin" if "Latin" in scripts else max(scripts, key=lambda s: scripts[s])
        for ch in word:
            if ch not in odd and not ch.isascii() and script_of(ch) not in ("", "Common", main):
                odd[ch] = OddCharacter(ch, script_of(ch))
    return tuple(odd.values())


def lookalike_marks(text: str, *, command: bool = True) -> list[LookalikeMark]:
    """Every word of `text` with a look-alike or invisible character, in order, each once
    (see the module docstring); [] for ASCII text. `command=False` (a path, a diff, a
    message): no word is in a program's place, so a word wholly in one script is never marked
    (a diff in Russian is not suspicious; `gіt` in it still is)."""
    return lookalike_scan(text, command=command)[0]


def lookalike_scan(text: str, *, command: bool = True) -> tuple[list[LookalikeMark], bool]:
    """`lookalike_marks`, and whether the scan read all of `text`: it stops after
    `SCAN_LIMIT` characters, `MAX_WORDS` words beyond ASCII or `MAX_DISTINCT` distinct ones (a
    bounded time on the event loop, whatever an agent sends)."""
    complete = len(text) <= SCAN_LIMIT or text[SCAN_LIMIT:].isascii()
    text = text[:SCAN_LIMIT]
    if not _NON_ASCII.search(text):
        return [], complete
    marks: list[LookalikeMark] = []
    seen: set[tuple[str, bool]] = set()
    end = 0  # where the last word looked at ends
    looked = 0
    # Only words holding a character beyond ASCII can be marked: find those characters at C
    # speed and widen each to its word (each word once, so the whole scan is linear).
    for found in _NON_ASCII_RUN.finditer(text):
        at = found.start()
        if at < end:
            continue  # in the word just looked at
        start = at
        while start > 0 and text[start - 1] not in _SEPARATOR_SET:
            start -= 1
        word_end = _WORD.match(text, at)
        end = word_end.end() if word_end else at + 1
        looked += 1
        if looked > MAX_WORDS:
            return marks, False
        word = text[start:end]
        program = command and _in_program_place(text, start)
        if (word, program) in seen:
            continue
        if len(seen) >= MAX_DISTINCT:
            return marks, False
        seen.add((word, program))
        odd = _word_marks(word, program)
        if odd:
            marks.append(LookalikeMark(word, odd))
    return marks, complete


def _in_program_place(text: str, start: int) -> bool:
    """Whether the word at `start` is where a program is named: the first word, or the first
    after an operator (`|`, `;`, `&`, `(`, `$(`, a backtick, a new line), quotes and blanks
    between them skipped."""
    i = start - 1
    while i >= 0 and text[i] in " \t\r\"'":
        i -= 1
    return i < 0 or text[i] in _PROGRAM_AFTER


def marks_line(marks: list[LookalikeMark], limit: int = MAX_MARKS) -> str:
    """The marks in one line ("" for none): "look-alike or hidden characters: gіt (і is
    Cyrillic U+0456)"."""
    if not marks:
        return ""
    shown = "; ".join(m.describe() for m in marks[:limit])
    more = f"; and {len(marks) - limit} more" if len(marks) > limit else ""
    return f"look-alike or hidden characters: {shown}{more}"
