"""Reading the little programs `sed` and `awk` are given, for the commands they can run.

A sed script runs a shell command with its `e` command or the `e` flag of `s`, and writes a
file with `w`/`W` or the `w` flag; an awk program runs one with `system()` or a pipe
(`print | "sh"`, `"cmd" | getline`) and writes files with `print > file`. A script read from a
file, or one the parser cannot read, counts as dangerous: the human never saw it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from engine_adapter.shell.lexer import Word

__all__ = ["awk_danger", "sed_danger", "sed_edits"]

_UNKNOWN = Word("", "", True)


class _Options(NamedTuple):
    """A program's options that give it code (`code_*`), make it read code from a file
    (`file_*`), or take a value (`value_*`); `attached_letters` take only a value glued to
    them (sed's `-i.bak`)."""

    code_letters: str
    code_longs: tuple[str, ...]
    file_letters: str
    file_longs: tuple[str, ...]
    value_letters: str
    value_longs: tuple[str, ...]
    attached_letters: str = ""


def _option_scripts(args: list[Word], spec: _Options) -> tuple[list[Word], bool, list[Word]]:
    """The code given with options, whether code comes from a file, and the operands."""
    (code_letters, code_longs, file_letters, file_longs, value_letters, value_longs,
     attached_letters) = spec
    scripts: list[Word] = []
    from_file = False
    operands: list[Word] = []
    j = 0
    while j < len(args):
        word = args[j]
        text = word.text
        following = args[j + 1] if j + 1 < len(args) else _UNKNOWN
        if text == "--":
            operands.extend(args[j + 1:])
            break
        if text.startswith("--") and len(text) > 2:
            name, eq, value = text[2:].partition("=")
            if any(long.startswith(name) for long in code_longs):
                scripts.append(Word(value, value, word.opaque) if eq else following)
                j += 0 if eq else 1
            elif any(long.startswith(name) for long in file_longs):
                from_file = True
            elif not eq and any(long.startswith(name) for long in value_longs):
                j += 1
        elif text.startswith("-") and len(text) > 1:
            for k, letter in enumerate(text[1:], start=1):
                rest = text[k + 1:]
                if letter in code_letters:
                    scripts.append(Word(rest, rest, word.opaque) if rest else following)
                elif letter in file_letters:
                    from_file = True
                elif letter in attached_letters:
                    break
                elif letter not in value_letters:
                    continue
                j += 0 if rest else 1
                break
        else:
            operands.append(word)
        j += 1
    return scripts, from_file, operands


def _code(args: list[Word], spec: _Options) -> tuple[list[Word], bool]:
    """The code a sed or awk call runs: the option-given scripts, else the first operand; and
    whether code is read from a file (or loaded) instead."""
    scripts, from_file, operands = _option_scripts(args, spec)
    return (scripts or operands[:1]), from_file


# -- sed -----------------------------------------------------------------------------------------

_SED = _Options(code_letters="e", code_longs=("expression",), file_letters="f",
                file_longs=("file",), value_letters="l", value_longs=("line-length",),
                attached_letters="i")


def sed_danger(args: list[Word]) -> str | None:
    """Why a sed call may run a command or write a file the human did not see, or None."""
    scripts, from_file = _code(args, _SED)
    if from_file:
        return "sed reads its script from a file (a sed script can run commands)"
    for script in scripts:
        if script.opaque:
            return "sed script known only when it runs"
        found = _sed_script(script.text)
        if found is not None:
            return found
    return None


def sed_edits(args: list[Word]) -> list[Word]:
    """The files a sed call edits in place (`-i`, `--in-place`), or none."""
    in_place = any(w.text.startswith("--") and "in-place".startswith(w.text[2:].split("=")[0])
                   and len(w.text) > 2 for w in args) or any(
        w.text.startswith("-") and not w.text.startswith("--") and "i" in _letters_before_value(
            w.text) for w in args)
    if not in_place:
        return []
    scripts, _, operands = _option_scripts(args, _SED)
    return operands if scripts else operands[1:]


def _letters_before_value(option: str) -> str:
    """The option letters of a sed cluster, up to one that takes a value (`-ne` -> "ne")."""
    letters = ""
    for letter in option[1:]:
        letters += letter
        if letter in "efli":
            break
    return letters


class _Unreadable(Exception):
    pass


def _sed_script(s: str) -> str | None:
    """Walk a (GNU) sed script command by command."""
    try:
        return _SedReader(s).run()
    except (_Unreadable, IndexError):
        return "sed script the classifier cannot read"


class _SedReader:
    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0

    def _skip(self, chars: str) -> None:
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1

    def _to_end_of_line(self, *, semicolon: bool = False) -> None:
        stops = "\n;" if semicolon else "\n"
        while self.i < len(self.s) and self.s[self.i] not in stops:
            self.i += 1

    def _delimited(self, delim: str) -> None:
        """Move past a part ended by an unescaped `delim` (a regex or a replacement)."""
        s = self.s
        while True:
            if self.i >= len(s):
                raise _Unreadable
            ch = s[self.i]
            self.i += 2 if ch == "\\" else 1
            if ch == delim:
                return

    def _address(self) -> None:
        s = self.s
        if self.i >= len(s):
            return
        ch = s[self.i]
        if ch.isdigit() or ch in "+~":
            self.i += 1
            self._skip("0123456789~")
        elif ch == "$":
            self.i += 1
        elif ch == "/":
            self.i += 1
            self._delimited("/")
            self._skip("IM")
        elif ch == "\\":
            delim = s[self.i + 1]
            self.i += 2
            self._delimited(delim)
            self._skip("IM")

    def run(self) -> str | None:
        s = self.s
        while True:
            self._skip(" \t\n;{}")
            if self.i >= len(s):
                return None
            if s[self.i] == "#":
                self._to_end_of_line()
                continue
            self._address()
            self._skip(" \t")
            if self.i < len(s) and s[self.i] == ",":
                self.i += 1
                self._skip(" \t")
                self._address()
            self._skip(" \t!")
            if self.i >= len(s):
                raise _Unreadable
            command = s[self.i]
            self.i += 1
            found = self._command(command)
            if found is not None:
                return found

    def _command(self, command: str) -> str | None:
        s = self.s
        if command == "e":
            return "sed runs a command (its e command)"
        if command in "wW":
            return "sed writes a file (its w command)"
        if command in "{}=dDgGhHlnNpPxzFqQL":
            self._skip(" \t0123456789")
        elif command in "rRv":
            self._to_end_of_line(semicolon=command == "v")
        elif command in "aic":
            while self.i < len(s) and not (s[self.i] == "\n" and s[self.i - 1] != "\\"):
                self.i += 1
        elif command in ":btT":
            self._skip(" \t")
            self._to_end_of_line(semicolon=True)
        elif command in "sy":
            delim = s[self.i]
            if delim in "\n\\":
                raise _Unreadable
            self.i += 1
            self._delimited(delim)
            self._delimited(delim)
            if command == "s":
                return self._s_flags()
        else:
            raise _Unreadable
        return None

    def _s_flags(self) -> str | None:
        s = self.s
        while self.i < len(s) and s[self.i] not in ";\n}":
            flag = s[self.i]
            if flag == "e":
                return "sed runs a command (the e flag of s)"
            if flag == "w":
                return "sed writes a file (the w flag of s)"
            if flag not in "gpiImM0123456789 \t":
                raise _Unreadable
            self.i += 1
        return None


# -- awk -----------------------------------------------------------------------------------------

_PRINT_TO_FILE = re.compile(r"\bprintf?\b[^;{}\n]*>")
_SYSTEM = re.compile(r"\bsystem\s*\(")


_AWK = _Options(code_letters="e", code_longs=("source",), file_letters="fEil",
                file_longs=("file", "exec", "include", "load"), value_letters="vF",
                value_longs=("assign", "field-separator"))


def awk_danger(args: list[Word]) -> str | None:
    """Why an awk call may run a command, load code, or write files, or None."""
    scripts, from_file = _code(args, _AWK)
    if from_file:
        return "awk reads its program from a file or loads extensions"
    for script in scripts:
        if script.opaque:
            return "awk program known only when it runs"
        code = script.text
        if _SYSTEM.search(code):
            return "awk runs a command (system())"
        if "|" in code.replace("||", ""):
            return "awk pipes to or from a command (|)"
        if "@load" in code or "@include" in code:
            return "awk loads code (@load)"
        if _PRINT_TO_FILE.search(code):
            return "awk writes to a file (print >)"
    return None
