"""Whether a call runs a denied program prefix: deny rules read broadly, where grants read narrowly.

A grant allows only what the human saw, so it matches one plain command by exact equality. A deny
rule must catch the program however it is dressed up, so it reads every command the call may
run: each simple command of the line, each nested line (`$(…)`, backticks), each word that reads
as a command line itself (`bash -c '…'`, `eval '…'`, `ssh host '…'`), and the words after a
program that runs the rest of its words (`sudo`, `env`, `xargs`, `nice`, `timeout`, …).
A command runs the rule's prefix when its program is the rule's program by name (any path, any
case: `/usr/bin/Git` is `git`) and the rule's other words follow it, in order (options in a rule
are matched as written); `git-push` (named for the rule's first two words, as git's own helpers
are) counts too. A line the lexer cannot read, one holding an expansion whose value is known
only when it runs, or one running a shell that reads its program from its input (`echo … | sh`,
`bash <<< '…'`) is also read as plain text (`git${IFS}push` holds `git` then `push`).
What a prefix cannot see is out of its reach: a script file, a Makefile target, a git alias.
When in doubt, it matches: a wrong deny costs the agent one refusal, a missed one the machine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from engine_adapter.shell.lexer import ShellSyntaxError, Word, lex, simple_commands
from engine_adapter.shell.prefix import COMMAND_KEYS
from engine_adapter.shell.programs import RUNS_ARGV, RUNS_LINE, SHELL_PROGRAMS, basename

__all__ = ["runs_prefix"]

_MAX_DEPTH = 6
_WORK_LIMIT = 200_000  # characters read in all: past it, the rest is read as plain text
_LINE_CHARS = re.compile(r"[\s;&|()<>`$]")
_UNQUOTE = re.compile(r"['\"\\]")
_TEXT_SPLIT = re.compile(r"[^\s;&|()<>`${}=,!]+")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "do", "while", "until"})
# Beyond RUNS_ARGV: words after which any later word may be the program run (`coproc NAME cmd`,
# `uv run cmd`, `bundle exec cmd`: a package runner's subcommand runs the rest).
_WRAPPERS = frozenset({"coproc", "uv", "pipx", "poetry", "pdm", "hatch", "rye", "conda",
                       "mamba", "micromamba", "pixi", "bundle", "npm", "pnpm", "yarn", "bun",
                       "deno", "nix", "direnv", "dotenv", "with-contenv", "op", "aws-vault"})
_RUNS_LATER = frozenset({"-exec", "-execdir", "-ok", "-okdir", "--exec", "-x", "-X"})


def runs_prefix(tool_input: Mapping[str, Any], words: Sequence[str]) -> bool:
    """Whether any command `tool_input` may run starts with the program prefix `words`.

    `tool_input` is a call's input; every command key (`command`, `argv`, `script`, …) is read,
    as a line when it is text and as words (each also read as a line) when it is a list.
    Never raises.
    """
    if not words or not isinstance(tool_input, Mapping):
        return False
    reader = _Reader(tuple(words))
    try:
        for key in COMMAND_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str):
                if reader.line(value, 0):
                    return True
            elif isinstance(value, list):
                items = [v for v in value if isinstance(v, str)]
                if reader.words([Word(v, v, False) for v in items], 0):
                    return True
                if any(reader.line(v, 1) for v in items if _LINE_CHARS.search(v)):
                    return True
    except RecursionError:
        return True
    return False


class _Reader:
    """One call's reading: the rule's words and the work budget left."""

    def __init__(self, words: tuple[str, ...]) -> None:
        self.program = basename(words[0])
        self.rest = words[1:]
        self.budget = _WORK_LIMIT

    def line(self, text: str, depth: int) -> bool:
        """Whether the shell line `text` runs the prefix anywhere."""
        self.budget -= len(text) + 16
        if depth > _MAX_DEPTH or self.budget < 0:
            return self.text(text)  # too deep or too long to read closely: the text decides
        try:
            lexed = lex(text)
            commands = simple_commands(lexed.tokens)
        except ShellSyntaxError:
            return self.text(text)
        if any(isinstance(t, Word) and t.opaque for t in lexed.tokens) and self.text(text):
            return True  # an expansion could make it anything: the text decides too
        for command in commands:
            if self.words(command.words, depth):
                return True
            if _reads_stdin_shell(command.words) and self.text(text):
                return True  # `… | sh`, `bash <<< '…'`: its program is text we cannot see apart
            for word in command.words:
                if _LINE_CHARS.search(word.text) and self.line(word.text, depth + 1):
                    return True
        return any(self.line(nested, depth + 1) for nested in lexed.nested)

    def words(self, words: Sequence[Word], depth: int) -> bool:
        """Whether one simple command (its words) runs the prefix: its program, or any word
        after a program that runs the rest of its words."""
        start = 0
        while start < len(words) and (words[start].text in _KEYWORDS
                                      or _ASSIGNMENT.match(words[start].text)):
            start += 1
        wrapped = False
        for j in range(start, len(words)):
            if (j == start or wrapped) and self._at(words, j):
                return True
            name = basename(words[j].text)
            if (name in RUNS_ARGV or name in RUNS_LINE or name in _WRAPPERS
                    or words[j].text in _RUNS_LATER):
                wrapped = True  # every later word may be the program it runs
        return False

    def _at(self, words: Sequence[Word], j: int) -> bool:
        name = basename(words[j].text)
        later = [w.text for w in words[j + 1:]]
        if name == self.program:
            return _in_order(self.rest, later)
        # `git-push`: git's helper for `git push` (`/usr/lib/git-core/git-push`)
        return bool(self.rest) and name == f"{self.program}-{self.rest[0]}" and _in_order(
            self.rest[1:], later)

    def text(self, text: str) -> bool:
        """Whether the plain text of a line, quotes and escapes dropped, holds the program,
        then the other words in order."""
        tokens = _TEXT_SPLIT.findall(_UNQUOTE.sub("", text))
        for j, token in enumerate(tokens):
            if basename(token) == self.program and _in_order(self.rest, tokens[j + 1:]):
                return True
        return False


def _reads_stdin_shell(words: Sequence[Word]) -> bool:
    """Whether this command is a shell that reads its program from its input (no `-c`, no
    script operand: `sh`, `bash -s`, `bash -`)."""
    start = 0
    while start < len(words) and (words[start].text in _KEYWORDS
                                  or _ASSIGNMENT.match(words[start].text)):
        start += 1
    if start >= len(words) or basename(words[start].text) not in SHELL_PROGRAMS:
        return False
    rest = [w.text for w in words[start + 1:]]
    return not any(not r.startswith("-") or r == "-" for r in rest) or "-s" in rest \
        or "-" in rest


def _in_order(wanted: Sequence[str], words: Sequence[str]) -> bool:
    """Whether `wanted` appear among `words` in that order (not necessarily adjacent)."""
    it = iter(words)
    return all(any(w == word for w in it) for word in wanted)
