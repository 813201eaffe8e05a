"""`grant_prefix`: what `[a] always` would grant for a call, and `explain_prefix`: why nothing.

A grant is a human's standing "yes" to a *program prefix* (`ls`, `git status`, `npm test`) of one
tool; later calls match it by exact string equality, so `ls` never covers `lsof` and `git` never
covers `./git` or `Git`.

Threat model. The agent (or text it read) chooses every later command. After the human grants
`git status` once, the agent may try to smuggle something else in under that name: a second
command (`;`, `&&`, `|`, `&`, newline), a substitution or expansion the human never saw (`$(…)`,
backticks, `<(…)`, `$IFS`, globs, `~`), a redirection that writes a file, an environment
prefix or `env` key that swaps the program git runs (`GIT_EXTERNAL_DIFF=…`), a `cwd` the human did
not see, an option that makes the granted program run another program, upload a file, force,
or write outside the workspace (`git -c core.fsmonitor=…`, `curl -F f=@…`, `git checkout -f`,
`gcc --output=/usr/local/bin/git`), or a program that runs code from its arguments (`bash -c`,
`python -c`, `env`, `sudo`, `xargs`). Each makes the prefix `""` (not grantable). When in
doubt, `""`: a false "not grantable" costs the human one key press, a false match their machine.

Out of scope: a granted program that runs code from the *workspace* (`npm test` runs
package.json scripts, `pytest` imports conftest.py, `git commit` runs hooks). A grant trusts the
program and the workspace it runs in; it does not, and cannot, vet what those files say.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from engine_adapter.shell.grant_options import dangerous_arg
from engine_adapter.shell.lexer import NEWLINE, Op, ShellSyntaxError, Word, lex, simple_commands
from engine_adapter.shell.programs import basename, denied_reason, program_family
from engine_adapter.shell.subcommands import (
    MULTIPLEXERS,
    TARGET_STYLE,
    multiplexer_prefix,
    target_prefix,
)

__all__ = ["COMMAND_KEYS", "UNGRANTABLE_TOOLS", "PrefixVerdict", "explain_prefix",
           "grant_prefix"]

UNGRANTABLE_TOOLS = frozenset({"alter_verification"})
"""Tools no grant ever allows: each call goes to the human (or the configured policy)."""

COMMAND_KEYS = ("command", "cmd", "argv", "args", "arguments", "script", "commands")
"""Input keys that carry a command to run; a grant judges exactly one of them."""

# Keys a shell-style input may carry besides its command: descriptive only. `cwd` is judged on
# its own; any other key (`env`, `shell`, `stdin`, …) could change what runs, so it is refused.
_METADATA_KEYS = frozenset({"description", "title", "reason", "rationale", "explanation",
                            "summary", "timeout", "timeout_ms", "timeout_s", "timeout_seconds",
                            "outputByteLimit", "output_byte_limit"})
_MAX_COMMAND = 16_384  # longer than any command a human reads before approving it
_MAX_WORDS = 512


class PrefixVerdict(NamedTuple):
    """A call's grant prefix, and when it is `""`, why (one short phrase about this call)."""

    prefix: str
    why: str


def grant_prefix(tool: str, tool_input: Mapping[str, Any]) -> str:
    """The program prefix of a call: what `[a] always` grants, or `""` when nothing may be.

    Shell-style input only: `{"command": str}` (a shell line) or `{"argv": [str, …]}` (not
    shell-parsed), plus descriptive keys (`description`, `timeout`, …) and a `cwd` that is the
    workspace (absent, `""` or `"."`). It is `""` unless the call is one plain simple command
    with no shell metacharacter anywhere (even quoted), whose program does not run code from its
    arguments, and no option or operand that runs another program, uploads, forces, or names a
    path outside the workspace. See `explain_prefix` for the reason. Never raises.
    """
    return explain_prefix(tool, tool_input).prefix


def explain_prefix(tool: object, tool_input: object) -> PrefixVerdict:
    """`grant_prefix` and, when it is `""`, the specific reason ("runs python3, an interpreter",
    "chains two commands with &&", "sets GIT_EXTERNAL_DIFF in the environment"). Never raises."""
    try:
        verdict = _explain(tool, tool_input)
    except Exception:  # defensive: any surprise means "not grantable", never a crash
        return PrefixVerdict("", "the command could not be read")
    if not verdict.prefix.strip():
        return PrefixVerdict("", verdict.why or "the command could not be read")
    return verdict


def _no(why: str) -> PrefixVerdict:
    return PrefixVerdict("", why)


def _shown(text: object, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _explain(tool: object, tool_input: object) -> PrefixVerdict:
    if not isinstance(tool, str):
        return _no("the call names no tool")
    if tool in UNGRANTABLE_TOOLS:
        return _no(f"{_shown(tool)} is never granted")
    if not isinstance(tool_input, Mapping):
        return _no("the input is not a set of named values")
    present = [k for k in COMMAND_KEYS if k in tool_input]
    if not present:
        return _no(f"only shell commands can be granted, and this {_shown(tool, 40)} call "
                   "has none")
    if len(present) > 1:
        return _no(f"carries two commands ({present[0]} and {present[1]})")
    env = tool_input.get("env")
    if env:
        return _no(_env_reason(env))
    cwd = tool_input.get("cwd")
    if cwd not in (None, "", "."):
        return _no(f"runs in another directory (cwd {_shown(cwd)})")
    other = sorted(str(k) for k in tool_input
                   if k not in _METADATA_KEYS and k not in ("env", "cwd", present[0]))
    if other:
        return _no(f"carries {_shown(other[0], 40)}, which a grant cannot judge")
    key = present[0]
    value = tool_input[key]
    if key == "command" and isinstance(value, str):
        words, why = _command_words(value)
    elif key == "argv" and isinstance(value, list):
        words, why = _argv_words(value)
    else:
        return _no(f"only a `command` line or an `argv` list can be granted (this call "
                   f"gives `{key}`)")
    if words is None:
        return _no(why)
    return _words_prefix(words)


def _env_reason(env: object) -> str:
    names: list[str] = []
    if isinstance(env, Mapping):
        names = [str(k) for k in env]
    elif isinstance(env, Sequence) and not isinstance(env, str):
        for item in env:
            name = item.get("name") if isinstance(item, Mapping) else str(item).split("=")[0]
            names.append(str(name))
    if not names:
        return "sets variables in the environment"
    more = f" and {len(names) - 1} more" if len(names) > 1 else ""
    return f"sets {_shown(names[0], 40)}{more} in the environment"


# -- the characters a grantable command may contain ---------------------------------------------
#
# A whitelist, checked on the raw text regardless of quoting: no `;&|` (lists, pipes,
# background), no `<>` (redirections, heredocs, process substitution), no `()`, no `$` or
# backtick (expansion, substitution; both still work inside double quotes), no `\` (escapes),
# no `*?[]` (globs), no `{}` (brace expansion), no `~` (tilde expansion), no `!` (history
# expansion), no `#` (comments), no `^`, no tab, newline or other control, format (bidi,
# zero-width) or separator character. What is left has no meaning to a POSIX shell except plain
# spaces between words and '…'/"…" quoting, whose contents are then literal.

_SAFE_ASCII = frozenset(string.ascii_letters + string.digits + " -_.,/:=+@%")
_QUOTES = frozenset("'\"")
_LINE_BREAKS = frozenset("\n\r\x85\u2028\u2029\x0b\x0c")
_OP_PHRASES = {
    ";": "chains two commands with ;", "&&": "chains two commands with &&",
    "||": "chains two commands with ||", ";;": "has a case branch (;;)",
    "|": "pipes into another command (|)", "|&": "pipes into another command (|&)",
    "&": "runs a command in the background (&)", "(": "runs a subshell ( … )",
    ")": "runs a subshell ( … )", "<<": "feeds a here-document (<<)",
    "<<-": "feeds a here-document (<<-)", "<<<": "feeds a here-string (<<<)",
    "<": "redirects input from a file (<)", NEWLINE: "holds more than one command line",
}
_CHAR_PHRASES = {
    "*": "has a glob pattern (*)", "?": "has a glob pattern (?)", "[": "has a glob pattern ([)",
    "]": "has a glob pattern (])", "{": "has a brace expansion ({)",
    "}": "has a brace expansion (})", "~": "expands ~ to a home directory",
    "!": "uses ! (history expansion or negation)", "#": "has a comment (#)",
    "\\": "has a backslash escape", "^": "contains ^", "\t": "contains a tab",
}


def _safe_char(ch: str, *, quotes: bool) -> bool:
    if ch.isascii():
        return ch in _SAFE_ASCII or (quotes and ch in _QUOTES)
    return unicodedata.category(ch)[0] in "LN"


def _command_words(command: str) -> tuple[list[Word] | None, str]:
    """The words of a plain simple command, or None and why it is anything more."""
    if len(command) > _MAX_COMMAND:
        return None, f"is longer than {_MAX_COMMAND:,} characters"
    if not command.strip():
        return None, "the command is empty"
    bad = next((ch for ch in command if not _safe_char(ch, quotes=True)), None)
    try:
        lexed = lex(command)
        commands = simple_commands(lexed.tokens)
    except ShellSyntaxError as exc:
        return None, f"cannot be read ({exc})"
    if bad is not None:
        first = commands[0].words if len(commands) == 1 and commands[0].words else []
        ops = any(isinstance(t, Op) for t in lexed.tokens)
        denied = _program_reason(first[0]) if first and first[0].plain and not ops else None
        return None, denied or _structure_reason(command, lexed.tokens, lexed.nested, bad)
    if len(commands) != 1 or lexed.nested or any(isinstance(t, Op) for t in lexed.tokens):
        return None, "is not one simple command"
    if len(commands[0].words) > _MAX_WORDS:
        return None, f"has more than {_MAX_WORDS} words"
    return commands[0].words, ""


def _structure_reason(command: str, tokens: Sequence[Word | Op], nested: Sequence[str],
                      bad: str) -> str:
    """The most telling reason a line with an unsafe character is not one plain command."""
    if bad in _LINE_BREAKS:
        return "holds more than one command line"
    op = next((t.text for t in tokens if isinstance(t, Op)), None)
    if op is not None:
        return _OP_PHRASES.get(op, f"redirects output to a file ({op})")
    if "`" in command or "$(" in command:
        return "runs a command substitution"
    if nested or any(isinstance(t, Word) and t.opaque for t in tokens):
        return "expands a variable ($…) whose value the human did not see"
    if bad in ";&|<>()":
        return f"contains {bad} inside quotes (shell metacharacters are never granted)"
    if bad in _CHAR_PHRASES:
        return _CHAR_PHRASES[bad]
    if bad in ("$", "`"):
        return "contains $ or ` inside quotes"
    name = unicodedata.name(bad, "a control character")
    return f"contains an invisible or unusual character (U+{ord(bad):04X} {name.lower()})"


def _argv_words(argv: list[object]) -> tuple[list[Word] | None, str]:
    """The words of an argv call. argv is not shell-parsed, but a grant must not depend on the
    executor never joining it into a shell line, so each element must pass the same character
    whitelist as a command (spaces allowed inside an element, quotes never)."""
    if not argv:
        return None, "the argv list is empty"
    if len(argv) > _MAX_WORDS:
        return None, f"has more than {_MAX_WORDS} words"
    if not all(isinstance(a, str) for a in argv):
        return None, "the argv list holds something other than text"
    words = [Word(a, a, False) for a in argv if isinstance(a, str)]
    if sum(len(w.text) for w in words) > _MAX_COMMAND:
        return None, f"is longer than {_MAX_COMMAND:,} characters"
    for word in words:
        bad = next((ch for ch in word.text if not _safe_char(ch, quotes=False)), None)
        if bad is not None:
            return None, f"argv word {_shown(repr(word.text), 40)} contains {bad!r}"
    return words, ""


# -- programs ------------------------------------------------------------------------------------

# A program word: a bare name or a path, written without quotes. `VAR=x` fails it (no `=`).
_PROGRAM_RE = re.compile(r"(?:[A-Za-z0-9_.+-]*/)*[A-Za-z0-9_+][A-Za-z0-9_.+-]*")
_ASSIGNMENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _program_reason(program: Word) -> str | None:
    """Why a (plain) program word is never granted: an assignment or a program that runs code."""
    assignment = _ASSIGNMENT_RE.match(program.text)
    if assignment:
        return f"sets {assignment.group()[:-1]} in the environment"
    for name in (program_family(program.text), basename(program.text)):
        kind = denied_reason(name)
        if kind is not None:
            return f"runs {_shown(program.text, 40)}, {kind}"
    return None


def _words_prefix(words: list[Word]) -> PrefixVerdict:
    program = words[0]
    if not program.plain:
        return _no("the program name is quoted")
    denied = _program_reason(program)
    if denied is not None:
        return _no(denied)
    if _PROGRAM_RE.fullmatch(program.text) is None:
        return _no(f"{_shown(program.text, 40)} is not a plain program name")
    family = program_family(program.text)
    if family in TARGET_STYLE:
        return PrefixVerdict(*target_prefix(family, words))
    if family in MULTIPLEXERS:
        return PrefixVerdict(*multiplexer_prefix(family, words))
    danger = next((why for w in words[1:] if (why := dangerous_arg(family, None, w.text))), None)
    if danger:
        return _no(danger)
    return PrefixVerdict(program.text, "")
