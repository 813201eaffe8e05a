"""The program tables shared by grants and the classifier: what each known program is and runs.

One table says which programs run code or other programs given in their words (shells,
interpreters, `env`/`sudo`/`xargs`-style wrappers, schedulers, editors with shell escapes, …).
`grant_prefix` refuses all of them; `classify_command` reads through the ones whose command it can
see (wrappers, `-c` lines) and calls the rest destructive. Both read these tables, so a program the
grants refuse as a runner is a program the classifier treats as one.
"""

from __future__ import annotations

import re

__all__ = [
    "ENV_PATH_LISTS",
    "ENV_RUNS_PROGRAMS",
    "INLINE_CODE",
    "INTERPRETER_PREFIXES",
    "LINE_OPTIONS",
    "NON_POSIX_SHELLS",
    "OTHER_MACHINE",
    "OTHER_USER",
    "REMOVERS",
    "RUNS_ARGV",
    "RUNS_LINE",
    "SCHEDULERS",
    "SHELL_PROGRAMS",
    "THROUGH_SHELL",
    "WIPERS",
    "basename",
    "denied_reason",
    "env_runs_program",
    "inline_code_options",
    "is_interpreter",
    "program_family",
]

SHELL_PROGRAMS = frozenset({
    "sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "pdksh", "oksh", "loksh", "csh",
    "tcsh", "fish", "ash", "yash", "posh", "rc", "es", "elvish", "nu", "nushell", "xonsh",
    "ion", "osh", "ysh", "oil", "pwsh", "powershell", "cmd", "wsl",
    "scsh",
})
"""Shells, by `program_family`: each runs whatever command text it is given."""

NON_POSIX_SHELLS = frozenset({
    "csh", "tcsh", "fish", "rc", "es", "elvish", "nu", "nushell", "xonsh", "ion", "pwsh",
    "powershell", "cmd", "wsl", "scsh",
})
"""Shells whose syntax the POSIX lexer cannot read: a line they run is never judged harmless."""

INTERPRETER_PREFIXES = (
    "python", "pypy", "ipython", "jupyter", "graalpy", "perl", "ruby", "jruby", "node", "php",
    "lua", "julia",
)
"""Interpreter families, whatever the version suffix (`python3.12`, `node18`, `perl5.36`)."""

_OTHER_INTERPRETERS = frozenset({
    "py", "deno", "bun", "tsx", "ts-node", "esno", "irb", "r", "rscript", "tclsh", "wish", "java",
    "jshell", "kotlin", "scala", "groovy", "clojure", "clj", "racket", "guile", "sbcl",
    "elixir", "iex", "erl", "escript", "ghci", "runghc", "runhaskell", "dotnet-script", "csi",
    "cscript", "wscript", "gjs", "qjs", "rhino", "jjs", "octave", "matlab", "gnuplot", "m4",
    "dc", "awk", "sed", "jrunscript", "osascript", "ghc", "luajit",
})

INLINE_CODE: dict[str, tuple[str, tuple[str, ...]]] = {
    "python": ("c", ()), "pypy": ("c", ()), "ipython": ("c", ()), "graalpy": ("c", ()),
    "perl": ("eE", ()), "ruby": ("e", ()), "jruby": ("e", ()), "irb": ("e", ()),
    "node": ("ep", ("eval", "print")), "bun": ("ep", ("eval", "print")),
    "tsx": ("ep", ("eval", "print")), "ts-node": ("ep", ("eval", "print")),
    "deno": ("", ("eval",)), "php": ("rRBE", ("run", "process-begin", "process-code",
                                             "process-end")),
    "lua": ("e", ()), "luajit": ("e", ()), "julia": ("eE", ("eval", "print")),
    "r": ("e", ()), "rscript": ("e", ()), "osascript": ("e", ()), "groovy": ("e", ()),
    "scala": ("e", ()), "elixir": ("e", ("eval",)), "iex": ("e", ()), "erl": ("", ("eval",)),
    "racket": ("e", ("eval",)), "guile": ("c", ()), "sbcl": ("", ("eval",)),
    "clojure": ("e", ("eval",)), "clj": ("e", ("eval",)), "ghc": ("e", ()), "ghci": ("e", ()),
    "dc": ("e", ("expression",)), "gdb": ("", ("eval-command", "ex")),
}
"""Per interpreter: the short option letters and long option names whose value is code to run
(`python3 -c`, `perl -ne`, `node --eval`). Long names are also matched as single-dash words
(`erl -eval`, `gdb -ex`) and as `deno eval`'s subcommand."""

def inline_code_options(family: str) -> tuple[str, tuple[str, ...]] | None:
    """`INLINE_CODE` for a program family, version and name variants included (`nodejs`)."""
    spec = INLINE_CODE.get(family)
    if spec is None:
        prefix = next((p for p in INTERPRETER_PREFIXES if family.startswith(p)), None)
        spec = INLINE_CODE.get(prefix) if prefix else None
    return spec


RUNS_ARGV = frozenset({
    "env", "nice", "nohup", "timeout", "time", "command", "builtin", "exec", "stdbuf", "setsid",
    "ionice", "chrt", "taskset", "xargs", "flock", "unbuffer", "strace", "ltrace", "caffeinate",
    "chronic", "ifne", "busybox", "toybox", "numactl", "cgexec", "faketime", "fakeroot",
    "unshare", "setpriv", "nsenter", "firejail", "bwrap", "proot", "prlimit", "catchsegv",
    "valgrind", "perf", "cpulimit", "nocache", "eatmydata", "setarch", "linux32", "linux64",
    "choom", "sandbox-exec", "torsocks", "proxychains", "proxychains4", "trickle",
    "dbus-launch", "dbus-run-session", "xvfb-run", "rlwrap", "tsp", "nq", "entr", "watchexec",
    "ccache", "distcc", "parallel", "sem", "sg", "script", "npx", "pnpx", "bunx", "uvx",
    "gdb", "lldb", "expect", "pee", "vipe", "runcon", "chpst", "softlimit", "setuidgid",
    "envdir", "sudo", "doas", "su", "runuser", "pkexec", "runas", "chroot", "systemd-run",
    "start-stop-daemon", "daemonize", "watch", "ssh", "qemu", "nix-shell", "corepack", "newgrp",
    "lckdo", "renice",
})
"""Programs that run the rest of their words (after their own options) as a command."""

THROUGH_SHELL = frozenset({"parallel", "sem", "watch", "ssh", "watchexec", "su", "sg"})
"""Of those, the ones that hand the words to a shell: they are classified as shell text."""

RUNS_LINE = frozenset({"eval", "trap"})
"""Shell builtins whose operands are shell text, run in the current shell."""

LINE_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "su": ("c", ("command", "session-command")),
    "script": ("c", ("command",)),
    "flock": ("c", ("command",)),
    "sg": ("c", ()),
    "nodemon": ("x", ("exec",)),
    "fish": ("cC", ("command", "init-command")),
    "env": ("S", ("split-string",)),
}
"""Options whose value is a shell line, for programs that are not shells (a shell's `-c` is
found by the classifier itself) and for shells with long forms of it."""

OTHER_USER = frozenset({"sudo", "doas", "su", "pkexec", "runuser", "chroot", "runas",
                        "setuidgid"})
OTHER_MACHINE = frozenset({"ssh", "scp", "sftp", "mosh", "autossh", "rsh", "telnet"})
SCHEDULERS = frozenset({"at", "batch", "crontab", "systemd-run", "start-stop-daemon",
                        "daemonize", "launchctl"})
"""Programs that run a command outside this run: later, as a service, or detached."""

REMOVERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "wipe", "trash", "trash-put",
                      "truncate"})
"""Programs that remove or empty the files they are given (over many files: recursive removal)."""
WIPERS = frozenset({"dd", "shred", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "mkswap",
                    "blkdiscard", "srm", "wipe"})

# Shell builtins and keywords that run a command or change the shell later calls run in.
_SHELL_STATE = frozenset({
    ".", "source", "eval", "exec", "command", "builtin", "coproc", "time", "trap", "alias",
    "unalias", "export", "declare", "typeset", "local", "readonly", "set", "unset", "shopt",
    "enable", "hash", "cd", "pushd", "popd", "ulimit", "umask", "let", "read", "readarray",
    "mapfile", "fc", "history", "bind", "complete", "compgen", "jobs", "fg", "bg", "wait",
    "disown", "suspend", "logout", "exit", "return", "break", "continue", "getopts", "caller",
    "autoload", "zmodload", "noglob", "nocorrect", "emulate", "sched", "zle", "bindkey",
    "vared", "function", "select", "if", "for", "while", "until", "case", "then", "do",
})
_NETWORK_EXEC = frozenset({"scp", "sftp", "rsync", "mosh", "autossh", "telnet", "nc", "ncat",
                           "netcat", "socat", "rsh"})
_DB_SHELLS = frozenset({"sqlite3", "sqlite", "duckdb", "psql", "mysql", "mariadb", "mongosh",
                        "mongo"})
_EDITORS = frozenset({"less", "more", "most", "pg", "man", "vi", "vim", "nvim", "view", "ex",
                      "ed", "emacs", "emacsclient", "nano", "pico", "joe", "mg", "kak", "hx",
                      "micro", "code"})
_ARCHIVERS = frozenset({"tar", "gtar", "bsdtar", "zip"})  # -I, --to-command, -TT run programs
_OPENERS = frozenset({"open", "xdg-open", "gio", "kde-open", "start", "tmux", "screen",
                      "dtach", "nvm", "nix-build", "make-wrapper", "at", "batch", "crontab",
                      "launchctl", "nodemon"})


def denied_reason(family: str) -> str | None:
    """Why a grant never covers this program (a `program_family`), or `None` if it may."""
    for name in (family, _VERSION_RE.sub("", family)):
        if name in SHELL_PROGRAMS:
            return "a shell"
        if is_interpreter(name):
            return "an interpreter"
        if name in OTHER_USER:
            return "which runs commands as another user"
        if name in RUNS_ARGV or name in RUNS_LINE:
            return "which runs other programs"
        if name in _SHELL_STATE:
            return "a shell builtin that runs commands or changes later ones"
        if name in _NETWORK_EXEC:
            return "which runs or copies things on another machine"
        if name in _DB_SHELLS:
            return "a database shell with shell escapes"
        if name in _EDITORS:
            return "an editor or pager with shell escapes"
        if name in _ARCHIVERS:
            return "an archiver whose options run programs"
        if name in _OPENERS or name in SCHEDULERS:
            return "which starts programs outside this command"
    return None


def is_interpreter(family: str) -> bool:
    """Whether a program family is an interpreter (it runs code from a script or its words)."""
    return family in _OTHER_INTERPRETERS or family.startswith(INTERPRETER_PREFIXES)


# -- program names ---------------------------------------------------------------------------------

_VERSION_RE = re.compile(r"[-_]?\d+(?:\.\d+)*$")
_EXE_SUFFIXES = (".exe", ".cmd", ".bat", ".com")
# The same program under another name.
_ALIASES = {
    "podman": "docker", "nerdctl": "docker", "yarnpkg": "yarn", "gmake": "make",
    "bmake": "make", "gfind": "find", "bfs": "find", "fdfind": "fd", "py.test": "pytest",
    "tofu": "terraform", "mvnw": "mvn", "gradlew": "gradle", "mamba": "conda",
    "micromamba": "conda", "rtx": "mise", "g++": "gcc", "cc": "gcc", "c++": "gcc",
    "clang": "gcc", "clang++": "gcc", "ggrep": "grep", "hub": "git", "manage.py": "django",
    "django-admin": "django", "gsed": "sed", "gawk": "awk", "mawk": "awk", "nawk": "awk",
    "gtruncate": "truncate", "grm": "rm", "guniq": "uniq", "gsort": "sort", "gxargs": "xargs",
    "gtimeout": "timeout", "genv": "env",
}


def program_family(word: str) -> str:
    """The program a command word names, for classifying it: its base name, lower-cased (case-
    insensitive file systems run `Bash` as bash), with `.exe` and version suffixes stripped and
    known aliases folded (`/usr/bin/Python3.12` -> `python`, `podman` -> `docker`). Never use it
    to compare grants: a grant compares the program word exactly as written."""
    base = basename(word)
    stripped = _VERSION_RE.sub("", base) or base
    return _ALIASES.get(stripped, stripped)


def basename(word: str) -> str:
    """A program word's file name, lower-cased, without an `.exe`-style suffix."""
    base = word.rsplit("/", 1)[-1].lower()
    for suffix in _EXE_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
    return base


# -- environment variables -----------------------------------------------------------------------

ENV_PATH_LISTS = frozenset({"PATH", "PYTHONPATH", "NODE_PATH", "PERL5LIB", "PERLLIB", "RUBYLIB",
                            "CLASSPATH", "GOPATH", "CDPATH"})
"""Variables that list where programs or code are looked up: risky when a directory in the
list lies outside the workspace (or is known only when the command runs)."""

ENV_RUNS_PROGRAMS = frozenset({
    "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
    "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR",
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS", "IFS", "PATH",
    "HOME", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "NODE_OPTIONS", "PERL5OPT",
    "PERL5DB", "RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CC",
    "CXX", "LD", "AR", "AS", "CPP", "MAKEFLAGS", "MFLAGS", "MAKE", "SHELL", "RUSTC_WRAPPER",
    "RUSTC", "RUSTDOC", "LESSOPEN", "LESSCLOSE", "BROWSER", "TERMINAL", "ZDOTDIR",
    "XDG_CONFIG_HOME", "TMUX", "CONFIG_SITE",
})
_ENV_PREFIXES = ("GIT_CONFIG_", "GIT_TRACE", "LD_", "DYLD_", "NPM_CONFIG_", "PIP_", "CARGO_",
                 "UV_", "POETRY_", "BASH_FUNC_")


def env_runs_program(name: str) -> bool:
    """Whether setting this environment variable can make a command run another program, load
    other code, or read other settings (`GIT_EXTERNAL_DIFF`, `LD_PRELOAD`, `PATH`, …); for
    the `ENV_PATH_LISTS` that is so when one of its directories is outside the workspace."""
    upper = name.upper()
    return (upper in ENV_RUNS_PROGRAMS or upper in ENV_PATH_LISTS
            or upper.startswith(_ENV_PREFIXES))
