"""The one shell lexer: a command line split the way a POSIX shell splits it, into simple commands.

`lex(text)` returns the words and operators of a line (quoting removed, each word remembering how
it was written and whether an expansion makes its value unknown until it runs) and the text of
every command nested in it: `$(…)`, backticks, `<(…)`, `${…}`, and the substitutions inside
unquoted here-document bodies, which the shell runs too. `simple_commands(tokens)` groups the
tokens into simple commands with their redirections.

`grant_prefix` and `classify_command` both read commands through this module, so what a grant
covers and what the classifier judges are always the same words. It is deliberately permissive
about syntax it need not understand (it never runs anything); what it cannot split, it refuses
with `ShellSyntaxError`, and both callers then err toward asking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["Lexed", "Op", "ShellSyntaxError", "SimpleCommand", "Word", "lex", "simple_commands"]


class ShellSyntaxError(ValueError):
    """A line the lexer cannot split (an unbalanced quote, parenthesis or substitution)."""


class Word(NamedTuple):
    """One shell word."""

    text: str  # the value, quotes removed (expansions left as written)
    raw: str  # as written, quotes and all
    opaque: bool  # holds an expansion or substitution: the real value is known only at run time

    @property
    def plain(self) -> bool:
        """Unquoted and unexpanded: what the human read is what the program gets."""
        return not self.opaque and self.raw == self.text


class Op(NamedTuple):
    """An operator: a list or pipe separator, a redirection, a parenthesis, or a newline."""

    text: str


@dataclass(frozen=True)
class Lexed:
    """A lexed line: its tokens and the text of every command nested in it."""

    tokens: tuple[Word | Op, ...]
    nested: tuple[str, ...]


# Longest first: the lexer takes the first that matches.
OPERATORS = ("&&", "||", ";;", "|&", "&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&",
             "<>", ">", "<", "|", "&", ";", "(", ")")
_OP_RE = re.compile("|".join(re.escape(op) for op in OPERATORS))
_OP_CHARS = frozenset(";&|()<>")
NEWLINE = "\n"  # the newline operator (a list separator, kept apart so reasons can name it)
# Runs of characters with no meaning to the shell, taken at once (the lexer is on the hot path
# of every approval: a 16 KB line must not cost a frame).
_PLAIN_RUN = re.compile(r"[^ \t\r\n;&|()<>'\"\\$`]+")
_QUOTED_RUN = re.compile(r'[^"\\$`]+')
_BODY_SPECIAL = re.compile(r"[\\$`]")
_PAREN_SPECIAL = re.compile(r"[()'\"\\]")


def lex(text: str) -> Lexed:
    """Split one command line into words and operators (see the module docstring).

    Raises `ShellSyntaxError` for a line a shell would reject as unbalanced.
    """
    lexer = _Lexer(text)
    lexer.run()
    return Lexed(tuple(lexer.tokens), tuple(lexer.nested))


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[Word | Op] = []
        self.nested: list[str] = []
        self._buf: list[str] = []
        self._start = 0  # where the current word began in `text`
        self._opaque = False
        self._in_word = False
        self._heredoc_next = False  # the next word is a here-document delimiter
        self._heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, quoted)

    def run(self) -> None:
        t = self.text
        while self.i < len(t):
            ch = t[self.i]
            if ch in " \t\r":
                self._end_word()
                self.i += 1
            elif ch == "\n":
                self._end_word()
                self.tokens.append(Op(NEWLINE))
                self.i += 1
                self._read_heredoc_bodies()
            elif ch == "#" and not self._in_word:
                end = t.find("\n", self.i)
                self.i = len(t) if end < 0 else end
            elif ch == "\\":
                self._begin()
                if t.startswith("\n", self.i + 1):
                    self.i += 2  # a line continuation joins the lines
                else:
                    self._add(t[self.i + 1: self.i + 2])
                    self.i += 2
            elif ch == "'":
                end = t.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("an unbalanced single quote")
                self._begin()
                self._add(t[self.i + 1: end])
                self.i = end + 1
            elif ch == '"':
                self._begin()
                self._double_quoted()
            elif ch in "$`":
                self._begin()
                self._expansion()
            elif ch in "<>" and t.startswith("(", self.i + 1):
                self._end_word()  # process substitution: a /dev/fd path made by a command
                self._begin()
                self.i += 1
                self.nested.append(self._balanced())
                self._mark_opaque()
            elif ch in _OP_CHARS:
                self._operator()
            else:
                self._begin()
                run = _PLAIN_RUN.match(t, self.i)
                end = run.end() if run else self.i + 1
                self._add(t[self.i: end])
                self.i = end
        self._end_word()
        self._read_heredoc_bodies()  # a here-document opened on the last line runs to the end

    # words ----------------------------------------------------------------------------------
    def _begin(self) -> None:
        if not self._in_word:
            self._start = self.i

    def _add(self, text: str) -> None:
        self._buf.append(text)
        self._in_word = True

    def _mark_opaque(self) -> None:
        self._opaque = self._in_word = True

    def _end_word(self) -> None:
        if not self._in_word:
            return
        word = Word("".join(self._buf), self.text[self._start: self.i], self._opaque)
        self.tokens.append(word)
        if self._heredoc_next:
            strip_tabs = self.tokens[-2] == Op("<<-")
            quoted = any(c in word.raw for c in "'\"\\")  # a quoted delimiter: a literal body
            self._heredocs.append((word.text, strip_tabs, quoted))
            self._heredoc_next = False
        self._buf, self._opaque, self._in_word = [], False, False

    def _operator(self) -> None:
        if (self.text[self.i] in "<>" and self._in_word and self._buf
                and "".join(self._buf).isdigit() and not self._opaque):
            self._buf, self._in_word = [], False  # `2>`: a file descriptor, not a word
        self._end_word()
        match = _OP_RE.match(self.text, self.i)
        assert match is not None  # called only at an operator character
        op = match.group()
        self.tokens.append(Op(op))
        self.i += len(op)
        if op in ("<<", "<<-"):
            self._heredoc_next = True

    # here-documents ---------------------------------------------------------------------------
    def _read_heredoc_bodies(self) -> None:
        """Consume the bodies of the here-documents opened on the line just ended. An unquoted
        delimiter's body is expanded by the shell: its substitutions are nested commands."""
        t = self.text
        for delimiter, strip_tabs, quoted in self._heredocs:
            body_start = self.i
            body_end = len(t)
            while self.i < len(t):
                end = t.find("\n", self.i)
                line = t[self.i: len(t) if end < 0 else end]
                line_start = self.i
                self.i = len(t) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    body_end = line_start
                    break
            if not quoted:
                self._expand_body(t[body_start:body_end])
        self._heredocs = []

    def _expand_body(self, body: str) -> None:
        inner = _Lexer(body)
        inner.read_body_expansions()
        self.nested.extend(inner.nested)

    def read_body_expansions(self) -> None:
        """Read the expansions of a heredoc body (this lexer's whole text), as inside double
        quotes: what they run goes to `nested`."""
        body = self.text
        while (found := _BODY_SPECIAL.search(body, self.i)) is not None:
            self.i = found.start()
            if body[self.i] == "\\":
                self.i += 2
            else:
                self._expansion(quoted=True)

    # quoting and expansions -------------------------------------------------------------------
    def _double_quoted(self) -> None:
        t = self.text
        self.i += 1
        self._in_word = True
        while self.i < len(t):
            ch = t[self.i]
            if ch == '"':
                self.i += 1
                return
            if ch == "\\" and self.i + 1 < len(t):
                nxt = t[self.i + 1]
                self._add(nxt if nxt in '$`"\\\n' else "\\" + nxt)
                self.i += 2
            elif ch in "$`":
                self._expansion(quoted=True)
            else:
                run = _QUOTED_RUN.match(t, self.i)
                end = run.end() if run else self.i + 1
                self._add(t[self.i: end])
                self.i = end
        raise ShellSyntaxError("an unbalanced double quote")

    def _expansion(self, *, quoted: bool = False) -> None:
        """`$…` or a backtick at `self.i`: the word becomes opaque; commands inside are kept."""
        t = self.text
        if t[self.i] == "`":
            end = self.i + 1
            while end < len(t) and t[end] != "`":
                end += 2 if t[end] == "\\" else 1
            if end >= len(t):
                raise ShellSyntaxError("an unbalanced backtick")
            self.nested.append(t[self.i + 1: end].replace("\\`", "`"))
            self.i = end + 1
        elif t.startswith("(", self.i + 1):
            self.i += 1
            self.nested.append(self._balanced())  # `$((…))` arithmetic may hold `$(…)` too
        elif t.startswith("{", self.i + 1):
            end = t.find("}", self.i + 2)
            if end < 0:
                raise ShellSyntaxError("an unbalanced ${")
            self.nested.append(t[self.i + 2: end])  # `${x:-$(cmd)}`
            self.i = end + 1
        elif t.startswith("'", self.i + 1) and not quoted:  # `$'…'`; inside "…" a plain `$`
            end = self.i + 2
            while end < len(t) and t[end] != "'":
                end += 2 if t[end] == "\\" else 1
            if end >= len(t):
                raise ShellSyntaxError("an unbalanced $'")
            self._add(t[self.i + 2: end])
            self.i = end + 1
        else:
            self._add("$")
            self.i += 1
        self._mark_opaque()

    def _balanced(self) -> str:
        """The text inside the parentheses that open at `self.i`; moves past the closing one."""
        t = self.text
        depth, j, quote = 0, self.i, None
        while j < len(t):
            if quote is None:
                found = _PAREN_SPECIAL.search(t, j)
                if found is None:
                    break
                j = found.start()
            ch = t[j]
            if quote:
                if ch == quote:
                    quote = None
                elif ch == "\\" and quote == '"':
                    j += 1
            elif ch in "'\"":
                quote = ch
            elif ch == "\\":
                j += 1
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    inner = t[self.i + 1: j]
                    self.i = j + 1
                    return inner
            j += 1
        raise ShellSyntaxError("an unbalanced parenthesis")


# -- simple commands -----------------------------------------------------------------------------

SEPARATORS = frozenset({";", "&", "&&", "||", ";;", "|", "|&", "(", ")", NEWLINE})
MAX_GROUPS = 64  # `( … )` nested deeper than this is refused as unreadable
READ_REDIRECTS = frozenset({"<", "<<", "<<-", "<<<", "<&"})
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


@dataclass
class SimpleCommand:
    """One simple command: its words, where it writes, and how it sits in the line."""

    words: list[Word] = field(default_factory=list)
    writes_to: list[Word] = field(default_factory=list)  # redirection targets
    stdin_code: bool = False  # stdin is a pipe or a redirection: a shell would run what it reads
    subshells: tuple[int, ...] = ()  # the `( … )` groups it runs in, outermost first
    piped: bool = False  # part of a pipeline (runs in a subshell in most shells)
    background: bool = False  # ended by `&`


def simple_commands(tokens: tuple[Word | Op, ...] | list[Word | Op]) -> list[SimpleCommand]:
    """The simple commands of a lexed line, in order (empty ones dropped). Raises
    `ShellSyntaxError` for parentheses nested deeper than `MAX_GROUPS`."""
    groups: list[int] = []
    opened = 0
    commands = [SimpleCommand()]
    redirect: str | None = None
    for token in tokens:
        current = commands[-1]
        if isinstance(token, Op):
            redirect = None
            text = token.text
            if text in SEPARATORS:
                if text in ("|", "|&"):
                    current.piped = True
                elif text == "&":
                    current.background = True
                if text == "(":
                    opened += 1
                    groups.append(opened)
                    if len(groups) > MAX_GROUPS:
                        raise ShellSyntaxError("parentheses nested too deeply")
                elif text == ")" and groups:
                    groups.pop()
                commands.append(SimpleCommand(stdin_code=text in ("|", "|&"),
                                              piped=text in ("|", "|&"),
                                              subshells=tuple(groups)))
            elif text in READ_REDIRECTS:
                current.stdin_code = True
                redirect = text
            else:
                redirect = text
        elif redirect is not None:
            if redirect in WRITE_REDIRECTS and not (
                    redirect in (">&", "<&") and (token.text.isdigit() or token.text == "-")):
                current.writes_to.append(token)
            redirect = None
        else:
            current.words.append(token)
    return [c for c in commands if c.words or c.writes_to]
