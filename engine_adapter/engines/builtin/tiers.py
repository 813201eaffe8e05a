"""Permission tiers of shell commands: 3 (runs a command: ask) or 4 (destructive: ask every time).

`classify_command` reads a command line (or an argv list) the way a POSIX shell would split it —
lists, pipes, redirections, substitutions, quoting, here-documents — and looks at every simple
command in it, nested ones (`$(…)`, backticks, `<(…)`, `sh -c '…'`, `find -exec`, `xargs`)
included. Tier 4 is:

- recursive or forced removal (`rm -r`, `rm -f`, `find -delete`);
- a forced push, a hard reset, `git clean -f`; git options that run other programs (`-c`);
- recursive `chmod`/`chown`/`chgrp`; `dd`, `mkfs`, and other disk or file wipers;
- a pipe (or redirection, or here-document) into a shell or interpreter reading code from stdin;
- anything that writes outside the workspace: a redirection, or a file-writing program with a
  path argument, that resolves outside it (`~`, absolute paths, `..`, symlinks, a `cd` away);
- running as another user (`sudo`) or on another machine (`ssh`), and a program or path only
  known when the command runs (`$CMD`, `rm $FILES`), or a command that cannot be parsed.

Everything else is tier 3. The rule is the one `grants.py` follows: when in doubt, the riskier
answer — a false tier 4 costs the human a key press, a false tier 3 can cost them their files.
This is a splitter for classification, deliberately permissive about syntax it need not
understand; `grants.grant_prefix` keeps the strict parser that decides what a grant covers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ...grants import INTERPRETER_PREFIXES, SHELL_PROGRAMS, program_family

__all__ = ["ASK", "DESTRUCTIVE", "Classification", "classify_command"]

ASK = 3
DESTRUCTIVE = 4
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Classification:
    """A command's tier and, in a few words, why."""

    tier: int
    reason: str


class _Unparseable(Exception):
    pass


# -- splitting a command line --------------------------------------------------------------------

class _Word(NamedTuple):
    text: str  # the value, quotes removed
    opaque: bool  # holds an expansion or substitution: the real value is known only at run time


class _Op(NamedTuple):
    text: str


_OPERATORS = ("&&", "||", ";;", "|&", "&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&",
              "<>", ">", "<", "|", "&", ";", "(", ")")
_OP_CHARS = frozenset(";&|()<>")


class _Lexer:
    """Splits one command line into words and operators, collecting the text of every nested
    command (substitutions) to be classified in turn."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[_Word | _Op] = []
        self.nested: list[str] = []
        self._buf: list[str] = []
        self._opaque = False
        self._in_word = False
        self._heredoc_next = False  # the next word is a here-document delimiter
        self._heredocs: list[tuple[str, bool]] = []  # (delimiter, strip leading tabs)

    def run(self) -> _Lexer:
        t = self.text
        while self.i < len(t):
            ch = t[self.i]
            if ch in " \t\r":
                self._end_word()
                self.i += 1
            elif ch == "\n":
                self._end_word()
                self.tokens.append(_Op(";"))
                self.i += 1
                self._skip_heredoc_bodies()
            elif ch == "#" and not self._in_word:
                end = t.find("\n", self.i)
                self.i = len(t) if end < 0 else end
            elif ch == "\\":
                if t.startswith("\n", self.i + 1):
                    self.i += 2
                else:
                    self._add(t[self.i + 1: self.i + 2])
                    self.i += 2
            elif ch == "'":
                end = t.find("'", self.i + 1)
                if end < 0:
                    raise _Unparseable("an unbalanced single quote")
                self._add(t[self.i + 1: end])
                self.i = end + 1
            elif ch == '"':
                self._double_quoted()
            elif ch in "$`":
                self._expansion()
            elif ch in "<>" and t.startswith("(", self.i + 1):
                self._end_word()  # process substitution: a /dev/fd path made by a command
                self.i += 1
                self.nested.append(self._balanced())
                self._mark_opaque()
            elif ch in _OP_CHARS:
                self._operator(ch)
            else:
                self._add(ch)
                self.i += 1
        self._end_word()
        return self

    def _operator(self, ch: str) -> None:
        if ch in "<>" and self._in_word and self._buf and "".join(self._buf).isdigit():
            self._buf, self._in_word = [], False  # `2>`: a file descriptor, not a word
        self._end_word()
        op = next(o for o in _OPERATORS if self.text.startswith(o, self.i))
        self.tokens.append(_Op(op))
        self.i += len(op)
        if op in ("<<", "<<-"):
            self._heredoc_next = True

    def _add(self, text: str) -> None:
        self._buf.append(text)
        self._in_word = True

    def _mark_opaque(self) -> None:
        self._opaque = self._in_word = True

    def _end_word(self) -> None:
        if not self._in_word:
            return
        word = _Word("".join(self._buf), self._opaque)
        self.tokens.append(word)
        if self._heredoc_next:
            strip_tabs = self.tokens[-2] == _Op("<<-")
            self._heredocs.append((word.text, strip_tabs))
            self._heredoc_next = False
        self._buf, self._opaque, self._in_word = [], False, False

    def _skip_heredoc_bodies(self) -> None:
        t = self.text
        for delimiter, strip_tabs in self._heredocs:
            while self.i < len(t):
                end = t.find("\n", self.i)
                line = t[self.i: len(t) if end < 0 else end]
                self.i = len(t) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
        self._heredocs = []

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
                self._add(ch)
                self.i += 1
        raise _Unparseable("an unbalanced double quote")

    def _expansion(self, *, quoted: bool = False) -> None:
        """`$…` or a backtick at `self.i`: the word becomes opaque; commands inside are kept."""
        t = self.text
        if t[self.i] == "`":
            end = self.i + 1
            while end < len(t) and t[end] != "`":
                end += 2 if t[end] == "\\" else 1
            if end >= len(t):
                raise _Unparseable("an unbalanced backtick")
            self.nested.append(t[self.i + 1: end].replace("\\`", "`"))
            self.i = end + 1
        elif t.startswith("(", self.i + 1):
            self.i += 1
            self.nested.append(self._balanced())  # `$((…))` arithmetic may hold `$(…)` too
        elif t.startswith("{", self.i + 1):
            end = t.find("}", self.i + 2)
            if end < 0:
                raise _Unparseable("an unbalanced ${")
            self.nested.append(t[self.i + 2: end])  # `${x:-$(cmd)}`
            self.i = end + 1
        elif t.startswith("'", self.i + 1) and not quoted:  # `$'…'`; inside "…" a plain `$`
            end = self.i + 2
            while end < len(t) and t[end] != "'":
                end += 2 if t[end] == "\\" else 1
            if end >= len(t):
                raise _Unparseable("an unbalanced $'")
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
        raise _Unparseable("an unbalanced parenthesis")


# -- simple commands -----------------------------------------------------------------------------

_SEPARATORS = frozenset({";", "&", "&&", "||", ";;", "|", "|&", "(", ")"})
_READ_REDIRECTS = frozenset({"<", "<<", "<<-", "<<<", "<&"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


@dataclass
class _Command:
    words: list[_Word] = field(default_factory=list)
    writes_to: list[_Word] = field(default_factory=list)  # redirection targets
    stdin_code: bool = False  # stdin is a pipe or a redirection: a shell would run what it reads


def _simple_commands(tokens: list[_Word | _Op]) -> list[_Command]:
    commands = [_Command()]
    redirect: str | None = None
    for token in tokens:
        current = commands[-1]
        if isinstance(token, _Op):
            redirect = None
            if token.text in _SEPARATORS:
                commands.append(_Command(stdin_code=token.text in ("|", "|&")))
            elif token.text in _READ_REDIRECTS:
                current.stdin_code = True
                redirect = token.text
            else:
                redirect = token.text
        elif redirect is not None:
            if redirect in _WRITE_REDIRECTS and not (
                    redirect in (">&", "<&") and (token.text.isdigit() or token.text == "-")):
                current.writes_to.append(token)
            redirect = None
        else:
            current.words.append(token)
    return [c for c in commands if c.words or c.writes_to]


# -- the rules -----------------------------------------------------------------------------------

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while",
                       "until", "esac", "in"})
_NOT_A_PROGRAM = frozenset({"for", "select", "case", "function"})
_OTHER_USER = frozenset({"sudo", "doas", "su", "pkexec", "runuser", "chroot"})
_OTHER_MACHINE = frozenset({"ssh", "scp", "sftp", "mosh", "autossh"})
_WIPERS = frozenset({"dd", "shred", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "mkswap",
                     "blkdiscard"})
# Run the rest of their words as a command (after their own options).
_WRAPPERS = frozenset({"env", "nice", "nohup", "timeout", "time", "command", "builtin", "exec",
                       "stdbuf", "setsid", "ionice", "chrt", "taskset", "xargs", "flock",
                       "unbuffer", "strace", "ltrace", "caffeinate", "chronic", "ifne",
                       "busybox", "numactl", "cgexec", "faketime"})
# Run the rest of their words as a shell line.
_LINE_RUNNERS = frozenset({"eval", "watch"})
# Programs that write to the paths they are given (any path argument outside the workspace
# makes the call tier 4, even one only read: the rule does not guess which argument is which).
_WRITERS = frozenset({"rm", "rmdir", "mv", "cp", "ln", "install", "touch", "mkdir", "tee",
                      "truncate", "chmod", "chown", "chgrp", "unlink", "shred", "sed", "rsync",
                      "patch", "tar", "unzip", "split", "csplit", "mktemp", "mkfifo", "mknod",
                      "cpio", "zip", "gzip", "gunzip", "bzip2", "xz"})
# Programs that write only where an option says: (short letters, long names) taking a path.
_OUTPUT_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "curl": ("oDc", ("--output", "--output-dir", "--cookie-jar", "--dump-header", "--trace",
                     "--trace-ascii", "--stderr", "--etag-save", "--libcurl")),
    "wget": ("OoaP", ("--output-document", "--output-file", "--append-output",
                      "--directory-prefix")),
    "sort": ("o", ("--output",)),
    "tree": ("o", ("--output",)),
    "gcc": ("o", ()),
}
_GIT_GLOBAL_WITH_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace",
                                    "--super-prefix", "--exec-path", "-c", "--config-env"})
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})


@dataclass
class _Context:
    root: Path
    base: Path | None  # where relative paths start; None once a `cd` went somewhere unknown
    depth: int = 0


def _outside(word: _Word, ctx: _Context) -> bool:
    """Whether a path word may resolve outside the workspace."""
    text = word.text
    if text in _DEVICES:
        return False
    if word.opaque or text.startswith("~") or not text:
        return True
    if not text.startswith("/") and ctx.base is None:
        return True
    base = ctx.base or ctx.root
    real = Path(os.path.realpath(os.path.join(base, text)))
    return not (real == ctx.root or real.is_relative_to(ctx.root))


def _has_short(words: Sequence[_Word], letters: str) -> bool:
    return any(w.text.startswith("-") and not w.text.startswith("--")
               and any(letter in w.text[1:] for letter in letters) for w in words)


def _has_long(words: Sequence[_Word], *names: str) -> bool:
    """A `--name` option, or a unique abbreviation of it (GNU getopt accepts those)."""
    for w in words:
        if w.text.startswith("--") and len(w.text) > 3:
            given = w.text.split("=", 1)[0]
            if any(name.startswith(given) for name in names):
                return True
    return False


def _non_options(words: Sequence[_Word]) -> list[_Word]:
    return [w for w in words if not w.text.startswith("-") or w.text == "-"]


def _option_values(args: list[_Word], letters: str, longs: tuple[str, ...]) -> list[_Word]:
    """The values given to the named options: `-o x`, `-ox`, `--output x`, `--output=x`."""
    values = []
    for j, word in enumerate(args):
        text = word.text
        following = args[j + 1] if j + 1 < len(args) else _Word("", True)
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if name in longs:
                values.append(_Word(value, word.opaque) if eq else following)
        elif text.startswith("-") and len(text) > 1 and text[1] in letters:
            values.append(_Word(text[2:], word.opaque) if len(text) > 2 else following)
    return values


def _git(args: list[_Word], ctx: _Context) -> str | None:
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        name = args[i].text.split("=", 1)[0]
        if name in ("-c", "--config-env", "--exec-path"):
            return "git option that can run another program"
        if name in _GIT_GLOBAL_WITH_VALUE:
            value = (args[i].text.split("=", 1)[1:] or [None])[0]
            if value is None:
                i += 1
                value_word = args[i] if i < len(args) else _Word("", True)
            else:
                value_word = _Word(value, args[i].opaque)
            if name in ("-C", "--git-dir", "--work-tree") and _outside(value_word, ctx):
                return "git on a repository outside the workspace"
        i += 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    if sub.opaque:
        return "git subcommand known only when it runs"
    if sub.text == "push" and (
            _has_short(rest, "fd") or any(w.text.startswith(("+", ":")) for w in rest)
            or _has_long(rest, "--force", "--force-with-lease", "--force-if-includes",
                         "--mirror", "--delete", "--prune")):
        return "forced push"
    if sub.text == "reset" and _has_long(rest, "--hard"):
        return "hard reset"
    if sub.text == "clean" and (_has_short(rest, "f") or _has_long(rest, "--force")):
        return "git clean -f"
    writes_paths = sub.text in ("clone", "init", "worktree", "archive", "bundle", "format-patch")
    if writes_paths and any(_outside(w, ctx) for w in _non_options(rest)
                            if "://" not in w.text and not w.text.startswith("git@")):
        return "writes outside the workspace"
    return None


def _destructive(family: str, args: list[_Word], ctx: _Context) -> str | None:
    """The tier-4 reason for one program and its arguments, if any."""
    if family == "rm" and (_has_short(args, "rRf")
                           or _has_long(args, "--recursive", "--force", "--no-preserve-root")):
        return "recursive or forced removal"
    if family in ("chmod", "chown", "chgrp") and (_has_short(args, "R")
                                                  or _has_long(args, "--recursive")):
        return f"recursive {family}"
    if family in _WIPERS:
        return f"{family} overwrites data beyond recovery"
    if family.startswith("mkfs"):
        return "makes a file system"
    if family == "git":
        return _git(args, ctx)
    if family in ("find", "fd") and any(w.text in ("-delete", "--delete") for w in args):
        return "recursive or forced removal"
    if family in _OUTPUT_OPTIONS:
        for word in _option_values(args, *_OUTPUT_OPTIONS[family]):
            if _outside(word, ctx):
                return f"writes outside the workspace ({word.text or '…'})"
    if family in _WRITERS:
        for word in args:
            text = word.text
            if text.startswith("--") and "=" in text:
                word = _Word(text.split("=", 1)[1], word.opaque)
            elif text.startswith("-") and "/" in text and not text.startswith("--"):
                word = _Word(text[2:], word.opaque)
            elif text.startswith("-"):
                continue
            if _outside(word, ctx):
                return f"writes outside the workspace ({text})"
    return None


def _classify_words(words: list[_Word], ctx: _Context, *, stdin_code: bool,
                    unwrap: bool = True) -> Classification:
    i = 0
    while i < len(words) and (words[i].text in _KEYWORDS
                              or (not words[i].opaque and _ASSIGNMENT.match(words[i].text))):
        i += 1
    words = words[i:]
    if not words or words[0].text in _NOT_A_PROGRAM:
        return Classification(ASK, "runs a shell construct")
    program, args = words[0], words[1:]
    if program.opaque:
        return Classification(DESTRUCTIVE, "runs a program known only when it runs")
    family = program_family(program.text)
    if family in _OTHER_USER:
        return Classification(DESTRUCTIVE, f"runs as another user ({family})")
    if family in _OTHER_MACHINE:
        return Classification(DESTRUCTIVE, f"runs on another machine ({family})")
    if family in _LINE_RUNNERS:
        return _classify_line(" ".join(w.text for w in _non_options(args)), ctx)
    if family in _WRAPPERS:
        if not unwrap:  # a wrapper inside a wrapper: the outer one tries every suffix already
            return Classification(ASK, f"runs {os.path.basename(program.text)}")
        # Its own options and their values are not told apart from the command they precede
        # (`nice -n 5 rm`, `timeout -s KILL 5 rm`): every word is tried as the program.
        return _max(Classification(ASK, f"runs {os.path.basename(program.text)}"),
                    *(_classify_words(args[j:], ctx, stdin_code=stdin_code, unwrap=False)
                      for j in range(len(args)) if not args[j].text.startswith("-")))
    if family in SHELL_PROGRAMS or family.startswith(INTERPRETER_PREFIXES):
        found = _runs_code(family, args, ctx, stdin_code=stdin_code)
        if found is not None:
            return found
    if family in ("find", "fd"):
        for j, word in enumerate(args):
            if word.text in ("-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X",
                             "--exec-batch"):
                inner = [w for w in args[j + 1:] if w.text not in (";", "+")]
                found = _classify_words(inner, ctx, stdin_code=False)
                if found.tier == DESTRUCTIVE:
                    return found
    reason = _destructive(family, args, ctx)
    if reason is not None:
        return Classification(DESTRUCTIVE, reason)
    return Classification(ASK, f"runs {os.path.basename(program.text)}")


def _runs_code(family: str, args: list[_Word], ctx: _Context, *,
               stdin_code: bool) -> Classification | None:
    """A shell's `-c` line, classified; or tier 4 for a shell or interpreter reading its code
    from a pipe or redirection."""
    if family in SHELL_PROGRAMS:
        for j, word in enumerate(args):
            if word.text.startswith("-") and not word.text.startswith("--") and "c" in word.text:
                # `sh -c LINE`, `bash -o pipefail -ec LINE`: any later operand may be the line.
                lines = _non_options(args[j + 1:])
                if not lines or any(line.opaque for line in lines):
                    return Classification(DESTRUCTIVE,
                                          f"runs a {family} line known only when it runs")
                return _max(*(_classify_line(line.text, ctx) for line in lines))
    operands = _non_options(args)
    reads_stdin = not operands or operands[0].text == "-"
    if family in SHELL_PROGRAMS and any(w.text == "-s" for w in args):
        reads_stdin = True
    if stdin_code and reads_stdin:
        kind = "a shell" if family in SHELL_PROGRAMS else "an interpreter"
        return Classification(DESTRUCTIVE, f"pipes into {kind} ({family})")
    return None


def _max(*found: Classification) -> Classification:
    worst = found[0]
    for item in found[1:]:
        if item.tier > worst.tier:
            worst = item
    return worst


def _classify_line(line: str, ctx: _Context) -> Classification:
    if ctx.depth >= _MAX_DEPTH:
        return Classification(DESTRUCTIVE, "nested too deeply to read")
    inner = _Context(ctx.root, ctx.base, ctx.depth + 1)
    try:
        lexer = _Lexer(line).run()
    except _Unparseable as exc:
        return Classification(DESTRUCTIVE, f"cannot be parsed ({exc})")
    results = [_classify_line(text, inner) for text in lexer.nested]
    for command in _simple_commands(lexer.tokens):
        results.append(_classify_command(command, inner))
        _follow_cd(command, inner)
    if not results:
        return Classification(ASK, "runs nothing")
    worst = _max(*results)
    if worst.tier == ASK and len(results) > 1:
        return Classification(ASK, "runs several commands")
    return worst


def _classify_command(command: _Command, ctx: _Context) -> Classification:
    for target in command.writes_to:
        if _outside(target, ctx):
            return Classification(DESTRUCTIVE,
                                  f"writes outside the workspace (> {target.text or '…'})")
    if not command.words:
        return Classification(ASK, "redirects output inside the workspace")
    return _classify_words(command.words, ctx, stdin_code=command.stdin_code)


def _follow_cd(command: _Command, ctx: _Context) -> None:
    words = [w for w in command.words if w.text not in _KEYWORDS]
    if not words or words[0].text not in ("cd", "pushd", "popd"):
        return
    target = _non_options(words[1:])
    if not target or words[0].text == "popd" or target[0].opaque or target[0].text in ("-", "~") \
            or target[0].text.startswith("~") or ctx.base is None:
        ctx.base = None
        return
    ctx.base = Path(os.path.realpath(os.path.join(ctx.base, target[0].text)))


def classify_command(command: str | Sequence[str], workspace: str | Path) -> Classification:
    """The tier of a shell command run in `workspace`: a command line (`str`, read as `sh -c`
    would) or an argv list (run without a shell)."""
    root = Path(os.path.realpath(workspace))
    ctx = _Context(root, root)
    if isinstance(command, str):
        return _classify_line(command, ctx)
    words = [_Word(str(arg), False) for arg in command]
    return _classify_command(_Command(words=words), ctx)
