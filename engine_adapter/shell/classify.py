"""`classify_command`: the permission tier of a shell command, 3 (ask) or 4 (destructive: ask
every time, never granted, never auto-approved), and in a few words why.

It reads a command line (or an argv list) through the shell lexer — lists, pipes, redirections,
substitutions, quoting, here-documents and their bodies — and judges every simple command in it,
nested ones included (`$(…)`, backticks, `<(…)`, `sh -c '…'`, `eval`, `trap`, `find -exec`,
`xargs`, and the commands wrappers such as `nice`, `fakeroot` or `unshare` run). Tier 4 is:

- recursive or forced removal, by `rm` or by other means (`find -delete`, `find -exec rm`,
  `xargs rm`, `git rm -r`, `rsync --delete`, `git clean -f`), `truncate` to a smaller size;
- a forced push, a hard reset, discarding uncommitted changes; recursive `chmod`/`chown`;
  `dd`, `mkfs` and other disk wipers;
- code the classifier cannot read: a pipe (or redirection, or here-document) into a shell or
  interpreter, inline code (`python3 -c`, `perl -e`, `node -e`), a `sed` script with `e` or `w`,
  `awk` with `system()` or pipes, a line for a shell whose syntax it does not read (`fish -c`);
- writes outside the workspace: a redirection, a file-writing program's operand, or an output
  option (`--output=`, `-o`, long forms and their abbreviations) that resolves outside it (`~`,
  absolute paths, `..`, symlinks, a `cd` away, or a `cd` it cannot follow), and removing or
  replacing a device node (the device exemption is for redirections and output options only);
- settings that make later commands run programs (`git config core.fsmonitor`, a git alias, an
  environment variable such as `GIT_EXTERNAL_DIFF` or `LD_PRELOAD`);
- running as another user (`sudo`), on another machine (`ssh`), or outside this run
  (`systemd-run`, `at`), a program only known when the command runs (`$CMD`), or a command that
  cannot be parsed.

Everything else is tier 3. When in doubt, the riskier answer: a false tier 4 costs the human a
key press, a false tier 3 can cost them their files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine_adapter.shell.context import (
    Context,
    has_long,
    non_options,
    option_values,
    outside,
    runs_later_target,
)
from engine_adapter.shell.lexer import ShellSyntaxError, SimpleCommand, Word, lex, simple_commands
from engine_adapter.shell.outside_run import outside_run
from engine_adapter.shell.program_code import program_code
from engine_adapter.shell.programs import (
    ENV_PATH_LISTS,
    LINE_OPTIONS,
    NON_POSIX_SHELLS,
    OTHER_MACHINE,
    OTHER_USER,
    REMOVERS,
    RUNS_ARGV,
    RUNS_LINE,
    SCHEDULERS,
    SHELL_PROGRAMS,
    THROUGH_SHELL,
    basename,
    env_runs_program,
    inline_code_options,
    is_interpreter,
    program_family,
)
from engine_adapter.shell.rules import destructive

__all__ = ["ASK", "DESTRUCTIVE", "EDIT", "Classification", "classify_command"]

EDIT = 2  # a plain edit inside the workspace (what accept-edits runs unasked)
ASK = 3
DESTRUCTIVE = 4
_MAX_DEPTH = 8


@dataclass(frozen=True)
class Classification:
    """A command's tier and, in a few words, why."""

    tier: int
    reason: str


def classify_command(command: str | Sequence[str], cwd: str | Path) -> Classification:
    """The tier of a shell command run in `cwd` (the workspace): a command line (`str`, read as
    `sh -c` would) or an argv list (run without a shell)."""
    root = Path(os.path.realpath(cwd))
    ctx = Context(root, root)
    if isinstance(command, str):
        return _classify_line(command, ctx)
    words = [Word(str(arg), str(arg), False) for arg in command]
    return _classify_command(SimpleCommand(words=words), ctx)


def _tier4(reason: str) -> Classification:
    return Classification(DESTRUCTIVE, reason)


def _worst(*found: Classification) -> Classification:
    worst = found[0]
    for item in found[1:]:
        if item.tier > worst.tier:
            worst = item
    return worst


# -- lines ---------------------------------------------------------------------------------------

def _classify_line(line: str, ctx: Context) -> Classification:
    """A line run in the shell of `ctx` (its `cd`s change `ctx`)."""
    if not ctx.spend(len(line)):
        return _tier4("too long or too deeply nested to read")
    if ctx.depth >= _MAX_DEPTH:
        return _tier4("nested too deeply to read")
    try:
        lexed = lex(line)
        commands = simple_commands(lexed.tokens)
    except ShellSyntaxError as exc:
        return _tier4(f"cannot be parsed ({exc})")
    results = [_classify_subshell(text, ctx) for text in lexed.nested]
    stack: list[tuple[int, Path | None]] = []  # open `( … )` groups and the base before each
    for command in commands:
        if ctx.exhausted:
            results.append(_tier4("too long or too deeply nested to read"))
            break
        groups = command.subshells
        while stack and (len(stack) > len(groups) or stack[-1][0] != groups[len(stack) - 1]):
            _, before = stack.pop()
            if ctx.base != before:
                ctx.base = None  # a subshell moved: where the shell is now is not followed
        stack.extend((group, ctx.base) for group in groups[len(stack):])
        results.append(_classify_command(command, ctx))
        _follow_cd(command, ctx)
    if not results:
        return Classification(ASK, "runs nothing")
    worst = _worst(*results)
    if worst.tier == ASK and len(results) > 1:
        return Classification(ASK, "runs several commands")
    return worst


def _classify_subshell(line: str, ctx: Context) -> Classification:
    """A line run in a child shell (a substitution, `sh -c`): its `cd`s stay there."""
    child = ctx.child()
    found = _classify_line(line, child)
    ctx.removes = ctx.removes or child.removes
    return found


def _classify_here(line: str, ctx: Context) -> Classification:
    """A line run in the current shell (`eval`): a `cd` in it is not followed."""
    child = ctx.child()
    found = _classify_line(line, child)
    ctx.removes = ctx.removes or child.removes
    if child.base != ctx.base:
        ctx.base = None
    return found


def _classify_command(command: SimpleCommand, ctx: Context) -> Classification:
    for target in command.writes_to:
        if outside(target, ctx, opens_for_write=True):
            return _tier4(f"writes outside the workspace (> {target.text or '…'})")
        later = runs_later_target(target, ctx)
        if later is not None:
            return _tier4(f"{later} (> {target.text})")
    if not command.words:
        return Classification(ASK, "redirects output inside the workspace")
    return _classify_words(command.words, ctx, stdin_code=command.stdin_code)


# -- simple commands -----------------------------------------------------------------------------

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while",
                       "until", "esac", "in", "time"})
_NOT_A_PROGRAM = frozenset({"for", "select", "case", "function"})
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_RUNS_MANY = frozenset({"xargs", "parallel", "sem"})  # run a command over every input
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X",
                        "--exec-batch"})


def _classify_words(words: list[Word], ctx: Context, *, stdin_code: bool,
                    unwrap: bool = True) -> Classification:
    if not ctx.spend(len(words)):
        return _tier4("too long or too deeply nested to read")
    i = 0
    while i < len(words) and (words[i].text in _KEYWORDS
                              or _ASSIGNMENT.match(words[i].raw)):
        danger = _env_danger(words[i], ctx) if words[i].text not in _KEYWORDS else None
        if danger is not None:
            return _tier4(danger)
        i += 1
    words = words[i:]
    if not words or words[0].text in _NOT_A_PROGRAM:
        return Classification(ASK, "runs a shell construct")
    program, args = words[0], words[1:]
    if program.opaque:
        return _tier4("runs a program known only when it runs")
    family = program_family(program.text)
    name = basename(program.text)
    if family in OTHER_USER:
        return _tier4(f"runs as another user ({family})")
    if family in OTHER_MACHINE:
        return _tier4(f"runs on another machine ({family})")
    if family in SCHEDULERS:
        return _tier4(f"runs a command outside this run ({family})")
    if family in RUNS_ARGV:  # `nsenter`, `gdb -p`: a wrapper may itself act outside this run
        elsewhere = outside_run(family, args)
        if elsewhere is not None:
            return _tier4(elsewhere)
    if family in _DECLARERS:
        for word in args:
            danger = _env_danger(word, ctx)
            if danger is not None:
                return _tier4(danger)
    found = _runs_code(family, name, args, ctx, stdin_code=stdin_code, unwrap=unwrap)
    if found is not None:
        return found
    if family in ("find", "fd"):
        found = _find_exec(args, ctx)
        if found is not None:
            return found
    reason = destructive(family, args, ctx) or program_code(family, args, stdin_code=stdin_code)
    if reason is not None:
        return _tier4(reason)
    if family in REMOVERS:
        ctx.removes = True
    return Classification(ASK, f"runs {name}")


def _env_danger(word: Word, ctx: Context) -> str | None:
    """Why setting a variable (`NAME=value`, or a bare `NAME` being exported) is tier 4."""
    name, eq, value = word.text.partition("=")
    if not env_runs_program(name):
        return None
    if name.upper() in ENV_PATH_LISTS and eq and not word.opaque:
        entries = [Word(entry, entry, False) for entry in value.split(":") if entry]
        if not any(outside(entry, ctx) for entry in entries):
            return None  # `PYTHONPATH=src`: directories in the workspace
    return f"sets {name}, which can make commands run another program or load other code"


def _runs_code(family: str, name: str, args: list[Word], ctx: Context, *,
               stdin_code: bool, unwrap: bool) -> Classification | None:
    """The verdict for a program that runs code or commands given in its words, if it is one."""
    if family in RUNS_LINE:
        if family == "trap":
            operands = [w for w in non_options(args) if w.text != "--"]
            if not operands or any(w.text in ("-p", "-l") for w in args):
                return Classification(ASK, "lists traps")
            found = _classify_here(operands[0].text, ctx)
            return _worst(Classification(ASK, "sets a trap"), found)
        return _worst(Classification(ASK, f"runs {name}"),
                      _classify_here(" ".join(w.text for w in non_options(args)), ctx))
    if family in LINE_OPTIONS:
        lines = option_values(args, *LINE_OPTIONS[family])
        if family == "sg":  # `sg GROUP [-c] COMMAND`: the command is a shell line either way
            lines += non_options(args)[1:]
        if lines:
            if family in NON_POSIX_SHELLS:
                return _tier4(f"runs a {family} line (not shell syntax the classifier reads)")
            found = _lines(lines, ctx, f"runs a {family} line known only when it runs")
            if family in RUNS_ARGV:  # `env vim -S x`: the option may be the program's own
                return _worst(found, _wrapper(family, name, args, ctx, stdin_code=stdin_code,
                                              unwrap=unwrap))
            return found
    if family in SHELL_PROGRAMS:
        shell_line = _shell_line(family, args, ctx)
        if shell_line is not None:
            return shell_line
    inline = _inline_code(family, args)
    if inline is not None:
        return _tier4(f"runs inline {family} code ({inline})")
    if (family in SHELL_PROGRAMS or is_interpreter(family)) and stdin_code:
        operands = non_options(args)
        reads_stdin = not operands or operands[0].text == "-" or (
            family in SHELL_PROGRAMS and any(w.text == "-s" for w in args))
        if reads_stdin:
            kind = "a shell" if family in SHELL_PROGRAMS else "an interpreter"
            return _tier4(f"pipes into {kind} ({family})")
    if family in RUNS_ARGV:
        return _wrapper(family, name, args, ctx, stdin_code=stdin_code, unwrap=unwrap)
    return None


def _lines(lines: list[Word], ctx: Context, unknown: str) -> Classification:
    if any(line.opaque for line in lines):
        return _tier4(unknown)
    return _worst(*(_classify_subshell(line.text, ctx) for line in lines))


_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def _shell_line(family: str, args: list[Word], ctx: Context) -> Classification | None:
    """A shell's `-c` line (`sh -c LINE`, `bash -o pipefail -ec LINE`, `--command=LINE`): the
    first operand once the shell's options (and their values) are skipped."""
    found = None
    for word in args:
        text = word.text
        short_c = text.startswith("-") and not text.startswith("--") and "c" in text[1:]
        long_c = text.startswith("--") and has_long([word], "--command")
        if short_c or long_c or text.lower() in ("-command", "/c", "-encodedcommand"):
            found = word
            break
    if found is None:
        return None
    if family in NON_POSIX_SHELLS:
        return _tier4(f"runs a {family} line (not shell syntax the classifier reads)")
    unknown = f"runs a {family} line known only when it runs"
    if found.text.startswith("--") and "=" in found.text:
        return _lines([Word(found.text.split("=", 1)[1], found.raw, found.opaque)], ctx, unknown)
    skip = False
    for j, word in enumerate(args):
        if skip:
            skip = False
        elif word.text == "--":
            return _lines(args[j + 1: j + 2], ctx, unknown) if j + 1 < len(args) \
                else _tier4(unknown)
        elif word.text in _SHELL_VALUE_OPTIONS:
            skip = True
        elif not word.text.startswith(("-", "+")) or word.opaque:
            return _lines([word], ctx, unknown)
    return _tier4(unknown)


# Interpreter options whose value is the next word (so it is not the script).
_VALUE_OPTIONS = frozenset({"-W", "-X", "-I", "-r", "-C", "-M", "-Q", "--require", "--import",
                            "--loader", "--experimental-loader", "--conditions",
                            "--input-type", "--env-file", "--title"})


def _inline_code(family: str, args: list[Word]) -> str | None:
    """The option that gives an interpreter code to run inline (`-c`, `-e`, `--eval`), if any.
    Options are read up to the script (or module) name: what follows are its arguments."""
    spec = inline_code_options(family)
    if spec is None:
        return None
    letters, longs = spec
    skip = False
    for word in args:
        text = word.text
        if skip:
            skip = False
            continue
        if text == "--" or text in ("-m", "-"):
            return None
        if text.startswith("--"):
            given = text[2:].split("=", 1)[0].lower()
            if given and any(long == given or (long.startswith(given) and len(given) >= 2)
                             for long in longs):
                return text
            skip = text in _VALUE_OPTIONS
        elif text.startswith("-") and len(text) > 1:
            if text[1:].split("=", 1)[0].lower() in longs:
                return text  # `erl -eval`, `gdb -ex`
            if any(letter in text[1:] for letter in letters):
                return text
            skip = text in _VALUE_OPTIONS
        elif family == "deno" and text == "eval":
            return text
        elif word.opaque or not text.startswith("-"):
            return None  # the script: what follows are its arguments
    return None


def _wrapper(family: str, name: str, args: list[Word], ctx: Context, *, stdin_code: bool,
             unwrap: bool) -> Classification:
    """A program that runs the rest of its words. Its own options and their values are not told
    apart from the command they precede (`nice -n 5 rm`, `timeout -s KILL 5 rm`): every word is
    tried as the program. A wrapper inside a wrapper is not unwrapped again (the outer one
    already tries every suffix)."""
    runs = Classification(ASK, f"runs {name}")
    if not unwrap:
        return runs
    child = ctx.child()
    found: list[Classification] = [runs]
    for j in range(len(args)):
        if ctx.exhausted:
            found.append(_tier4("too long or too deeply nested to read"))
            break
        if args[j].text.startswith("-") or not _may_be_program(args, j):
            continue
        if family in THROUGH_SHELL:
            if child.depth >= _MAX_DEPTH:
                found.append(_tier4("nested too deeply to read"))
                break
            ctx.spend(len(args) - j)
            found.append(_classify_line(" ".join(w.text for w in args[j:]), child))
        else:
            found.append(_classify_words(args[j:], child, stdin_code=stdin_code, unwrap=False))
    ctx.removes = ctx.removes or child.removes
    if child.base != ctx.base:
        ctx.base = None
    worst = _worst(*found)
    if worst.tier < DESTRUCTIVE and family in _RUNS_MANY and child.removes:
        return _tier4(f"removes every file it is given ({family} running a removal)")
    return worst


def _may_be_program(args: list[Word], j: int) -> bool:
    """Whether word `j` after a wrapper may be the program it runs: one of the first words, or
    right after the wrapper's options (an option, its value, one operand such as `timeout`'s
    duration) or after another wrapper. Bounds the work on a very long line."""
    if j < 32:
        return True
    return any(w.text.startswith("-") or program_family(w.text) in RUNS_ARGV
               for w in args[max(0, j - 3): j])


def _find_exec(args: list[Word], ctx: Context) -> Classification | None:
    for j, word in enumerate(args):
        if word.text in _FIND_EXEC:
            inner = [w for w in args[j + 1:] if w.text not in (";", "+")]
            child = ctx.child()
            found = _classify_words(inner, child, stdin_code=False)
            if found.tier == DESTRUCTIVE:
                return found
            if child.removes:
                return _tier4("removes every file it finds (find -exec running a removal)")
    return None


# -- cd ------------------------------------------------------------------------------------------

_CD = frozenset({"cd", "pushd", "popd", "chdir"})


def _follow_cd(command: SimpleCommand, ctx: Context) -> None:
    """Move `ctx.base` with a plain `cd DIR`; forget where the shell is after any `cd` it cannot
    follow (`builtin cd`, `command cd`, `cd` in a pipeline, `popd`, `cd -`, `source`)."""
    words = [w for w in command.words if w.text not in _KEYWORDS]
    while words and _ASSIGNMENT.match(words[0].raw):
        words = words[1:]
    if not words:
        return
    program = words[0].text
    if program in (".", "source") or any(w.text in _CD for w in words[1:]):
        ctx.base = None
        return
    if program not in _CD:
        return
    targets = non_options(words[1:])
    target = targets[0] if len(targets) == 1 else None
    if (target is None or program != "cd" or command.piped or command.background
            or ctx.base is None or target.opaque or target.text == "-"
            or target.text.startswith("~") or _cdpath_applies(target.text)):
        ctx.base = None
        return
    ctx.spend(64)  # a file-system walk
    ctx.base = Path(os.path.realpath(os.path.join(ctx.base, target.text)))


def _cdpath_applies(target: str) -> bool:
    """`cd name` searches CDPATH first when it is set (in the environment commands inherit)."""
    return bool(os.environ.get("CDPATH")) and not target.startswith(("/", "./", "../")) \
        and target not in (".", "..")
