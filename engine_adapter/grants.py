"""Approval grants: what `[a] always` remembers, and which later calls a grant may allow.

A grant is a human's standing "yes" to a *program prefix* (`ls`, `git status`, `npm test`) of
one tool at up to one tier. `grant_prefix` computes the prefix of a call; `ApprovalGrant.matches`
compares prefixes by exact string equality, so `ls` never covers `lsof` and `git` never covers
`./git` or `Git`.

Threat model. The agent (or text it read: a README, a web page, a file it just wrote) chooses
every later command. After the human grants `git status` once, the agent may try to smuggle
something else in under that name: a second command (`git status; rm -rf ~`, `&&`, `|`, `&`,
newline), a substitution or expansion that runs or injects text the human never saw
(`$(…)`, backticks, `<(…)`, `$IFS`, `${X}`, globs, `~`), a redirection that writes a file
(`> ~/.bashrc`), an environment prefix that swaps the program git runs
(`GIT_EXTERNAL_DIFF=x git diff`), an option that makes the granted program run another program
or write or delete elsewhere (`git -c core.fsmonitor=…`, `--upload-pack`, `git grep -O`,
npm `--script-shell`, `find -delete`), or a program that runs arbitrary code from its arguments
(`bash -c`, `python -c`, `env`, `sudo`, `xargs`, `eval`). Every one of these makes
`grant_prefix` return `""` (not grantable: a blank prefix never matches). The rule throughout
is: when in doubt, `""` — a false "not grantable" costs the human one key press, a false match
costs them their machine.

Out of scope: a granted program that runs code from the *workspace* (`npm test` runs
package.json scripts, `pytest` imports conftest.py, `make` reads the Makefile, `git commit` runs
hooks, tools read their own config files). A grant trusts the program and the workspace it runs
in; it does not, and cannot, vet what those files say.
"""

from __future__ import annotations

import re
import shlex
import string
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "INTERPRETER_PREFIXES",
    "MAX_GRANTABLE_TIER",
    "SHELL_PROGRAMS",
    "UNGRANTABLE_TOOLS",
    "ApprovalGrant",
    "grant_prefix",
    "program_family",
]

UNGRANTABLE_TOOLS = frozenset({"alter_verification"})
"""Tools no grant ever allows: each call goes to the human (or the configured policy)."""

MAX_GRANTABLE_TIER = 3
"""Tier 4 (the riskiest) is never granted, whatever tier the grant itself records."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalGrant:
    """A standing approval: calls of `tool` whose program prefix is exactly `prefix`, at a tier
    no higher than `tier` (and never tier 4), are allowed without asking.

    `prefix` is what `grant_prefix` returned for the call the human approved; a blank prefix
    (an ungrantable call) matches nothing. `alter_verification` is never granted.
    """

    tool: str
    prefix: str
    tier: int

    def matches(self, tool: str, program: str, tier: int) -> bool:
        """Whether this grant allows a call of `tool` with prefix `program` at `tier`."""
        if not (isinstance(tool, str) and isinstance(program, str)):
            return False
        if not (_is_int(tier) and _is_int(self.tier)):
            return False
        if not isinstance(self.prefix, str) or not self.prefix.strip():
            return False
        if tool in UNGRANTABLE_TOOLS or self.tool in UNGRANTABLE_TOOLS:
            return False
        return (
            tool == self.tool
            and program == self.prefix
            and tier <= self.tier
            and tier <= MAX_GRANTABLE_TIER
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- the characters a grantable command may contain ---------------------------------------------
#
# A whitelist, checked on the raw text before any parsing and regardless of quoting: no `;&|`
# (lists, pipes, background), no `<>` (redirections, heredocs, process substitution), no `()`,
# no `$` or backtick (expansion, substitution; both still work inside double quotes), no `\`
# (escapes, line continuation), no `*?[]` (globs), no `{}` (brace expansion), no `~` (tilde
# expansion), no `!` (history expansion, pipeline negation), no `#` (comments), no `^`, no tab,
# newline or other control, format (bidi, zero-width) or separator character. What is left has
# no meaning to a POSIX shell except plain spaces between words and '…'/"…" quoting, whose
# contents are then literal. Non-ASCII letters and digits (file names) are allowed.

_SAFE_ASCII = frozenset(string.ascii_letters + string.digits + " -_.,/:=+@%")
_QUOTES = frozenset("'\"")
_MAX_COMMAND = 16_384  # longer than any command a human reads before approving it


def _safe_char(ch: str, *, quotes: bool) -> bool:
    if ch.isascii():
        return ch in _SAFE_ASCII or (quotes and ch in _QUOTES)
    return unicodedata.category(ch)[0] in "LN"


class _Word(NamedTuple):
    raw: str  # as written, quotes and all
    value: str  # what the program receives

    @property
    def plain(self) -> bool:
        """Unquoted: what the human read is what the program gets."""
        return self.raw == self.value


def _shell_words(command: str) -> list[_Word] | None:
    """The words of a plain simple command, or None when it is anything more (or malformed)."""
    if len(command) > _MAX_COMMAND:
        return None
    if not all(_safe_char(ch, quotes=True) for ch in command):
        return None
    words: list[_Word] = []
    raw: list[str] = []
    value: list[str] = []
    quote: str | None = None
    in_word = False
    for ch in command:
        if quote is not None:
            raw.append(ch)
            if ch == quote:
                quote = None
            else:
                value.append(ch)
        elif ch == " ":
            if in_word:
                words.append(_Word("".join(raw), "".join(value)))
                raw, value, in_word = [], [], False
        else:
            in_word = True
            raw.append(ch)
            if ch in _QUOTES:
                quote = ch
            else:
                value.append(ch)
    if quote is not None:  # unbalanced quote
        return None
    if in_word:
        words.append(_Word("".join(raw), "".join(value)))
    # Cross-check with a real shell-word parser: any disagreement means "not plain".
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    if tokens != [w.value for w in words]:
        return None
    return words


def _argv_words(argv: Sequence[object]) -> list[_Word] | None:
    """The words of an argv call. argv is not shell-parsed, but a grant must not depend on the
    executor never joining it into a shell line, so each element must pass the same character
    whitelist as a command (spaces allowed inside an element, quotes never)."""
    if len(argv) > 1024 or not all(isinstance(a, str) for a in argv):
        return None
    words = [_Word(a, a) for a in argv if isinstance(a, str)]
    if sum(len(w.value) for w in words) > _MAX_COMMAND:
        return None
    if not all(_safe_char(ch, quotes=False) for w in words for ch in w.value):
        return None
    return words


# -- programs ------------------------------------------------------------------------------------

# A program word: a bare name or a path, written without quotes. `VAR=x` fails it (no `=`).
_PROGRAM_RE = re.compile(r"(?:[A-Za-z0-9_.+-]*/)*[A-Za-z0-9_+][A-Za-z0-9_.+-]*")
# A subcommand (or script or target) word: a plain name, never an option or a path.
_SUB_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]*")
_VERSION_RE = re.compile(r"[-_]?\d+(?:\.\d+)*$")
_EXE_SUFFIXES = (".exe", ".cmd", ".bat", ".com")

SHELL_PROGRAMS = frozenset({
    "sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "pdksh", "oksh", "loksh", "csh",
    "tcsh", "fish", "ash", "yash", "posh", "rc", "es", "elvish", "nu", "nushell", "xonsh",
    "ion", "osh", "ysh", "oil", "busybox", "toybox", "pwsh", "powershell", "cmd", "wsl",
    "scsh",
})
"""Shells, by `program_family`: each runs whatever command text it is given."""

# Programs that run other programs or arbitrary code given in their arguments, change the
# state of the (possibly persistent) shell later calls run in, or are interactive escapes.
_DENY_PROGRAMS = SHELL_PROGRAMS | frozenset({
    # shell builtins and keywords that run a command, or change the shell for later calls
    ".", "source", "eval", "exec", "command", "builtin", "coproc", "time", "trap", "alias",
    "unalias", "export", "declare", "typeset", "local", "readonly", "set", "unset", "shopt",
    "enable", "hash", "cd", "pushd", "popd", "ulimit", "umask", "let", "read", "readarray",
    "mapfile", "fc", "history", "bind", "complete", "compgen", "jobs", "fg", "bg", "wait",
    "disown", "suspend", "logout", "exit", "return", "break", "continue", "getopts", "caller",
    "autoload", "zmodload", "noglob", "nocorrect", "emulate", "sched", "zle", "bindkey",
    "vared", "function", "select", "if", "for", "while", "until", "case", "then", "do",
    # run another program
    "env", "sudo", "doas", "su", "runuser", "pkexec", "sg", "newgrp", "runas", "chroot",
    "unshare", "nsenter", "nohup", "setsid", "timeout", "nice", "renice", "ionice", "chrt",
    "taskset", "numactl", "cgexec", "stdbuf", "watch", "parallel", "xargs", "flock", "lckdo",
    "script", "expect", "unbuffer", "chronic", "ifne", "pee", "vipe", "faketime", "entr",
    "watchexec", "nodemon", "strace", "ltrace", "gdb", "lldb", "valgrind", "perf",
    "catchsegv", "firejail", "bwrap", "systemd-run", "start-stop-daemon", "daemonize", "at",
    "batch", "crontab", "tmux", "screen", "dtach", "caffeinate", "proxychains", "torsocks",
    "trickle", "dbus-launch", "xvfb-run", "open", "xdg-open", "gio", "kde-open", "start",
    "osascript", "launchctl", "npx", "pnpx", "bunx", "uvx", "corepack", "nvm", "nix-shell",
    "nix-build", "make-wrapper", "fakeroot", "proot", "qemu",
    # remote shells and network tools that execute
    "ssh", "scp", "sftp", "rsync", "mosh", "autossh", "telnet", "nc", "ncat", "netcat",
    "socat",
    # interpreters and REPLs (all of them, with or without -c/-e: a script path is code too)
    "py", "deno", "bun", "tsx", "ts-node", "esno", "irb", "r", "rscript", "tclsh", "wish", "java",
    "jshell", "kotlin", "scala", "groovy", "clojure", "clj", "racket", "guile", "sbcl",
    "elixir", "iex", "erl", "escript", "ghci", "runghc", "runhaskell", "dotnet-script", "csi",
    "cscript", "wscript", "gjs", "qjs", "rhino", "jjs", "octave", "matlab", "gnuplot", "m4",
    "dc", "awk", "gawk", "mawk", "nawk", "sed", "gsed", "jrunscript",
    # databases with shell escapes (`.shell`, `\\!`)
    "sqlite3", "sqlite", "duckdb", "psql", "mysql", "mariadb", "mongosh", "mongo",
    # editors and pagers (shell escapes, write anywhere)
    "less", "more", "most", "pg", "man", "vi", "vim", "nvim", "view", "ex", "ed", "emacs",
    "emacsclient", "nano", "pico", "joe", "mg", "kak", "hx", "micro", "code",
    # archivers whose options run programs (tar -I / --to-command / --checkpoint-action,
    # zip -TT)
    "tar", "gtar", "bsdtar", "zip",
})
INTERPRETER_PREFIXES = (
    "python", "pypy", "ipython", "jupyter", "graalpy", "perl", "ruby", "jruby", "node", "php",
    "lua", "julia",
)
"""Interpreter families, whatever the version suffix (`python3.12`, `node18`, `perl5.36`)."""
# The same program under another name.
_ALIASES = {
    "podman": "docker", "nerdctl": "docker", "yarnpkg": "yarn", "gmake": "make",
    "bmake": "make", "gfind": "find", "bfs": "find", "fdfind": "fd", "py.test": "pytest",
    "tofu": "terraform", "mvnw": "mvn", "gradlew": "gradle", "mamba": "conda",
    "micromamba": "conda", "rtx": "mise", "g++": "gcc", "cc": "gcc", "c++": "gcc",
    "clang": "gcc", "clang++": "gcc", "ggrep": "grep", "hub": "git", "manage.py": "django",
    "django-admin": "django",
}


def program_family(word: str) -> str:
    """The program a command word names, for classifying it: its base name, lower-cased, with
    `.exe` and version suffixes stripped and known aliases folded (`/usr/bin/Python3.12` ->
    `python`, `podman` -> `docker`). Never use it to compare grants: a grant compares the
    program word exactly as written."""
    return _family(word)


def _family(word: str) -> str:
    """The program a word names, for classification only: basename, lower-cased (case-
    insensitive file systems run `Bash` as bash), `.exe` and version suffixes stripped."""
    base = _basename(word)
    stripped = _VERSION_RE.sub("", base) or base
    return _ALIASES.get(stripped, stripped)


def _basename(word: str) -> str:
    base = word.rsplit("/", 1)[-1].lower()
    for suffix in _EXE_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
    return base


def _denied(family: str) -> bool:
    if family in _DENY_PROGRAMS or family.startswith(INTERPRETER_PREFIXES):
        return True
    stripped = _VERSION_RE.sub("", family)
    return stripped in _DENY_PROGRAMS or stripped.startswith(INTERPRETER_PREFIXES)


# -- options that make a program run something else, or write or delete elsewhere -----------------

# Long option names dangerous for any program. `--name`, `--name=value`, `--name-more` and (for
# `--` options) any abbreviation of a name are refused: git, npm (nopt), pip (optparse) and
# argparse-based tools all accept unique prefixes of long options.
_GENERIC_LONG = frozenset({
    "exec", "execdir", "eval", "shell", "shell-escape", "sh-exec", "lua-exec", "command",
    "pager", "editor", "visual", "rsh", "rsh-command", "rmt-command", "rsync-path",
    "use-compress-program", "compress-program", "to-command", "checkpoint-action",
    "info-script", "new-volume-script", "post-renderer", "upload-pack", "receive-pack",
    "script-shell", "node-options", "toolexec", "vettool", "ext-diff",
    "open-files-in-pager", "init-module", "hostname-bin", "use-askpass", "askpass",
    "sendmail-cmd", "extcmd", "config", "config-file", "config-env", "rcfile", "init-file",
    "init-hook", "load-plugins", "require", "loader", "preload", "import", "plugin", "plugins",
    "rulesdir", "resolve-plugins-relative-to", "exec-path", "git-dir", "work-tree",
    "separate-git-dir", "template", "kubeconfig", "wrapper", "interpreter", "ssh-command",
    "proxy-command", "browser", "viewer", "launcher", "hook", "hooks", "hookdir", "option",
})

# Per program: long option names (also matched as single-dash words: `find -exec`, `go
# -toolexec`), short option letters (found anywhere in a `-abc` cluster) and word starts.
_LONG: dict[str, frozenset[str]] = {
    "git": frozenset({
        "upload-pack", "receive-pack", "exec", "ext-diff", "output", "open-files-in-pager",
        "config", "config-env", "template", "separate-git-dir", "git-dir", "work-tree",
        "exec-path", "strategy", "extcmd", "tool", "paginate", "upload-archive",
    }),
    "npm": frozenset({
        "script-shell", "shell", "node-options", "node-gyp", "git", "editor", "browser",
        "viewer", "prefix", "dir", "cwd", "userconfig", "globalconfig", "init-module", "call",
        "global", "location", "cache", "registry", "use-yarnrc", "yarn-path", "global-folder",
        "cache-folder", "modules-folder", "global-dir", "store-dir",
    }),
    "cargo": frozenset({
        "config", "manifest-path", "target-dir", "out-dir", "artifact-dir", "root", "index",
        "registry",
    }),
    "go": frozenset({
        "exec", "toolexec", "vettool", "c", "modfile", "overlay", "o", "ldflags", "gccgoflags",
        "asmflags", "gcflags", "pkgdir", "compiler", "pgo",
    }),
    "pip": frozenset({
        "index-url", "extra-index-url", "index", "find-links", "trusted-host", "target",
        "prefix", "root", "src", "global-option", "install-option", "build-option",
        "config-settings", "python", "proxy", "cert", "client-cert",
    }),
    "uv": frozenset({
        "directory", "project", "index-url", "extra-index-url", "index", "default-index",
        "find-links", "python", "target", "prefix", "config-setting", "config-settings",
    }),
    "poetry": frozenset({"directory", "project"}),
    "docker": frozenset({"host", "context", "config"}),
    "kubectl": frozenset({
        "kubeconfig", "as", "as-group", "as-uid", "context", "cluster", "user", "server",
        "token",
    }),
    "helm": frozenset({
        "kubeconfig", "kube-as-user", "kube-as-group", "kube-context", "kube-apiserver",
        "kube-token", "repository-config", "registry-config",
    }),
    "gh": frozenset({"repo", "hostname"}),
    "aws": frozenset({"endpoint-url", "profile", "cli-input-json", "cli-input-yaml"}),
    "terraform": frozenset({"chdir", "plugin-dir"}),
    "dnf": frozenset({"setopt", "installroot"}),
    "yum": frozenset({"setopt", "installroot"}),
    "sort": frozenset({"output"}),
    "curl": frozenset({
        "output", "output-dir", "remote-name", "remote-name-all", "create-dirs",
        "dump-header", "cookie-jar", "trace", "trace-ascii", "stderr", "upload-file",
        "etag-save", "alt-svc", "hsts", "libcurl",
    }),
    "wget": frozenset({
        "execute", "output-document", "output-file", "append-output", "directory-prefix",
        "post-file", "body-file",
    }),
    "tree": frozenset({"output"}),
    "rg": frozenset({"pre"}),
    "find": frozenset({
        "exec", "execdir", "ok", "okdir", "delete", "fprint", "fprint0", "fprintf", "fls",
    }),
    "pytest": frozenset({
        "basetemp", "rootdir", "junitxml", "junit-xml", "override-ini", "pastebin", "debug",
        "confcutdir", "result-log", "resultlog",
    }),
    "pandoc": frozenset({"filter", "lua-filter"}),
    "dotnet": frozenset({"property", "logger", "distributedlogger", "project"}),
    "javac": frozenset({"processor", "processor-path", "processorpath"}),
}
for _name in ("pnpm", "yarn"):
    _LONG[_name] = _LONG["npm"]

_SHORT: dict[str, str] = {
    "npm": "cCg", "pnpm": "cCg", "yarn": "cCg", "cargo": "ZC", "pip": "itfC", "uv": "pifC",
    "poetry": "CP", "kubectl": "s", "gh": "R", "apt": "oc", "apt-get": "oc", "apt-cache": "oc",
    "dnf": "c", "yum": "c", "sort": "o", "wget": "eoaOP", "curl": "KoODcT", "tree": "o",
    "printf": "v", "fd": "xX",
    "pytest": "pco", "rustc": "CZ", "javac": "J", "gcc": "B", "dotnet": "p", "cmake": "PECD",
    "pandoc": "FL", "eslint": "c", "jest": "c", "vitest": "c", "mocha": "cr", "webpack": "c",
    "rollup": "cp", "vite": "c",
}
_WORD_STARTS: dict[str, tuple[str, ...]] = {
    "gcc": ("-wrapper", "-fplugin", "-specs", "--specs", "-fuse-ld", "--ld-path", "-Wl,",
            "-Xlinker", "-Xclang", "-Xassembler", "-Xpreprocessor", "-B"),
    "rustc": ("-C", "--codegen", "-Z"),
    "javac": ("-J", "-Xplugin", "--processor", "-processor"),
    "cmake": ("-P", "-E", "-C", "-D", "--toolchain"),
    "dotnet": ("/", "-p:", "-property:", "-logger:", "-distributedlogger:"),
}
# Per (program, subcommand): more short letters and long names.
_SUB_SHORT: dict[tuple[str, str], str] = {
    ("git", "grep"): "O", ("git", "clone"): "uc", ("git", "ls-remote"): "u",
    ("git", "fetch"): "u", ("git", "pull"): "us", ("git", "rebase"): "x",
    ("git", "merge"): "s", ("docker", "compose"): "f",
}
_SUB_LONG: dict[tuple[str, str], frozenset[str]] = {
    ("go", "env"): frozenset({"w", "u"}),
    ("docker", "compose"): frozenset({"file", "project-directory", "env-file"}),
}
# Programs whose `@word` arguments are names (`npm install @types/node`), not response files.
_AT_WORDS_OK = frozenset({"npm", "pnpm", "yarn", "gh"})


def _option_names(arg: str) -> tuple[list[str], bool] | None:
    """The names an option word may stand for (`--a-b=c` -> ["a-b"]; `-p:x=y` -> ["p:x", "p"]),
    and whether it had two dashes; None for a word that is not an option (`-`, `--`, `x`)."""
    if arg.startswith("--"):
        body, double = arg[2:], True
    elif arg.startswith("-"):
        body, double = arg[1:], False
    else:
        return None
    if not body and not double:
        return None  # `-`: stdin
    if not body:
        return None  # `--`: end of options
    name = body.split("=", 1)[0].lower().replace("_", "-")
    names = [name]
    if ":" in name:
        names.append(name.split(":", 1)[0])
    return names, double


def _long_hit(name: str, dangerous: frozenset[str], *, abbreviation: bool) -> bool:
    for danger in dangerous:
        if name == danger or name.startswith((danger + "-", danger + ".")):
            return True
        if abbreviation and danger.startswith(name):
            return True
    return False


def _dangerous_arg(family: str, sub: str | None, arg: str) -> bool:
    """Whether one argument word (as the program receives it) makes the call ungrantable."""
    if arg.startswith("="):
        return True  # zsh `=cmd` expands to a path the human did not see
    if arg.startswith("@") and family not in _AT_WORDS_OK:
        return True  # a response file: arguments read from a file the human did not see
    if family == "git" and "::" in arg:
        return True  # a transport helper URL (`ext::sh -c …`) runs a program
    starts = _WORD_STARTS.get(family)
    if starts and arg.startswith(starts):
        return True
    parsed = _option_names(arg)
    if parsed is None:
        return False
    names, double = parsed
    long_sets = [_GENERIC_LONG, _LONG.get(family, frozenset())]
    if sub is not None:
        long_sets.append(_SUB_LONG.get((family, sub), frozenset()))
    for name in names:
        for dangerous in long_sets:
            if _long_hit(name, dangerous, abbreviation=double):
                return True
        if family in ("npm", "pnpm", "yarn") and "registry" in name:
            return True  # `--registry`, `--@scope:registry`
    if not double:
        letters = _SHORT.get(family, "")
        if sub is not None:
            letters += _SUB_SHORT.get((family, sub), "")
        cluster = arg[1:]
        if any(letter in cluster for letter in letters):
            return True
    return False


# -- subcommands ---------------------------------------------------------------------------------

# Programs that multiplex unrelated actions: the prefix includes the subcommand.
_MULTIPLEXERS = frozenset({
    "git", "npm", "pnpm", "yarn", "cargo", "go", "pip", "uv", "poetry", "pipenv", "pdm",
    "hatch", "rye", "pipx", "conda", "docker", "kubectl", "helm", "gh", "terraform", "aws",
    "gcloud", "az", "apt", "apt-get", "apt-cache", "dnf", "yum", "brew", "dotnet", "rustup",
    "gem", "bundle", "composer", "pyenv", "rbenv", "asdf", "mise", "direnv", "nix", "devbox",
    "stack", "cabal", "opam", "dune", "mix", "zig", "swift", "volta", "pre-commit",
    "systemctl", "flutter", "dart", "heroku", "vercel", "firebase", "fly", "flyctl", "rails",
    "django", "flask", "ruff", "bazel", "hg", "svn", "jj",
})
# Git subcommands that may be granted (a known builtin: not an alias, which may run a shell,
# and not `git-<name>` found on PATH). Not here: config (sets core.fsmonitor, core.pager, …),
# submodule (foreach), bisect (run), filter-branch, difftool, mergetool, send-email, instaweb,
# daemon, credential, maintenance, help (-w).
_GIT_SUBCOMMANDS = frozenset({
    "add", "am", "annotate", "apply", "archive", "blame", "branch", "bundle", "cat-file",
    "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout", "cherry",
    "cherry-pick", "clean", "clone", "commit", "count-objects", "describe", "diff",
    "diff-files", "diff-index", "diff-tree", "fetch", "for-each-ref", "format-patch", "fsck",
    "gc", "grep", "hash-object", "init", "log", "ls-files", "ls-remote", "ls-tree", "merge",
    "merge-base", "mv", "name-rev", "notes", "prune", "pull", "push", "range-diff", "rebase",
    "reflog", "remote", "reset", "restore", "rev-list", "rev-parse", "revert", "rm",
    "shortlog", "show", "show-branch", "show-ref", "sparse-checkout", "stash", "status",
    "switch", "symbolic-ref", "tag", "verify-commit", "verify-tag", "version", "whatchanged",
    "worktree",
})
# Subcommands that run an arbitrary command or package, open an editor, or rewrite the
# configuration later (granted) calls rely on.
_DENY_SUB: dict[str, frozenset[str]] = {
    "npm": frozenset({"exec", "x", "explore", "edit", "init", "create", "innit", "config", "c",
                      "set"}),
    "pnpm": frozenset({"exec", "dlx", "create", "init", "config", "c", "env", "setup", "x"}),
    "yarn": frozenset({"exec", "dlx", "create", "init", "config", "node", "set", "plugin",
                       "global", "policies"}),
    "cargo": frozenset({"watch", "script"}),
    "go": frozenset({"run"}),
    "pip": frozenset({"config"}),
    "uv": frozenset({"run"}),
    "poetry": frozenset({"run", "shell", "config", "self"}),
    "pipenv": frozenset({"run", "shell"}),
    "pdm": frozenset({"run", "config", "self"}),
    "hatch": frozenset({"run", "shell"}),
    "rye": frozenset({"run", "shell"}),
    "pipx": frozenset({"run", "runpip"}),
    "conda": frozenset({"run"}),
    "docker": frozenset({"run", "exec", "create", "context", "plugin"}),
    "kubectl": frozenset({"exec", "run", "debug", "attach", "cp", "proxy", "port-forward",
                          "plugin"}),
    "helm": frozenset({"plugin"}),
    "gh": frozenset({"api", "alias", "extension", "ext", "codespace", "cs"}),
    "aws": frozenset({"configure"}),
    "gcloud": frozenset({"config"}),
    "az": frozenset({"extension", "config", "rest"}),
    "apt": frozenset({"edit-sources"}),
    "brew": frozenset({"sh", "ruby", "irb", "bundle", "edit", "debugger"}),
    "dotnet": frozenset({"exec", "script"}),
    "rustup": frozenset({"run"}),
    "gem": frozenset({"exec"}),
    "bundle": frozenset({"exec", "console", "open"}),
    "composer": frozenset({"exec", "global"}),
    "pyenv": frozenset({"exec", "shell"}),
    "rbenv": frozenset({"exec", "shell"}),
    "asdf": frozenset({"exec", "shell", "env"}),
    "mise": frozenset({"exec", "x", "run", "r", "activate", "shell", "env"}),
    "direnv": frozenset({"exec", "allow"}),
    "nix": frozenset({"run", "shell", "develop", "eval", "repl", "env"}),
    "devbox": frozenset({"run", "shell"}),
    "stack": frozenset({"exec", "runghc", "runhaskell", "ghci", "eval", "repl", "script"}),
    "cabal": frozenset({"exec", "run", "repl"}),
    "opam": frozenset({"exec", "env"}),
    "dune": frozenset({"exec", "utop"}),
    "mix": frozenset({"run"}),
    "zig": frozenset({"run"}),
    "swift": frozenset({"repl"}),
    "volta": frozenset({"run"}),
    "pre-commit": frozenset({"try-repo"}),
    "systemctl": frozenset({"edit"}),
    "rails": frozenset({"runner", "r", "console", "c", "dbconsole", "db"}),
    "django": frozenset({"shell", "dbshell", "shell_plus", "runscript"}),
    "flask": frozenset({"shell"}),
}
_DENY_SUB3 = frozenset({
    ("uv", "tool", "run"), ("hatch", "env", "run"), ("dotnet", "tool", "run"),
    ("docker", "compose", "run"), ("docker", "compose", "exec"), ("docker", "container", "run"),
    ("docker", "container", "exec"), ("docker", "container", "create"),
    ("rustup", "toolchain", "link"), ("gh", "config", "set"),
    *(("kubectl", "config", v) for v in ("set", "set-context", "set-cluster",
                                         "set-credentials", "unset", "use-context", "use",
                                         "rename-context")),
})
# Subcommands whose next word is the action too: the prefix includes it (`git stash pop`,
# `gh pr view`, `npm run build`).
_NESTED: dict[str, frozenset[str]] = {
    "git": frozenset({"remote", "stash", "worktree", "notes", "reflog", "sparse-checkout"}),
    "npm": frozenset({"run", "run-script", "rum", "urn", "cache", "pkg", "dist-tag", "owner",
                      "team", "access", "org", "token", "profile", "hook"}),
    "pnpm": frozenset({"run", "store"}),
    "yarn": frozenset({"run", "cache", "workspace", "workspaces"}),
    "uv": frozenset({"pip", "tool", "python", "cache", "self"}),
    "go": frozenset({"mod", "work", "tool"}),
    "docker": frozenset({"compose", "container", "image", "network", "volume", "system",
                         "buildx", "builder", "trust", "manifest", "swarm", "node", "service",
                         "stack", "secret", "config"}),
    "kubectl": frozenset({"config", "rollout", "auth", "certificate"}),
    "helm": frozenset({"repo", "registry", "dependency", "get", "show"}),
    "dotnet": frozenset({"tool", "nuget", "workload", "new", "sln", "add", "remove", "list",
                         "dev-certs"}),
    "rustup": frozenset({"toolchain", "target", "component", "override", "self"}),
    "brew": frozenset({"services"}),
    "hatch": frozenset({"env", "python"}),
    "composer": frozenset({"run-script", "run"}),
    "conda": frozenset({"env", "config"}),
}
_NESTED_ALL = frozenset({"gh", "aws"})  # every subcommand has actions under it
_DEEP = frozenset({"gcloud", "az"})  # `gcloud compute instances list`: every leading name
# A word after these names a script or a node_modules/.bin program: refuse shells and the like.
_RUNS_NAMED = frozenset({("npm", "run"), ("npm", "run-script"), ("npm", "rum"), ("npm", "urn"),
                         ("pnpm", "run"), ("yarn", "run"), ("composer", "run-script"),
                         ("composer", "run")})
_SUB_IS_PROGRAM = frozenset({"pnpm", "yarn"})  # `yarn eslint`, `pnpm tsc` run bins

# Programs whose words are targets (`make test`): at most one target, right after the program,
# and only a few harmless options (`make CC=x`, `-f`, `-C`, `--eval` are refused).
_TARGET_STYLE = frozenset({"make", "just", "rake", "ninja", "mvn", "gradle", "task", "mage",
                           "tox", "nox", "invoke", "inv", "sbt"})
_TARGET_OPTIONS = re.compile(r"-[ksqB]|-j\d*|--jobs=\d+|--keep-going|--silent|--quiet")


def _is_sub(word: _Word) -> bool:
    return word.plain and _SUB_RE.fullmatch(word.value) is not None


def _target_prefix(words: list[_Word]) -> str:
    program, rest = words[0].value, words[1:]
    if not rest:
        return program
    target, options = rest[0], rest[1:]
    if not _is_sub(target) or _denied(_family(target.value)):
        return ""
    if not all(_TARGET_OPTIONS.fullmatch(w.value) for w in options):
        return ""
    return f"{program} {target.value}"


def _multiplexer_prefix(family: str, words: list[_Word]) -> str:
    # The subcommand must come first: options before it (`git -C dir status`, `git --no-pager
    # log`, `cargo +nightly build`) are refused, since they are where these programs take the
    # settings that change which repository, configuration or program is used.
    if len(words) < 2 or not _is_sub(words[1]):
        return ""
    sub = words[1].value
    key = sub.lower()
    if family == "git" and sub not in _GIT_SUBCOMMANDS:
        return ""
    if key in _DENY_SUB.get(family, frozenset()):
        return ""
    if family in _SUB_IS_PROGRAM and _denied(_family(sub)):
        return ""
    if any(_dangerous_arg(family, key, w.value) for w in words[2:]):
        return ""
    parts = [words[0].value, sub]
    if family in _DEEP:
        for word in words[2:]:
            if not _is_sub(word):
                break
            parts.append(word.value)
        if any(p.lower() in _DENY_SUB.get(family, frozenset()) for p in parts[2:]):
            return ""
        return " ".join(parts)
    nested = family in _NESTED_ALL or key in _NESTED.get(family, frozenset())
    if nested and len(words) > 2:
        action = words[2]
        if not _is_sub(action):
            return ""  # `git stash -u`, `gh pr --repo x view`: refuse rather than guess
        if (family, key, action.value.lower()) in _DENY_SUB3:
            return ""
        if (family, key) in _RUNS_NAMED and _denied(_family(action.value)):
            return ""
        parts.append(action.value)
    return " ".join(parts)


def _words_prefix(words: list[_Word]) -> str:
    if not words:
        return ""
    program = words[0]
    if not program.plain or _PROGRAM_RE.fullmatch(program.value) is None:
        return ""
    family = _family(program.value)
    if _denied(family) or _denied(_basename(program.value)):
        return ""
    if family in _TARGET_STYLE:
        if any(_dangerous_arg(family, None, w.value) for w in words[1:]):
            return ""
        return _target_prefix(words)
    if family in _MULTIPLEXERS:
        return _multiplexer_prefix(family, words)
    if any(_dangerous_arg(family, None, w.value) for w in words[1:]):
        return ""
    return program.value


# Keys a shell-style tool input may carry besides `command`/`argv`: descriptive only. Any other
# key (`env`, `cwd`, `shell`, `stdin`, …) could change what the command does, so it makes the
# call ungrantable.
_METADATA_KEYS = frozenset({"description", "title", "reason", "rationale", "explanation",
                            "summary", "timeout", "timeout_ms", "timeout_s", "timeout_seconds"})


def grant_prefix(tool: str, tool_input: Mapping[str, Any]) -> str:
    """The program prefix of a call: what `[a] always` grants, or `""` when nothing may be.

    Shell-style input only: `{"command": str}` (a shell line) or `{"argv": [str, …]}` (not
    shell-parsed), plus descriptive keys (`description`, `timeout`, …). Any other input — a
    non-shell tool such as `read_file`, both `command` and `argv`, an unknown key like `env` or
    `cwd` — has no program to grant, so the answer is `""`; so is any call of an
    `UNGRANTABLE_TOOLS` tool.

    The prefix is the program word as written (`./git` and `git` are different programs, and
    so are `Git` and `git`), plus the subcommand for programs that multiplex unrelated actions
    (`git status`, `npm test`, `cargo build`, `docker compose up`, `npm run build`, `make test`).
    It is `""` unless the call is one plain simple command (see the module docstring): no shell
    metacharacter anywhere, even quoted; no quoted program or subcommand; no `VAR=value`
    prefix; no program that runs code from its arguments; no option known to make the program
    run another program or write or delete elsewhere; no global options before a subcommand.
    Never raises.
    """
    try:
        return _grant_prefix(tool, tool_input)
    except Exception:  # defensive: any surprise means "not grantable", never a crash
        return ""


def _grant_prefix(tool: object, tool_input: object) -> str:
    if not isinstance(tool, str) or tool in UNGRANTABLE_TOOLS:
        return ""
    if not isinstance(tool_input, Mapping):
        return ""
    keys = set(tool_input)
    if "command" in keys and "argv" in keys:
        return ""
    if not keys - _METADATA_KEYS <= {"command", "argv"}:
        return ""
    if "command" in keys:
        command = tool_input["command"]
        words = _shell_words(command) if isinstance(command, str) else None
    elif "argv" in keys:
        argv = tool_input["argv"]
        words = _argv_words(argv) if isinstance(argv, list) else None
    else:
        return ""
    if not words:
        return ""
    prefix = _words_prefix(words)
    return prefix if prefix.strip() else ""
