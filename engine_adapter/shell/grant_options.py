"""Grant rules for the words after a program: options and operands no grant may cover.

`dangerous_arg(family, sub, arg)` says why one argument makes a call ungrantable, or `None`:
an option that makes the program run another program, read its settings or arguments from
elsewhere, or write or delete where the human did not look (per program, per subcommand, and
for every program); an operand or option value naming a path outside the workspace (an
absolute path, `~`, a `..` that climbs out: `grant_prefix` does not know the workspace, so any of
these counts); an upload of a file; and an option that forces or deletes.
"""

from __future__ import annotations

import re

__all__ = ["dangerous_arg", "names_outside_path"]

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
        "unsafe-paths", "output-directory", "prefix",
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
        "etag-save", "alt-svc", "hsts", "libcurl", "form", "form-string", "json", "engine",
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
    "pandoc": frozenset({"filter", "lua-filter", "defaults", "data-dir"}),
    "dotnet": frozenset({"property", "logger", "distributedlogger", "project"}),
    "javac": frozenset({"processor", "processor-path", "processorpath"}),
}
for _name in ("pnpm", "yarn"):
    _LONG[_name] = _LONG["npm"]

_SHORT: dict[str, str] = {
    "npm": "cCg", "pnpm": "cCg", "yarn": "cCg", "cargo": "ZC", "pip": "itfC", "uv": "pifC",
    "poetry": "CP", "kubectl": "s", "gh": "R", "apt": "oc", "apt-get": "oc", "apt-cache": "oc",
    "dnf": "c", "yum": "c", "sort": "o", "wget": "eoaOP", "curl": "KoODcTF", "tree": "o",
    "printf": "v", "fd": "xX",
    "pytest": "pco", "rustc": "CZ", "javac": "J", "gcc": "B", "dotnet": "p", "cmake": "PECD",
    "pandoc": "FLd", "eslint": "c", "jest": "c", "vitest": "c", "mocha": "cr", "webpack": "c",
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



# Per program (or program and subcommand): option letters and long names that force, or delete
# or discard data. A long `--force…` (or any abbreviation of `--force`) forces for every program.
_DESTROY_SHORT: dict[str | tuple[str, str], str] = {
    "rm": "rRfd", "cp": "f", "mv": "f", "ln": "f", "install": "f", "shred": "fuz",
    "chmod": "R", "chown": "R", "chgrp": "R", "npm": "f", "pnpm": "f", "gem": "f", "brew": "f",
    "gzip": "f", "gunzip": "f", "bzip2": "f", "xz": "f", "zstd": "f", "unzip": "o",
    "fallocate": "pczi",
    ("git", "push"): "fd", ("git", "checkout"): "fB", ("git", "switch"): "fC",
    ("git", "clean"): "fxXd", ("git", "add"): "f", ("git", "branch"): "fDMCd",
    ("git", "tag"): "fd", ("git", "rm"): "rf", ("git", "mv"): "f", ("git", "fetch"): "f",
    ("git", "pull"): "f", ("git", "worktree"): "f", ("git", "rebase"): "f",
    ("git", "notes"): "f", ("git", "submodule"): "f", ("git", "stash"): "",
    ("cargo", "install"): "f", ("gem", "install"): "f",
    **{("docker", sub): "f" for sub in ("rm", "rmi", "container", "image", "volume", "network",
                                        "system", "builder", "buildx", "prune")},
}
_DESTROY_LONG = ("delete", "del", "hard", "discard-changes", "remove-source-files",
                 "remove-files", "overwrite", "destroy", "auto-approve")
_DESTROY_LONG_FOR: dict[str | tuple[str, str], tuple[str, ...]] = {
    "rm": ("recursive", "no-preserve-root", "dir"), "chmod": ("recursive",),
    "chown": ("recursive",), "chgrp": ("recursive",), ("git", "push"): ("mirror", "prune"),
    ("git", "clean"): ("force",),
    "fallocate": ("punch-hole", "collapse-range", "zero-range", "insert-range"),
}
_UPLOADERS = frozenset({"curl", "http", "https", "xh", "httpie", "wget"})
_UPLOAD_OPTIONS = frozenset({"form", "form-string", "upload-file", "post-file", "body-file",
                             "json"})
_UPLOAD_SHORT = {"curl": "FT"}


def _option_names(arg: str) -> tuple[list[str], bool] | None:
    """The names an option word may stand for (`--a-b=c` -> ["a-b"]; `-p:x=y` -> ["p:x", "p"]),
    and whether it had two dashes; None for a word that is not an option (`-`, `--`, `x`)."""
    if arg.startswith("--"):
        body, double = arg[2:], True
    elif arg.startswith("-"):
        body, double = arg[1:], False
    else:
        return None
    if not body:
        return None  # `-` (stdin) or `--` (end of options)
    name = body.split("=", 1)[0].lower().replace("_", "-")
    names = [name]
    if ":" in name:
        names.append(name.split(":", 1)[0])
    return names, double


def _long_hit(name: str, dangerous: frozenset[str] | tuple[str, ...], *,
              abbreviation: bool) -> bool:
    for danger in dangerous:
        if name == danger or name.startswith((danger + "-", danger + ".")):
            return True
        if abbreviation and danger.startswith(name):
            return True
    return False


# -- paths ---------------------------------------------------------------------------------------

_PIECES = re.compile(r"[=,]|:(?!//)")  # `--out=/x`, `-Wl,-rpath,/x`, `host:/x`, not `https://`
_SHORT_OPTION = re.compile(r"-[A-Za-z]+")


def _climbs_out(piece: str) -> bool:
    if piece.startswith(("/", "~")):
        return True
    depth = 0
    for part in piece.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


def names_outside_path(arg: str) -> bool:
    """Whether an argument (an operand, an option value, a value glued to a short option) may
    name a path outside the workspace: absolute, `~`, a `..` that climbs above where it starts,
    or a `file:` URL. Without the workspace at hand, every one of these counts as outside."""
    if "file:" in arg.lower():
        return True
    pieces = [arg, *_PIECES.split(arg)]
    if arg.startswith("-") and not arg.startswith("--"):
        pieces.append(_SHORT_OPTION.sub("", arg, count=1))
    return any(_climbs_out(piece) for piece in pieces)


# -- the rule ------------------------------------------------------------------------------------

def _destroys(family: str, sub: str | None, arg: str, names: list[str],
              double: bool) -> str | None:
    """"forces" or "deletes or discards data" when the option word does, else None."""
    name = names[0]
    if double:
        if "force".startswith(name) or name.startswith("force"):
            return "forces"
        longs = _DESTROY_LONG + _DESTROY_LONG_FOR.get(family, ()) + (
            _DESTROY_LONG_FOR.get((family, sub), ()) if sub is not None else ())
        if len(name) >= 3 and any(_long_hit(name, (danger,), abbreviation=True)
                                  for danger in longs):
            return "deletes or discards data"
        return None
    if len(name) > 1 and name.startswith(("force", "delete", "hard", "destroy", "auto-approve")):
        return "forces"  # Go-style single-dash long options: `-force`, `-destroy`
    letters = _DESTROY_SHORT.get(family, "")
    if sub is not None:
        letters += _DESTROY_SHORT.get((family, sub), "")
    if any(letter in arg[1:].split("=", 1)[0] for letter in letters):
        return "forces or deletes"
    return None


def _uploads(family: str, arg: str, names: list[str] | None, double: bool) -> bool:
    if family not in _UPLOADERS:
        return False
    if "@" in arg and "://" not in arg:
        return True  # `-d @file`, `--data-binary=@file`, httpie `field@file`
    if names is None:
        return False
    if double:
        return any(_long_hit(name, _UPLOAD_OPTIONS, abbreviation=True) for name in names)
    return any(letter in arg[1:] for letter in _UPLOAD_SHORT.get(family, ""))


def dangerous_arg(family: str, sub: str | None, arg: str) -> str | None:
    """Why one argument word (as the program receives it) makes the call ungrantable, or None.

    `family` is the program's `program_family`, `sub` its subcommand (lower-cased) if it has one.
    """
    shown = arg if len(arg) <= 60 else arg[:57] + "…"
    program = family if sub is None else f"{family} {sub}"
    if arg.startswith("="):
        return f"`{shown}` is a zsh =command expansion"
    parsed = _option_names(arg)
    names, double = parsed if parsed is not None else (None, False)
    if _uploads(family, arg, names, double):
        return f"uploads a file ({shown})"
    if arg.startswith("@") and family not in _AT_WORDS_OK:
        return f"reads more arguments from a file ({shown})"
    if family == "git" and "::" in arg:
        return f"uses a git transport that runs a program ({shown})"
    if names_outside_path(arg):
        return f"names a path outside the workspace ({shown})"
    starts = _WORD_STARTS.get(family)
    if starts and arg.startswith(starts):
        return f"option {shown} can make {program} run another program"
    if names is None:
        return None
    destroys = _destroys(family, sub, arg, names, double)
    if destroys is not None:
        return f"{destroys} ({shown})"
    long_sets = [_GENERIC_LONG, _LONG.get(family, frozenset())]
    if sub is not None:
        long_sets.append(_SUB_LONG.get((family, sub), frozenset()))
    for name in names:
        if any(_long_hit(name, dangerous, abbreviation=double) for dangerous in long_sets):
            return f"option {shown} can make {program} run another program or write elsewhere"
        if family in ("npm", "pnpm", "yarn") and "registry" in name:
            return f"option {shown} changes where {family} gets packages from"
    if not double:
        letters = _SHORT.get(family, "")
        if sub is not None:
            letters += _SUB_SHORT.get((family, sub), "")
        if any(letter in arg[1:] for letter in letters):
            return f"option {shown} can make {program} run another program or write elsewhere"
    return None
