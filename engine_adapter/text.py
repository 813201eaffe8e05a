"""The one policy for untrusted text: which characters are unsafe to show as they are, and how a
text is cut to a size while saying exactly how much was dropped.

Agent replies, tool output, commands and journal contents are untrusted. A character is
*unsafe* when showing it as it is could make the screen say something other than the text: a
terminal acts on it (C0/C1 controls, so every ESC sequence), it reorders what is read (bidi
controls, LRM/RLM/ALM), it is invisible (zero-width characters, word joiner, BOM, soft hyphen,
tag characters, Hangul fillers, other default-ignorable code points), it breaks a line only for
some readers (U+2028/U+2029), or it cannot be written at all (lone surrogates). Each view
decides only how an unsafe character is *displayed* (the TUI: a marker such as `␛` or
`⟨U+200B⟩` in a warning style; plain-text views: an escape such as `\\u200b`), never whether.

The decision, made with `unicodedata` categories plus explicit lists (Unicode 14, Python 3.11;
a test re-derives the categories so a newer Unicode cannot slip a new format character past):

- unsafe: every Cc (C0, DEL, C1) except tab and line feed, and except a carriage return that
  ends a line (`\\r\\n`); every Cf (bidi embeddings/overrides/isolates U+202A–202E and
  U+2066–2069, LRM/RLM U+200E/200F, ALM U+061C, zero-width U+200B/200C, word joiner and
  invisible operators U+2060–2064, deprecated format characters U+206A–206F, BOM U+FEFF, soft
  hyphen U+00AD, interlinear annotation U+FFF9–FFFB, tag characters U+E0001/E0020–E007F,
  prepended concatenation marks, Egyptian and shorthand format controls, …); Zl and Zp
  (U+2028, U+2029); Cs (lone surrogates); and the other default-ignorable code points that
  render as nothing (U+034F, U+115F–1160, U+17B4–17B5, U+180E, U+3164, U+FFA0, U+FFF0–FFF8,
  U+E0000–E0FFF outside the variation selectors).
- unsafe unless in context: a variation selector (U+FE00–FE0F, U+E0100–E01EF, Mongolian
  U+180B–180D/180F) is safe only directly after a visible non-ASCII character (a letter,
  digit, symbol or punctuation at U+00A0 or above: `⚠️`, an ideograph variant); anywhere else
  (after ASCII, at the start, after another selector — "emoji smuggling" hides data in runs of
  them) it is unsafe. A zero-width joiner (U+200D) is safe only inside an emoji sequence (a
  symbol ≥ U+2000 on each side, an optional U+FE0F or skin-tone modifier before it: `👩‍💻`).
- safe (shown as they are): tab and line feed (each view lays them out), every other space
  (Zs: they show as a space), private-use characters (Co: an icon font's glyph or a box, never
  invisible), unassigned code points outside the lists above (Cn: a newer emoji shows as a box
  rather than as a marker), combining marks. Look-alike letters (homoglyphs) are not this
  policy's business: they are visible, and grants compare exact text.

Capping: `cut(text, chars=, lines=, keep=)` keeps the head (or the tail) within a number of
characters and lines and reports the exact number of characters and whole lines dropped;
`cap(...)` returns the kept text with its note (`… 1,234 earlier lines dropped`) and stays
within the limits note included, so capping twice changes nothing.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "MIN_CAP",
    "UNSAFE_RANGES",
    "Cut",
    "a_or_an",
    "byte_size",
    "cap",
    "cut",
    "escape",
    "escaped",
    "find_unsafe",
    "has_unsafe",
    "line_count",
    "marked",
    "marker",
    "plural",
    "printable",
    "replace_unsafe",
    "split_unsafe",
    "unsafe_at",
]

# Always unsafe, whatever surrounds them (inclusive ranges of code points). Tab, line feed and
# carriage return are left out: CR is decided in context (a line break `\r\n` is safe).
UNSAFE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x0008), (0x000B, 0x000C), (0x000E, 0x001F),  # C0 controls (ESC among them)
    (0x007F, 0x009F),  # DEL and the C1 controls (CSI U+009B, NEL U+0085, …)
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner (default-ignorable)
    (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),  # Arabic Cf, ALM
    (0x0890, 0x0891), (0x08E2, 0x08E2),  # Arabic prepended marks (Cf)
    (0x115F, 0x1160),  # Hangul choseong/jungseong fillers (render as nothing)
    (0x17B4, 0x17B5),  # Khmer inherent vowels (default-ignorable)
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200C), (0x200E, 0x200F),  # zero-width space and non-joiner; LRM, RLM
    (0x2028, 0x202E),  # line and paragraph separators; bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated formats
    (0x3164, 0x3164),  # Hangul filler
    (0xD800, 0xDFFF),  # surrogates: a lone one cannot even be encoded
    (0xFEFF, 0xFEFF),  # byte order mark / zero-width no-break space
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFFB),  # reserved default-ignorables; interlinear annotation
    (0x110BD, 0x110BD), (0x110CD, 0x110CD),  # Kaithi number signs (Cf)
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls (Unicode 14 and 15)
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0000, 0xE00FF),  # tag characters (and the reserved rest of their block)
    (0xE01F0, 0xE0FFF),  # reserved default-ignorables after the variation selectors
)

# Decided by their neighbours (see the module docstring).
_CR = "\r"
_ZWJ = "\u200d"
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef\u180b-\u180d\u180f"
_SELECTOR_SET = frozenset(chr(cp) for cp in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0),
                                             0x180B, 0x180C, 0x180D, 0x180F))
_SKIN_TONES = range(0x1F3FB, 0x1F400)


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" if a != b else re.escape(chr(a))
                   for a, b in ranges)


# Where an unsafe character may be: a text none of these match is shown as it is. Python's
# `re` scans a class of BMP ranges at C speed (~10 ns a character) but several times slower
# with astral ranges in it, so astral candidates are a second scan, run only on a text that has
# an astral character at all; a lone CR is a third (a `\r\n` is not even a candidate).
_ASCII_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BMP_RE = re.compile(f"[{_char_class(tuple(r for r in UNSAFE_RANGES if r[1] < 0x10000))}"
                     f"{_ZWJ}\ufe00-\ufe0f\u180b-\u180d\u180f]")
_ASTRAL_RE = re.compile(f"[{_char_class(tuple(r for r in UNSAFE_RANGES if r[0] >= 0x10000))}"
                        "\U000e0100-\U000e01ef]")
_ANY_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")
_LONE_CR_RE = re.compile("\r(?!\n)")
_STARTS = [a for a, _ in UNSAFE_RANGES]


def _always(code: int) -> bool:
    i = bisect_right(_STARTS, code) - 1
    return i >= 0 and code <= UNSAFE_RANGES[i][1]


def _visible_base(ch: str) -> bool:
    """A visible non-ASCII character a variation selector may follow."""
    code = ord(ch)
    return code >= 0xA0 and unicodedata.category(ch)[0] in "LNSP" and not _always(code)


def _emoji(ch: str) -> bool:
    return ord(ch) >= 0x2000 and unicodedata.category(ch) == "So"


def unsafe_at(text: str, i: int) -> bool:
    """Whether `text[i]` is unsafe to show as it is (its neighbours decide CR, ZWJ and the
    variation selectors)."""
    ch = text[i]
    if ch == _CR:
        return not text.startswith("\n", i + 1)
    if ch == _ZWJ:
        if i == 0 or i + 1 >= len(text) or not _emoji(text[i + 1]):
            return True
        before = text[i - 1]
        if (before == "\ufe0f" or ord(before) in _SKIN_TONES) and i >= 2:
            before = text[i - 2]
        return not _emoji(before)
    if ch in _SELECTOR_SET:
        return i == 0 or not _visible_base(text[i - 1])
    return _always(ord(ch))


def find_unsafe(text: str) -> Iterator[int]:
    """The positions of the unsafe characters of `text`, in order."""
    if text.isascii():
        scans = [_ASCII_RE.finditer(text)]
    else:
        scans = [_BMP_RE.finditer(text)]
        if _ANY_ASTRAL_RE.search(text):
            scans.append(_ASTRAL_RE.finditer(text))
    if "\r" in text:
        scans.append(_LONE_CR_RE.finditer(text))
    found = scans[0] if len(scans) == 1 else heapq.merge(*scans, key=lambda m: m.start())
    for match in found:
        i = match.start()
        if unsafe_at(text, i):
            yield i


def has_unsafe(text: str) -> bool:
    """Whether `text` holds any unsafe character (one C-speed scan when it holds none)."""
    return next(find_unsafe(text), None) is not None


def split_unsafe(text: str) -> Iterator[tuple[str, bool]]:
    """`text` as runs `(run, unsafe)`: safe runs as they are, each unsafe character alone."""
    start = 0
    for i in find_unsafe(text):
        if i > start:
            yield text[start:i], False
        yield text[i], True
        start = i + 1
    if start < len(text):
        yield text[start:], False


def replace_unsafe(text: str, show: Callable[[str], str]) -> str:
    """`text` with every unsafe character replaced by `show(character)` (the view's display);
    a text with none is returned as it is."""
    runs = split_unsafe(text)
    first = next(runs, None)
    if first is None or (not first[1] and len(first[0]) == len(text)):
        return text  # nothing to replace: the text itself, not a copy
    return "".join(show(run) if unsafe else run for run, unsafe in (first, *runs))


def escape(ch: str) -> str:
    """The escape display, for plain-text views: `\\x1b`, `\\u200b`, `\\U000e0041`."""
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def marker(ch: str) -> str:
    """The marker display, for styled views: a C0 control as its control picture (`␛`, `␀`),
    DEL as `␡`, anything else as its code point (`⟨U+200B⟩`)."""
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "␡"
    return f"⟨U+{code:04X}⟩"


def escaped(text: str) -> str:
    """`text` with every unsafe character escaped (`\\u200b`)."""
    return replace_unsafe(text, escape)


_SPACES = re.compile(r"[ \t\r\n]+")  # only CR of a line break is left unescaped


def printable(text: str, width: int | None = None) -> str:
    """`text` for one cell of a listing's line (`cockpit journals`, `cockpit sessions`,
    `cockpit ps`): unsafe characters escaped (`\\x1b`, `\\u200b`), runs of spaces and line
    breaks as one space, cut to `width` with `…`."""
    text = _SPACES.sub(" ", escaped(text)).strip()
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text


def marked(text: str) -> str:
    """`text` with every unsafe character as its marker (`⟨U+200B⟩`)."""
    return replace_unsafe(text, marker)


# Capping ---------------------------------------------------------------------------------------

MIN_CAP = 64
"""The smallest character limit `cap` accepts: room for a note about any amount dropped."""


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 line`, `2 lines`, `1,234 lines` (`many` for an irregular plural)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def a_or_an(noun: str) -> str:
    """`noun` with its indefinite article, by how it sounds: `an int`, `an object`, `a list`,
    `a uint8`, `an hour`, `an MD5`."""
    word = noun.lstrip()
    first = word[:1].lower()
    vowel = first in "aeiou" and not word.lower().startswith(("uni", "use", "usu", "uint",
                                                               "one", "eu"))
    vowel = vowel or word.lower().startswith(("hour", "honest", "honou"))
    vowel = vowel or (word[:1].isupper() and word[:2].isupper() and first in "fhlmnrsx")
    return f"{'an' if vowel else 'a'} {noun}"


def line_count(text: str) -> int:
    """How many lines `text` has: none when empty; a final line break ends a line rather
    than starting one. Counts at C speed (a 10 MB output costs milliseconds)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@dataclass(frozen=True, slots=True)
class Cut:
    """What capping kept of a text, and exactly how much it dropped."""

    kept: str
    dropped_chars: int  # len(text) - len(kept)
    dropped_lines: int  # line_count(text) - line_count(kept): lines not kept even in part
    earlier: bool = False  # the dropped part came before `kept` (the tail was kept)
    whole_lines: bool = True  # the cut fell on a line break (no line was split)

    @property
    def was_cut(self) -> bool:
        """Whether anything was dropped."""
        return self.dropped_chars > 0

    def note(self, *, gone: bool = True, hint: str = "") -> str:
        """What was dropped, in words: `… 1,234 earlier lines dropped`, `… 1 more line`,
        `… 3 more lines (120 characters) dropped` (a line was split), `… 56 more characters
        dropped`. `gone=False` for a preview whose rest can still be seen, `hint` saying how
        (`enter to expand`). Empty when nothing was dropped."""
        if not self.was_cut:
            return ""
        where = "earlier" if self.earlier else "more"
        lines, chars = self.dropped_lines, self.dropped_chars
        if lines and self.whole_lines:
            what = _counted(lines, where, "line")
        elif lines:
            what = f"{_counted(lines, where, 'line')} ({plural(chars, 'character')})"
        else:
            what = _counted(chars, where, "character")
        return f"… {what}" + (" dropped" if gone else "") + (f" · {hint}" if hint else "")


def _counted(n: int, where: str, word: str) -> str:
    return f"{n:,} {where} {word if n == 1 else word + 's'}"


def cut(text: str, *, chars: int | None = None, lines: int | None = None,
        keep: Literal["head", "tail"] = "head") -> Cut:
    """The head (or the tail) of `text` within `lines` lines and `chars` characters, with
    exactly what was dropped. Costs slices and C-speed searches, never a scan in Python."""
    if (chars is not None and chars < 0) or (lines is not None and lines < 0):
        raise ValueError("limits cannot be negative")
    head = keep == "head"
    kept = text
    if lines is not None and line_count(text) > lines:
        if lines == 0:
            kept = ""
        elif head:
            pos = -1
            for _ in range(lines):
                pos = text.find("\n", pos + 1)
            kept = text[:pos]
        else:
            pos = len(text) - 1 if text.endswith("\n") else len(text)
            for _ in range(lines):
                pos = text.rfind("\n", 0, pos)
            kept = text[pos + 1:]
    if chars is not None and len(kept) > chars:
        kept = (kept[:chars] if head else kept[len(kept) - chars:]) if chars else ""
    dropped = len(text) - len(kept)
    if not dropped:
        return Cut(text, 0, 0, earlier=not head)
    if not kept:
        whole = True
    elif head:
        whole = text[len(kept)] == "\n" or kept.endswith("\n")
    else:
        whole = text[dropped - 1] == "\n"
    return Cut(kept, dropped, line_count(text) - line_count(kept), earlier=not head,
               whole_lines=whole)


def cap(text: str, *, chars: int | None = None, lines: int | None = None,
        keep: Literal["head", "tail"] = "head", gone: bool = True, hint: str = "") -> str:
    """`text` within `chars` characters and `lines` lines, the note about what was dropped
    included (on its own line for a text of several lines, else after the kept text).

    A text within the limits is returned as it is, and so is a capped one: capping twice
    changes nothing. Raises `ValueError` for limits too small to hold the note
    (`chars < MIN_CAP` or `lines < 2`)."""
    if (chars is None or len(text) <= chars) and (lines is None or line_count(text) <= lines):
        return text
    if (chars is not None and chars < MIN_CAP) or (lines is not None and lines < 2):
        raise ValueError(f"a cap needs at least {MIN_CAP} characters and 2 lines")
    if "\n" in hint:
        raise ValueError("a cap's hint is one line")
    multi = line_count(text) > 1
    sep = "\n" if multi else " "
    # The longest note this text could need: reserve that much, so the result always fits.
    longest = Cut("", len(text), line_count(text) if multi else 0, earlier=keep == "tail",
                  whole_lines=not multi).note(gone=gone, hint=hint)
    keep_lines = lines - 1 if lines is not None and multi else None

    def attempt(note_room: int) -> tuple[Cut, str] | None:
        room = None if chars is None else chars - len(sep) - note_room
        if room is not None and room < 0:
            return None
        piece = cut(text, chars=room, lines=keep_lines, keep=keep)
        if keep == "head" and multi and piece.kept.endswith("\n"):
            # A final line break before the note's own would add an empty line.
            piece = cut(text, chars=len(piece.kept) - 1, keep=keep)
        note = piece.note(gone=gone, hint=hint)
        if chars is not None and len(piece.kept) + len(sep) + len(note) > chars:
            return None
        return piece, note

    # Reserve room for the longest note this text could need (it always fits), then try the
    # room the actual note takes, which keeps a few more characters when it fits too.
    found = attempt(len(longest))
    if found is None:
        raise ValueError(f"{chars} characters cannot hold the note {longest!r}")
    found = attempt(len(found[1])) or found
    piece, note = found
    return f"{piece.kept}{sep}{note}" if keep == "head" else f"{note}{sep}{piece.kept}"


def byte_size(count: int) -> str:
    """A number of bytes as a person reads it: `812 bytes`, `14 KB`, `3.2 MB`, `120 MB`."""
    if count >= 1 << 20:
        return f"{count / (1 << 20):.0f} MB" if count >= 10 << 20 else f"{count / (1 << 20):.1f} MB"
    if count >= 1 << 10:
        return f"{count // (1 << 10)} KB"
    return f"{count} bytes"
