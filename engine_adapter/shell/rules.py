"""The classifier's per-program rules: what makes one program's call destructive (tier 4).

`destructive(family, args, ctx)` returns the reason, or `None`. The tables say which programs
write the paths they are given, which options name a file a program writes (with their long
forms: GNU tools and git accept any unique abbreviation, so `--out=` is `--output=`), and which
options force, delete or discard. Paths are judged against the workspace in `Context`.
"""

from __future__ import annotations

from collections.abc import Callable

from engine_adapter.shell.context import (
    Context,
    has_long,
    has_short,
    non_options,
    option_values,
    outside,
    runs_later_target,
)
from engine_adapter.shell.git_rules import git_destructive
from engine_adapter.shell.lexer import Word
from engine_adapter.shell.outside_run import outside_run
from engine_adapter.shell.programs import WIPERS
from engine_adapter.shell.remote_removal import remote_removal
from engine_adapter.shell.scripts import awk_danger, sed_danger, sed_edits

__all__ = ["destructive"]

# -- tables --------------------------------------------------------------------------------------

# Programs that write to (or remove, or change) the paths they are given: any operand outside
# the workspace makes the call tier 4, even one only read (the rule does not guess which is
# which). Option values glued with `=` are judged too.
_WRITERS = frozenset({
    "rm", "rmdir", "mv", "cp", "ln", "install", "touch", "mkdir", "truncate", "chmod", "chown",
    "chgrp", "chattr", "setfacl", "unlink", "shred", "rsync", "patch", "tar", "unzip",
    "split", "csplit", "mktemp", "mkfifo", "mknod", "cpio", "zip", "gzip", "gunzip", "bzip2",
    "bunzip2", "xz", "unxz", "zstd", "7z", "black", "isort", "rustfmt", "srm", "wipe", "trash",
    "trash-put", "link",
})
# Programs that open their operands to write (a device there is harmless, as in a redirection).
_OPEN_WRITERS = frozenset({"tee"})
# Programs that write the operand at a position: (index among operands, or -1 for the last).
_POSITIONAL_WRITES: dict[str, int] = {"uniq": 1, "xxd": 1, "convert": -1, "magick": -1,
                                      "ffmpeg": -1, "iconv": 1}
# Programs that write only where an option says: (short letters, long names) taking a path.
_OUTPUT_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "curl": ("oDc", ("output", "output-dir", "cookie-jar", "dump-header", "trace",
                     "trace-ascii", "stderr", "etag-save", "libcurl", "hsts", "alt-svc")),
    "wget": ("OoaP", ("output-document", "output-file", "append-output", "directory-prefix")),
    "sort": ("oT", ("output", "temporary-directory")), "shuf": ("o", ("output",)),
    "tree": ("o", ("output",)), "iconv": ("o", ("output",)),
    "gcc": ("o", ("output", "MF", "dumpdir", "save-temps")), "ld": ("o", ("output",)),
    "as": ("o", ()), "strip": ("o", ()),
    "rustc": ("o", ("out-dir", "emit")), "javac": ("dsh", ()),
    "tsc": ("", ("outDir", "outFile", "out", "declarationDir", "tsBuildInfoFile")),
    "esbuild": ("", ("outfile", "outdir")), "webpack": ("o", ("output-path",)),
    "pandoc": ("o", ("output", "extract-media", "data-dir")),
    "pytest": ("", ("junitxml", "junit-xml", "log-file", "basetemp", "resultlog", "result-log",
                    "report-log", "html")),
    "go": ("o", ("coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile",
                 "trace", "outputdir")),
    "cargo": ("", ("target-dir", "out-dir", "artifact-dir", "root")),
    "pip": ("tdw", ("target", "prefix", "root", "dest", "wheel-dir", "src", "log")),
    "npm": ("", ("prefix", "cache")), "patch": ("odr", ("output", "directory", "reject-file")),
    "tar": ("fC", ("file", "directory")), "unzip": ("d", ()), "csplit": ("f", ("prefix",)),
    "openssl": ("", ("out", "keyout")), "ssh-keygen": ("f", ()), "docker": ("o", ("output",)),
    "find": ("", ("fprint", "fprint0", "fprintf", "fls")), "cmake": ("B", ()),
    "script": ("", ("log-out", "log-io", "log-timing")),
    "psql": ("oL", ("output", "log-file")), "make": ("C", ("directory",)),
    "less": ("oO", ("log-file", "LOG-FILE")),
}
_RSYNC_DELETES = ("--delete", "--del", "--delete-before", "--delete-during", "--delete-delay",
                  "--delete-after", "--delete-excluded", "--delete-missing-args",
                  "--remove-source-files")
_GCC_RUNS = ("-wrapper", "-fplugin", "-specs", "--specs", "-B", "-fuse-ld=", "--ld-path")


# -- the rules -----------------------------------------------------------------------------------

def destructive(family: str, args: list[Word], ctx: Context) -> str | None:
    """The tier-4 reason for one program and its arguments, if any."""
    reason = _removal(family, args, ctx)
    if reason is None:
        reason = remote_removal(family, args)
    if reason is None:
        reason = outside_run(family, args)
    if reason is None:
        reason = _runs_or_wipes(family, args)
    if reason is None:
        reason = _writes_outside(family, args, ctx)
    return reason


def _removal(family: str, args: list[Word], ctx: Context) -> str | None:
    if family == "rm" and (has_short(args, "rRf")
                           or has_long(args, "--recursive", "--force", "--no-preserve-root")):
        return "recursive or forced removal"
    if family in ("chmod", "chown", "chgrp", "chattr", "setfacl") and (
            has_short(args, "R") or has_long(args, "--recursive")):
        return f"recursive {family}"
    if family in ("find", "fd") and any(w.text in ("-delete", "--delete") for w in args):
        return "recursive or forced removal"
    if family == "rsync":
        if any(w.text.startswith("--") and any(d.startswith(w.text.split("=", 1)[0])
                                               for d in _RSYNC_DELETES)
               and len(w.text.split("=", 1)[0]) >= 5 for w in args):
            return "rsync deletes files (--delete)"
        if has_short(args, "e") or has_long(args, "--rsh", "--rsync-path"):
            return "rsync option that runs another program"
    if family == "tar" and has_long(args, "--remove-files"):
        return "tar removes the files it archives (--remove-files)"
    if family == "zip" and (has_short(args, "m") or has_long(args, "--move")):
        return "zip removes the files it archives (-m)"
    if family == "truncate":
        sizes = option_values(args, "s", ("size",))
        if has_short(args, "r") or has_long(args, "--reference") or any(
                not size.text.startswith("+") or size.opaque for size in sizes):
            return "truncate cuts files to a smaller size"
    if family == "fallocate":
        return fallocate_discards(args)
    if family == "git":
        return git_destructive(args, ctx)
    return None


_FALLOCATE_DISCARDS = ("--punch-hole", "--collapse-range", "--zero-range", "--insert-range")


def fallocate_discards(args: list[Word]) -> str | None:
    """Why a `fallocate` call destroys or shifts a file's data, or None (it only reserves
    space, or digs holes where the data is zeros already: `-d`). Short letters are read up to
    the first one that takes a value (`-o`, `-l`): `-l10p` is `-l 10p`, not `-p`."""
    for word in args:
        text = word.text
        if word.opaque and text.startswith("-"):
            return "fallocate option known only when it runs"
        if text.startswith("--"):
            if has_long([word], *_FALLOCATE_DISCARDS) and len(text.split("=")[0]) >= 3:
                return f"fallocate {text} discards or shifts the file's data"
        elif text.startswith("-"):
            for letter in text[1:]:
                if letter in "pczi":
                    return f"fallocate -{letter} discards or shifts the file's data"
                if letter in "ol":
                    break
    return None


def _runs_or_wipes(family: str, args: list[Word]) -> str | None:
    if family in WIPERS:
        return f"{family} overwrites data beyond recovery"
    if family.startswith("mkfs"):
        return "makes a file system"
    if family == "sed":
        return sed_danger(args)
    if family == "awk":
        return awk_danger(args)
    if family == "gcc" and any(w.text.startswith(_GCC_RUNS) for w in args):
        return "compiler option that runs another program"
    return None


def _writes_outside(family: str, args: list[Word], ctx: Context) -> str | None:
    """A write outside the workspace, or into a file that runs later (the git dir, …)."""
    reason = _writes_where(family, args, ctx, lambda word, write: outside(
        word, ctx, opens_for_write=write))
    if reason is None:
        later = _writes_where(family, args, ctx, lambda word, write: runs_later_target(
            word, ctx) is not None)
        if later is not None:
            return later.replace("outside the workspace", "a file that runs later by itself "
                                 "(the git dir, hooks, start-up files)").replace(
                "writes a file", "writes into a file")
    return reason


def _writes_where(family: str, args: list[Word], ctx: Context,
                  bad: Callable[[Word, bool], bool]) -> str | None:
    """The reason a write lands where `bad(word, opens_for_write)` says it must not."""
    spec = _OUTPUT_OPTIONS.get(family)
    if spec is not None:
        for word in option_values(args, *spec):
            if bad(word, True):
                return f"writes outside the workspace ({word.text or '…'})"
    if family == "sed":
        for word in sed_edits(args):
            if bad(word, False):
                return f"edits a file outside the workspace ({word.text or '…'})"
    position = _POSITIONAL_WRITES.get(family)
    if position is not None:
        operands = non_options(args)
        if len(operands) > max(position, 0) and len(operands) > 1:
            target = operands[position]
            if bad(target, True):
                return f"writes outside the workspace ({target.text or '…'})"
    if family in _WRITERS or family in _OPEN_WRITERS:
        for word in args:
            text = word.text
            if text.startswith("-") and "=" in text:
                word = Word(text.split("=", 1)[1], "", word.opaque)
            elif text.startswith("-") and not text.startswith("--") and "/" in text:
                word = Word(text[2:], "", word.opaque)
            elif text.startswith("-") and text != "-":
                continue
            if bad(word, family in _OPEN_WRITERS):
                return f"writes outside the workspace ({text})"
    return None
