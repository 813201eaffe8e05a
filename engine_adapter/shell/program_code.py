"""The classifier's rules for programs that run code given in an option or an argument: not
interpreters by name, but a database shell's dot-commands and meta-commands, make's `--eval`,
an editor's start-up commands, a pager's initial command, an archiver's or a search tool's
helper program, a network tool's `exec` address.

`program_code(family, args, stdin_code=…)` returns the tier-4 reason, or `None`. A script read
from a file or from stdin (`psql -f x.sql`, `sqlite3 db < x.sql`, `vim -s keys`) counts as code
the human never saw, as a `sed -f` does: these languages have shell escapes (`\\!`, `.shell`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine_adapter.shell.context import has_long, has_short, non_options, option_values
from engine_adapter.shell.lexer import Word

__all__ = ["program_code"]

Rule = Callable[[str, list[Word], bool], "str | None"]


def program_code(family: str, args: list[Word], *, stdin_code: bool) -> str | None:
    """Why `family ARGS` runs code the classifier cannot read, if it does."""
    rule = _RULES.get(family)
    return rule(family, args, stdin_code) if rule is not None else None


def _long(args: list[Word], *names: str) -> bool:
    """A `--name` option or an abbreviation of it of at least three letters (`--to-c`), and
    the same name with one dash (`-cmd`, `-init`, which sqlite3 and duckdb spell so)."""
    for word in args:
        text = word.text
        if not text.startswith("-") or text == "-":
            continue
        given = text.lstrip("-").split("=", 1)[0].lower()
        if given and any(name == given or (text.startswith("--") and len(given) >= 3
                                           and name.startswith(given)) for name in names):
            return True
    return False


# -- database shells ---------------------------------------------------------------------------

# sqlite3/duckdb dot-commands that only show or set the display; every other one (`.shell`,
# `.system`, `.once |cmd`, `.output`, `.import`, `.load`, `.read`, `.open`, `.save`, `.backup`,
# an unknown or abbreviated one) can run a program, load code, or read or write a file.
_DOT_READS = frozenset({"tables", "schema", "headers", "header", "mode", "indexes", "indices",
                        "databases", "help", "show", "stats", "width", "separator", "nullvalue",
                        "timer", "eqp", "echo", "bail", "changes", "dbinfo", "fullschema",
                        "lint", "print", "prompt", "quit", "exit", "explain", "columns",
                        "rows", "maxrows", "timeout"})
_SQL_EFFECTS = re.compile(
    r"\b(load_extension|writefile|edit\s*\(|attach\b|vacuum\s+into|copy\b[\s\S]*\b(program|to)\b"
    r"|lo_export|lo_import|pg_read_file|pg_file_write|into\s+(out|dump)file|load\s+data"
    r"|install\b|load\b|system\b|shell\b)", re.IGNORECASE)
_DB_OPTIONS = ("cmd", "init", "command", "file", "execute", "eval", "init-command", "source")


def _pieces(text: str) -> list[str]:
    """The lines and statements of a SQL/dot-command argument, stripped."""
    return [piece.strip() for piece in re.split(r"[\n;]", text) if piece.strip()]


def _sqlite(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if any(w.opaque for w in args):
        return f"{family} SQL known only when it runs"
    if _long(args, "cmd", "init", "f"):
        return f"{family} runs commands from an option or a file (-cmd, -init, -f)"
    operands = non_options(args)
    given = option_values(args, "cs", ())  # duckdb's `-c SQL`, `-s SQL`
    for word in [*operands[1:], *given]:
        for piece in _pieces(word.text):
            if piece.startswith("."):
                name = piece[1:].split(None, 1)[0].lower() if len(piece) > 1 else ""
                if name not in _DOT_READS:
                    return f"{family} .{name or '…'} can run a program or read or write a file"
        if _SQL_EFFECTS.search(word.text):
            return f"{family} SQL that loads code or writes files ({_shown(word.text)})"
    if len(operands) <= 1 and not given and stdin_code:
        return f"pipes into {family}, whose dot-commands run programs"
    return None


# psql meta-commands that only describe or show; any other (`\!`, `\o |cmd`, `\g file`,
# `\copy … program`, `\i`, `\w`, `\e`, `\setenv`, `\pset pager`, `\cd`) can run or write.
_PSQL_READS = re.compile(r"\\(d[a-zA-Z+]*|l\+?|list\+?|conninfo|x|timing|echo|qecho|q|quit|\?"
                         r"|h|help|encoding|errverbose|gdesc|sf\+?|sv\+?|z|dp)(?![a-zA-Z!])")


def _psql(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if any(w.opaque for w in args):
        return "psql commands known only when they run"
    if has_short(args, "fL") or _long(args, "file", "log-file"):
        return "psql reads commands from a file (which can run shell commands with \\!)"
    commands = option_values(args, "c", ("command",))
    for word in commands:
        text = _PSQL_READS.sub("", word.text)
        if "\\" in text:
            return f"psql meta-command that can run a program or write a file ({_shown(word.text)})"
        if _SQL_EFFECTS.search(word.text):
            return f"psql SQL that runs a program or writes files ({_shown(word.text)})"
    if not commands and stdin_code:
        return "pipes into psql, whose \\! runs shell commands"
    return None


def _mysql(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if any(w.opaque for w in args):
        return f"{family} commands known only when they run"
    statements = option_values(args, "e", ("execute",))
    for word in statements:
        if "\\" in word.text or _SQL_EFFECTS.search(word.text) or any(
                piece.lower().startswith(("source", "pager", "tee", "system"))
                for piece in _pieces(word.text)):
            return (f"{family} statement that can run a program or write a file "
                    f"({_shown(word.text)})")
    if _long(args, "init-command", "pager", "tee"):
        return f"{family} option that runs commands or a program"
    if not statements and stdin_code:
        return f"pipes into {family}, whose \\! and system run shell commands"
    return None


def _mongosh(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if _long(args, "eval", "file") or has_short(args, "f") or stdin_code:
        return f"runs inline {family} code (JavaScript that can start programs)"
    return None


# -- make, editors, pagers ---------------------------------------------------------------------

def _make(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if has_long(args, "--eval") or has_short(args, "E"):
        return "make --eval runs make code given inline (its recipes are shell lines)"
    for word in args:
        name = word.text.split("=", 1)[0]
        if "=" in word.text and not word.text.startswith("-") and name.strip(
                ":+?!") in ("SHELL", ".SHELLFLAGS", "MAKESHELL", "MAKEFLAGS", "MAKE"):
            return f"make {name}=… changes the program that runs its recipes"
    return None


_VIM = frozenset({"vi", "vim", "nvim", "view", "ex", "vimdiff", "nvimdiff", "gvim", "gview",
                  "rvim", "rview", "evim", "eview", "vimx", "nvi", "vim.basic", "vim.tiny",
                  "vim.nox", "vim.gtk3", "gex", "mvim"})
_PLUS_HARMLESS = re.compile(r"\+(\d*|/[^|!]*|\?[^|!]*)")


def _vim(family: str, args: list[Word], stdin_code: bool) -> str | None:
    for word in args:
        text = word.text
        if text.startswith("+") and (word.opaque or not _PLUS_HARMLESS.fullmatch(text)):
            return f"{family} {_shown(text)} runs an editor command at start-up"
    if _long(args, "cmd", "remote", "remote-send", "remote-expr", "remote-silent",
             "remote-wait", "remote-tab", "remote-wait-silent", "servername", "server",
             "listen", "startuptime", "luamod-dev"):
        return f"{family} runs editor commands at start-up or in another editor (--cmd, --remote)"
    for j, word in enumerate(args):
        text = word.text
        if text.startswith("-") and not text.startswith("--") and any(
                c in text[1:] for c in "cSsuUWl"):
            following = args[j + 1].text if j + 1 < len(args) else ""
            if text in ("-u", "-U") and following in ("NONE", "NORC", "DEFAULTS"):
                continue  # loads no start-up file at all
            return f"{family} {text} runs editor commands or a script at start-up"
    if stdin_code and (family == "ex" or has_short(args, "eE")):
        return f"pipes editor commands into {family}"
    return None


def _emacs(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if _long(args, "eval", "load", "funcall", "script", "exec", "execute", "batch", "x", "l",
             "f", "e", "init-directory"):
        where = "in another emacs, outside this run" if family == "emacsclient" else "at start-up"
        return f"{family} runs Lisp given on the command line {where}"
    return None


_LESS_HARMLESS = re.compile(r"\+(\d+|[GgFf]|/[^|!]*|\?[^|!]*)")


def _pager(family: str, args: list[Word], stdin_code: bool) -> str | None:
    for word in args:
        if word.text.startswith("+") and (word.opaque
                                          or not _LESS_HARMLESS.fullmatch(word.text)):
            return f"{family} {_shown(word.text)} runs a pager command at start-up"
    if family == "less" and _long(args, "lesskey-file", "lesskey-src", "lesskey-content"):
        return "less reads key bindings that can run commands"
    return None


def _man(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if has_short(args, "PH") or _long(args, "pager", "html", "browser", "preprocessor"):
        return "man option that runs another program (-P, -H, --html)"
    return None


# -- archivers, search, other tools ------------------------------------------------------------

_TAR_RUNS = ("to-command", "use-compress-program", "checkpoint-action", "info-script",
             "new-volume-script", "rsh-command", "rmt-command")


def _tar(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if any(w.opaque and w.text.startswith("-") for w in args):
        return f"{family} option known only when it runs"
    options = [w for w in args if w.text.split("=", 1)[0] != "--checkpoint"]  # an exact name
    if _long(options, *_TAR_RUNS) or any("exec=" in w.text for w in args):
        return f"{family} option that runs another program (--to-command, -I, --checkpoint-action)"
    if args and not args[0].text.startswith("-") and any(c in args[0].text for c in "IF"):
        return f"{family} option that runs another program (I or F in {args[0].text})"
    if has_short([w for w in args if not w.text.startswith("--")], "IF"):
        return f"{family} option that runs another program (-I, -F)"
    if not _long(args, "force-local"):
        archives = option_values(args, "f", ("file",))
        if args and not args[0].text.startswith("-") and "f" in args[0].text:
            archives += non_options(args)[1:2]
        for word in archives:
            host, colon, _ = word.text.partition(":")
            if colon and host and "/" not in host:
                return f"{family} reaches {host}: through a remote shell (rsh)"
    return None


def _zip(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if any(w.text == "-TT" or w.text.startswith("-TT=") for w in args) or _long(
            args, "unzip-command"):
        return "zip -TT runs another program to test the archive"
    return None


def _rg(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if _long(args, "pre", "hostname-bin"):
        return f"{family} option that runs another program on every file (--pre)"
    return None


def _program_option(names: tuple[str, ...], letters: str = "",
                    what: str = "runs another program") -> Rule:
    def rule(family: str, args: list[Word], stdin_code: bool) -> str | None:
        if _long(args, *names) or (letters and has_short(args, letters)):
            return f"{family} option that {what}"
        return None
    return rule


_SOCAT_RUNS = re.compile(r"(^|[,!])\s*(exec|system)\s*:", re.IGNORECASE)


def _socat(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if any(_SOCAT_RUNS.search(w.text) or w.opaque for w in non_options(args)):
        return "socat runs a program at one end of the connection (EXEC:, SYSTEM:)"
    return None


def _netcat(family: str, args: list[Word], stdin_code: bool) -> str | None:
    if has_short(args, "ec") or _long(args, "exec", "sh-exec", "lua-exec"):
        return f"{family} runs a program for the connection (-e, -c, --sh-exec)"
    return None


def _shown(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


_RULES: dict[str, Rule] = {
    "sqlite": _sqlite, "duckdb": _sqlite, "psql": _psql, "mysql": _mysql, "mariadb": _mysql,
    "mongosh": _mongosh, "mongo": _mongosh,
    "make": _make,
    **{name: _vim for name in _VIM},
    "emacs": _emacs, "emacsclient": _emacs,
    "less": _pager, "more": _pager, "most": _pager,
    "man": _man,
    "tar": _tar, "gtar": _tar, "bsdtar": _tar, "cpio": _program_option(
        ("rsh-command",), what="runs a remote shell"),
    "zip": _zip,
    "rg": _rg, "ripgrep": _rg,
    "sort": _program_option(("compress-program",)),
    "diff3": _program_option(("diff-program",)), "sdiff": _program_option(("diff-program",)),
    "tcpdump": _program_option(("postrotate-command",), "z"),
    "socat": _socat, "nc": _netcat, "ncat": _netcat, "netcat": _netcat,
}
