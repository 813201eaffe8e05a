"""The classifier's rules for git: what makes a git call destructive (tier 4).

Forced pushes, hard resets, discarded changes (`checkout -f`, `restore`, `read-tree -u`,
`checkout-index -f`), deleted refs and objects (`update-ref`, `symbolic-ref -d`, `prune`,
`gc --prune=now`, `reflog expire`), recursive or forced `git rm`, `git clean`;
options that run another program (`-c`, `--upload-pack`, `grep -O`, `rebase --exec`);
settings that make later git calls run programs (`git config core.fsmonitor …`, aliases,
`--global` writes); and writes outside the workspace (`--output=`, `-o`, `--output-directory`,
`--separate-git-dir`, `-C`, a clone or worktree elsewhere). git accepts any unique abbreviation
of a subcommand's long option, so `--out=` is `--output=` and `--forc` is `--force`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine_adapter.shell.context import Context, has_long, has_short, option_values, outside
from engine_adapter.shell.lexer import Word

__all__ = ["git_destructive"]

_GLOBAL_WITH_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace",
                                "--super-prefix", "-c", "--config-env", "--attr-source"})
_UNKNOWN = Word("", "", True)

# Settings whose value is a program, a shell line, hooks or other configuration: setting one
# makes later (perhaps granted) git calls run something the human never approved.
_RUNS_SETTINGS = re.compile(
    r"(core\.(fsmonitor|pager|editor|sshcommand|hookspath|askpass|gitproxy|worktree"
    r"|attributesfile|excludesfile|alternaterefscommand)"
    r"|diff\.external|diff\..+\.(textconv|command)|merge\..+\.driver"
    r"|filter\..+\.(clean|smudge|process)|credential(\..+)?\.helper|gpg(\..+)?\.program"
    r"|sequence\.editor|pager\..+|interactive\.difffilter|sendemail\..+|uploadpack\..+"
    r"|receive\..+|remote\..+\.(receivepack|uploadpack|proxy|vcs|url|pushurl)|protocol\..+"
    r"|include\..+|includeif\..+|alias\..+|web\.browser|browser\..+|difftool\..+"
    r"|mergetool\..+|man\..+|instaweb\..+|ssh\.variant|submodule\..+|url\..+"
    r"|init\.templatedir|safe\.directory|http\..*(proxy|sslcainfo|sslcert|sslkey)"
    r"|core\.sshcommand|status\.showuntrackedfiles|maintenance\..+|bisect\..+)",
    re.IGNORECASE)


def _operands(words: list[Word]) -> list[Word]:
    return [w for w in words if not w.text.startswith("-")]


def git_destructive(args: list[Word], ctx: Context) -> str | None:
    """The tier-4 reason for `git ARGS`, if any."""
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        text = args[i].text
        name = text.split("=", 1)[0]
        if name in ("-c", "--config-env") or (text.startswith("-c") and len(text) > 2
                                              and not text.startswith("--")):
            return "git option that can run another program (-c)"
        if name == "--exec-path" and "=" in text:
            return "git option that can run another program (--exec-path)"
        if name in _GLOBAL_WITH_VALUE:
            if "=" in text:
                value = Word(text.split("=", 1)[1], "", args[i].opaque)
            else:
                i += 1
                value = args[i] if i < len(args) else _UNKNOWN
            if name in ("-C", "--git-dir", "--work-tree") and outside(value, ctx):
                return "git on a repository outside the workspace"
        i += 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    if sub.opaque:
        return "git subcommand known only when it runs"
    if any("::" in w.text or (w.opaque and "::" in w.raw) for w in rest):
        return "git transport that runs a program (ext::)"
    rule = _SUBCOMMANDS.get(sub.text)
    if rule is not None:
        reason = rule(rest, ctx)
        if reason is not None:
            return reason
    for word in option_values(rest, _OUTPUT_SHORT.get(sub.text, ""),
                              ("output", "output-directory", "prefix", "separate-git-dir")):
        if outside(word, ctx, opens_for_write=True):
            return f"writes outside the workspace ({word.text or '…'})"
    if sub.text in ("clone", "init", "worktree", "bundle") and any(
            outside(w, ctx) for w in _operands(rest)
            if "://" not in w.text and not w.text.startswith("git@")):
        return "writes outside the workspace"
    return None


_OUTPUT_SHORT = {"archive": "o", "format-patch": "o"}


def _push(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "fd") or any(w.text.startswith(("+", ":")) for w in rest) or has_long(
            rest, "--force", "--force-with-lease", "--force-if-includes", "--mirror",
            "--delete", "--prune"):
        return "forced push"
    if has_long(rest, "--receive-pack", "--exec"):
        return "git option that runs another program (--receive-pack)"
    return None


def _reset(rest: list[Word], ctx: Context) -> str | None:
    return "hard reset" if has_long(rest, "--hard") else None


def _clean(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "n") or has_long(rest, "--dry-run"):
        return None
    return "git clean removes untracked files"


def _checkout(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "f") or has_long(rest, "--force"):
        return "git checkout -f discards uncommitted changes"
    if any(w.text in ("--", ".", ":/") for w in rest):
        return "git checkout of paths discards uncommitted changes"
    return None


def _switch(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "f") or has_long(rest, "--force", "--discard-changes"):
        return "git switch discards uncommitted changes"
    return None


def _restore(rest: list[Word], ctx: Context) -> str | None:
    staged_only = (has_short(rest, "S") or has_long(rest, "--staged")) and not (
        has_short(rest, "W") or has_long(rest, "--worktree"))
    return None if staged_only else "git restore discards uncommitted changes"


def _rm(rest: list[Word], ctx: Context) -> str | None:
    if has_long(rest, "--cached"):
        return None
    if has_short(rest, "rf") or has_long(rest, "--force"):
        return "recursive or forced removal (git rm)"
    ctx.removes = True
    return None


def _stash(rest: list[Word], ctx: Context) -> str | None:
    action = next((w.text for w in rest if not w.text.startswith("-")), "")
    return f"git stash {action} deletes stashed changes" if action in ("drop", "clear") else None


def _branch(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "DfMC") or (has_long(rest, "--force") and has_short(rest, "dm")) or (
            has_long(rest, "--force") and has_long(rest, "--delete", "--move", "--copy")):
        return "git branch forced (deletes or overwrites a branch)"
    return None


def _apply(rest: list[Word], ctx: Context) -> str | None:
    if has_long(rest, "--unsafe-paths"):
        return "git apply --unsafe-paths may write outside the workspace"
    for word in option_values(rest, "", ("directory",)):
        if outside(word, ctx):
            return f"writes outside the workspace ({word.text})"
    return None


def _clone(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "cu") or has_long(rest, "--config", "--upload-pack", "--template"):
        return "git clone option that runs another program or sets hooks"
    return None


def _init(rest: list[Word], ctx: Context) -> str | None:
    return "git init --template sets hooks" if has_long(rest, "--template") else None


def _fetch(rest: list[Word], ctx: Context) -> str | None:
    return ("git option that runs another program (--upload-pack)"
            if has_long(rest, "--upload-pack") else None)


def _ls_remote(rest: list[Word], ctx: Context) -> str | None:
    return ("git option that runs another program (--upload-pack)"
            if has_short(rest, "u") or has_long(rest, "--upload-pack") else None)


def _grep(rest: list[Word], ctx: Context) -> str | None:
    return ("git grep -O runs another program" if has_short(rest, "O")
            or has_long(rest, "--open-files-in-pager") else None)


def _runs(what: str) -> Callable[[list[Word], Context], str | None]:
    def rule(rest: list[Word], ctx: Context) -> str | None:
        return what
    return rule


def _rebase(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "x") or has_long(rest, "--exec"):
        return "git rebase --exec runs a command after each commit"
    return None


def _difftool(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "xt") or has_long(rest, "--extcmd", "--tool"):
        return "git difftool runs another program"
    return None


def _worktree(rest: list[Word], ctx: Context) -> str | None:
    if rest and rest[0].text == "remove" and (has_short(rest, "f") or has_long(rest, "--force")):
        return "git worktree remove --force discards changes"
    return None


def _reflog(rest: list[Word], ctx: Context) -> str | None:
    if rest and rest[0].text in ("expire", "delete"):
        return "git reflog expire deletes the history that recovers lost commits"
    return None


def _config(rest: list[Word], ctx: Context) -> str | None:
    """Writing a setting that runs programs, or any write outside the repository."""
    operands = _operands(rest)
    verb = operands[0].text if operands else ""
    if verb in ("get", "list") or has_short(rest, "l") or has_long(
            rest, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list",
            "--get-color", "--get-colorbool"):
        return None
    if verb in ("unset", "remove-section", "rename-section") or has_long(
            rest, "--unset", "--unset-all", "--remove-section", "--rename-section"):
        return None
    if verb == "set":
        operands = operands[1:]
    elif not (len(operands) >= 2 or has_long(rest, "--add", "--replace-all") or has_short(rest, "e")
              or has_long(rest, "--edit")):
        return None  # `git config KEY` reads it
    if any(w.opaque for w in operands):
        return "git config sets a value known only when it runs"
    if has_long(rest, "--global", "--system") or any(
            outside(w, ctx) for w in option_values(rest, "f", ("file",))):
        return "git config writes settings outside the workspace"
    for word in operands:
        if _RUNS_SETTINGS.fullmatch(word.text.split("=", 1)[0]):
            return f"git config sets {word.text[:60]}, which makes later git commands run a program"
    return None


def _read_tree(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "u") or has_long(rest, "--reset"):
        return "git read-tree -u/--reset overwrites the work tree or index (discards changes)"
    return None


def _checkout_index(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "f") or has_long(rest, "--force"):
        return "git checkout-index -f overwrites files (discards uncommitted changes)"
    return None


def _symbolic_ref(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "d") or has_long(rest, "--delete"):
        return "git symbolic-ref -d deletes a ref"
    return None


def _prune(rest: list[Word], ctx: Context) -> str | None:
    if has_short(rest, "n") or has_long(rest, "--dry-run"):
        return None
    return "git prune deletes unreachable objects (lost commits can no longer be recovered)"


def _gc(rest: list[Word], ctx: Context) -> str | None:
    for word in rest:
        name, _, value = word.text.partition("=")
        if has_long([Word(name, name, False)], "--prune") and (
                word.opaque or value.lower() in ("now", "all")):
            return "git gc --prune=now deletes unreachable objects (lost commits are gone)"
    return None


def _submodule(rest: list[Word], ctx: Context) -> str | None:
    if any(w.text == "foreach" for w in rest):
        return "git submodule foreach runs a command"
    if any(w.text == "deinit" for w in rest) and (has_short(rest, "f") or has_long(
            rest, "--force", "--all")):
        return "git submodule deinit -f removes submodule work trees (discards changes)"
    return None


_SUBCOMMANDS: dict[str, Callable[[list[Word], Context], str | None]] = {
    "push": _push, "reset": _reset, "clean": _clean, "checkout": _checkout, "switch": _switch,
    "restore": _restore, "rm": _rm, "stash": _stash, "branch": _branch, "apply": _apply,
    "clone": _clone, "init": _init, "fetch": _fetch, "pull": _fetch, "ls-remote": _ls_remote,
    "grep": _grep, "rebase": _rebase, "difftool": _difftool, "mergetool": _difftool,
    "worktree": _worktree, "reflog": _reflog, "config": _config,
    "filter-branch": _runs("git filter-branch runs filter commands and rewrites history"),
    "bisect": lambda rest, ctx: ("git bisect run runs a command" if rest
                                 and rest[0].text == "run" else None),
    "submodule": _submodule, "read-tree": _read_tree, "checkout-index": _checkout_index,
    "update-ref": _runs("git update-ref rewrites or deletes a ref (commits can be lost)"),
    "symbolic-ref": _symbolic_ref, "prune": _prune, "gc": _gc,
    "send-email": _runs("git send-email runs programs and sends files"),
    "daemon": _runs("git daemon serves the repository"),
    "instaweb": _runs("git instaweb runs a web server and browser"),
    "archive": lambda rest, ctx: ("git archive --remote --exec runs a program"
                                  if has_long(rest, "--exec") else None),
}
