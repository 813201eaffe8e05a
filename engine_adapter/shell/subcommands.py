"""Programs with subcommands (`git status`, `npm run build`) and targets (`make test`): which
subcommands a grant may cover, and the prefix (with the reason when there is none) of such a call.

The prefix of a multiplexer includes its subcommand (and, for some, the action under it), since
`git status` and `git push` are different requests. Subcommands that run arbitrary programs or
packages, open an editor, or rewrite the settings later calls rely on are never granted.
"""

from __future__ import annotations

import re

from engine_adapter.shell.grant_options import dangerous_arg
from engine_adapter.shell.lexer import Word
from engine_adapter.shell.programs import denied_reason, program_family

__all__ = ["MULTIPLEXERS", "TARGET_STYLE", "multiplexer_prefix", "target_prefix"]

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


# Known git subcommands a grant never covers (see above `_GIT_SUBCOMMANDS`).
_GIT_NOT_GRANTED = frozenset({
    "config", "submodule", "bisect", "filter-branch", "difftool", "mergetool", "send-email",
    "instaweb", "daemon", "credential", "maintenance", "help", "var", "hook", "web--browse",
    "upload-pack", "receive-pack", "upload-archive", "shell", "fast-import", "replace",
    "update-ref", "update-index", "prune-packed", "filter-repo",
})
MULTIPLEXERS = _MULTIPLEXERS
TARGET_STYLE = _TARGET_STYLE
# A subcommand (or script or target) word: a plain name, never an option or a path.
_SUB_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]*")


def _is_sub(word: Word) -> bool:
    return word.plain and _SUB_RE.fullmatch(word.text) is not None


def _runs_program(name: str) -> str | None:
    return denied_reason(program_family(name))


def _first_danger(family: str, sub: str | None, words: list[Word]) -> str | None:
    return next((why for w in words if (why := dangerous_arg(family, sub, w.text))), None)


def target_prefix(family: str, words: list[Word]) -> tuple[str, str]:
    """`(prefix, why not)` of a target-style call (`make test`): the program and one target."""
    program, rest = words[0].text, words[1:]
    danger = _first_danger(family, None, rest)
    if danger:
        return "", danger
    if not rest:
        return program, ""
    target, options = rest[0], rest[1:]
    if not _is_sub(target):
        return "", f"{program} is granted with one plain target first ({target.raw} is not one)"
    if _runs_program(target.text):
        return "", f"the target {target.text} names a program that runs other code"
    bad = next((w for w in options if not _TARGET_OPTIONS.fullmatch(w.text)), None)
    if bad is not None:
        return "", (f"{program} is granted with one target and a few plain options "
                    f"({bad.raw} is not one of them)")
    return f"{program} {target.text}", ""


def multiplexer_prefix(family: str, words: list[Word]) -> tuple[str, str]:
    """`(prefix, why not)` of a call of a program with subcommands (`git status`).

    The subcommand must come first: options before it (`git -C dir status`, `git --no-pager
    log`, `cargo +nightly build`) are refused, since they are where these programs take the
    settings that change which repository, configuration or program is used.
    """
    program = words[0].text
    if len(words) < 2:
        return "", f"{program} is granted only with a subcommand"
    if not _is_sub(words[1]):
        return "", (f"{program} is granted only with its subcommand first "
                    f"({words[1].raw} comes before it)")
    sub = words[1].text
    key = sub.lower()
    if family == "git" and sub in _GIT_NOT_GRANTED:
        return "", f"git {sub} can run other programs or change what later git commands do"
    if family == "git" and sub not in _GIT_SUBCOMMANDS:
        return "", f"git {sub} is not a known git subcommand (it may be an alias)"
    if key in _DENY_SUB.get(family, frozenset()):
        return "", f"{program} {sub} runs other programs or changes settings"
    if family in _SUB_IS_PROGRAM and _runs_program(sub):
        return "", f"{program} {sub} runs {sub}, {_runs_program(sub)}"
    danger = _first_danger(family, key, words[2:])
    if danger:
        return "", danger
    parts = [program, sub]
    if family in _DEEP:
        for word in words[2:]:
            if not _is_sub(word):
                break
            parts.append(word.text)
        denied = next((p for p in parts[2:] if p.lower() in _DENY_SUB.get(family, frozenset())),
                      None)
        if denied is not None:
            return "", f"{program} … {denied} runs other programs or changes settings"
        return " ".join(parts), ""
    nested = family in _NESTED_ALL or key in _NESTED.get(family, frozenset())
    if nested and len(words) > 2:
        action = words[2]
        if not _is_sub(action):
            return "", (f"{program} {sub} is granted only with its action first "
                        f"({action.raw} comes before it)")
        if (family, key, action.text.lower()) in _DENY_SUB3:
            return "", f"{program} {sub} {action.text} runs other programs or changes settings"
        if (family, key) in _RUNS_NAMED and _runs_program(action.text):
            return "", (f"{program} {sub} {action.text} runs {action.text}, "
                        f"{_runs_program(action.text)}")
        parts.append(action.text)
    return " ".join(parts), ""
