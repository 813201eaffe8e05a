"""Grants that would allow something else (issue 10 §2 and §4), the one grantability verdict and
its reasons, and the one lexer behind grants and the classifier.

The rule: a call whose input carries an environment, a directory other than the workspace, or
two commands is not grantable; nor is a command with an option or operand that names a path
outside the workspace (absolute, `~`, a `..` that climbs out), uploads a file, or forces or
deletes. After `[a]` on the first command of each pair, the second must ask again.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.paths import ROOT
from support.shell_tables import PAIRS

from engine_adapter.shell import (
    ApprovalGrant,
    classify_command,
    explain_prefix,
    grant_prefix,
    grantability,
    lex,
    simple_commands,
)
from engine_adapter.shell import classify as classify_module


def prefix(command: str) -> str:
    return grant_prefix("shell", {"command": command})


def why(tool_input: dict[str, Any], tool: str = "shell") -> str:
    verdict = explain_prefix(tool, tool_input)
    assert verdict.prefix == ""
    return verdict.why


# -- §2: what the input carries besides the command ----------------------------------------------

@pytest.mark.parametrize(("tool_input", "reason"), [
    ({"command": "git diff", "env": {"GIT_EXTERNAL_DIFF": "x"}}, "sets GIT_EXTERNAL_DIFF"),
    ({"command": "git log", "env": [{"name": "GIT_PAGER", "value": "sh"}]}, "sets GIT_PAGER"),
    ({"argv": ["git", "diff"], "env": ["GIT_EXTERNAL_DIFF=x"]}, "sets GIT_EXTERNAL_DIFF"),
    ({"command": "ls", "env": {"HARMLESS": ""}}, "sets HARMLESS"),
    ({"command": "ls", "env": {"A": "1", "B": "2"}}, "and 1 more"),
    ({"command": "ls", "env": "LD_PRELOAD=x"}, "environment"),
    ({"command": "git status", "cwd": "/other/repo"}, "another directory (cwd /other/repo)"),
    ({"command": "git status", "cwd": ".."}, "another directory"),
    ({"command": "git status", "cwd": "sub"}, "another directory"),
    ({"command": "git status", "cwd": "./sub"}, "another directory"),
    ({"command": "git status", "cwd": "/"}, "another directory"),
    ({"argv": ["git", "status"], "cwd": "~"}, "another directory"),
    ({"command": "git status", "cwd": 0}, "another directory"),
    ({"command": "git status", "argv": ["git", "status"]}, "two commands (command and argv)"),
    ({"command": "git status", "cmd": "rm -rf ~"}, "two commands (command and cmd)"),
    ({"cmd": "git status", "argv": ["rm"]}, "two commands (cmd and argv)"),
    ({"command": "git", "args": ["status"]}, "two commands (command and args)"),
    ({"argv": ["ls"], "script": "rm -rf ~"}, "two commands"),
    ({"command": "ls", "commands": ["rm"]}, "two commands"),
    ({"cmd": "git status"}, "only a `command` line or an `argv` list can be granted"),
    ({"command": ["git", "status"]}, "this call gives `command`"),
    ({"argv": "git status"}, "this call gives `argv`"),
    ({"command": "git status", "shell": "/tmp/x"}, "carries shell"),
    ({"command": "git status", "stdin": "x"}, "carries stdin"),
    ({"command": "git status", "user": "root"}, "carries user"),
    ({"command": "git status", "env_file": ".env"}, "carries env_file"),
])
def test_an_input_with_more_than_the_command_is_not_grantable(tool_input, reason) -> None:
    assert reason in why(tool_input)


@pytest.mark.parametrize("extra", [{}, {"env": {}}, {"env": []}, {"env": None}, {"cwd": None},
                                   {"cwd": ""}, {"cwd": "."}, {"description": "look"},
                                   {"timeout": 30}, {"outputByteLimit": 1000}])
def test_an_empty_env_or_the_workspace_as_cwd_keeps_the_grant(extra) -> None:
    assert grant_prefix("shell", {"command": "git status", **extra}) == "git status"
    assert grant_prefix("execute", {"argv": ["git", "status"], **extra}) == "git status"


# -- §4: grants that would allow something else ---------------------------------------------------

def _pairs() -> list[tuple[str, str]]:
    return [(first, second) for first, seconds in PAIRS for second in seconds]


@pytest.mark.parametrize(("first", "second"), _pairs())
def test_a_grant_for_the_first_never_covers_the_second(first, second) -> None:
    granted = prefix(first)
    grant = ApprovalGrant(tool="shell", prefix=granted, tier=3)
    assert not grant.matches("shell", prefix(second), 3), (granted, prefix(second))
    assert prefix(second) == "", explain_prefix("shell", {"command": second})


@pytest.mark.parametrize("first", sorted({first for first, _ in PAIRS} - {
    "rsync -a a b", "tar -tf a.tar"}))
def test_the_first_of_each_pair_is_grantable(first) -> None:
    assert prefix(first), explain_prefix("shell", {"command": first})


@pytest.mark.parametrize("command", [
    "tail -f log.txt", "grep -f patterns.txt x", "cut -f1 x", "sort -f x", "ls -f",
    "git log --format=%H", "git diff --stat", "git log --follow x", "ruff check --fix .",
    "git fetch --prune", "git log HEAD..main", "curl https://user@example.com/x",
    "curl http://localhost:8080/x", "git remote add o git@github.com:org/repo.git",
    "git clone https://example.com/r.git", "pytest --deselect a::b",
])
def test_look_alikes_of_forcing_and_paths_stay_grantable(command) -> None:
    assert prefix(command), explain_prefix("shell", {"command": command})


OUTSIDE = ["/etc/passwd", "/tmp/x", "../x", "../../x", "a/../../x", "..", "--out=/tmp/x",
           "--output=../x", "-o/tmp/x", "-I../x", "-Wl,-rpath,/x", "host:/etc/x",
           "file:///etc/x", "--x=a:/etc"]
FORCES = {"rm": ["-f", "-r", "-R", "-rf", "--force", "--recursive", "--forc", "-fv"],
          "cp": ["-f", "--force", "-af"], "mv": ["-f", "--force"], "ln": ["-f", "-sf"],
          "curl": ["-F", "-T", "--form", "--upload-file", "-d@x", "--data=@x"]}
GRANTABLE = ["ls", "cat", "rm", "cp", "mv", "ln", "curl", "grep", "wc", "git status",
             "git diff", "npm test", "cargo build", "pytest", "make test"]
ARGS = st.text("abcxyz019_.", min_size=1, max_size=6).filter(lambda w: not w.startswith(".."))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(GRANTABLE), st.lists(ARGS, max_size=3), st.sampled_from(OUTSIDE),
       st.data())
def test_any_path_outside_makes_any_call_ungrantable(program, args, bad, data) -> None:
    at = data.draw(st.integers(0, len(args)))
    words = [*program.split(), *args[:at], bad, *args[at:]]
    assert grant_prefix("shell", {"command": " ".join(words)}) == ""
    assert grant_prefix("shell", {"argv": words}) == ""


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(FORCES)), st.lists(ARGS, max_size=3), st.data())
def test_any_force_or_upload_makes_the_call_ungrantable(program, args, data) -> None:
    bad = data.draw(st.sampled_from(FORCES[program]))
    at = data.draw(st.integers(0, len(args)))
    words = [program, *args[:at], bad, *args[at:]]
    assert grant_prefix("shell", {"command": " ".join(words)}) == ""


# -- the one verdict, and why --------------------------------------------------------------------

@pytest.mark.parametrize(("tool", "tool_input", "tier", "reason"), [
    ("shell", {"command": "python3 x.py"}, 3, "runs python3, an interpreter"),
    ("shell", {"command": "python3 -c 'print(1)'"}, 4, "tier 4: destructive commands"),
    ("shell", {"command": "git status && rm x"}, 3, "chains two commands with &&"),
    ("shell", {"command": "git status; rm x"}, 3, "chains two commands with ;"),
    ("shell", {"command": "git status | sh"}, 3, "pipes into another command (|)"),
    ("shell", {"command": "git status\nrm x"}, 3, "more than one command line"),
    ("shell", {"command": "git status &"}, 3, "in the background"),
    ("shell", {"command": "git log > out"}, 3, "redirects output to a file (>)"),
    ("shell", {"command": "cat <<EOF\nx\nEOF"}, 3, "here-document"),
    ("shell", {"command": "git status $(id)"}, 3, "command substitution"),
    ("shell", {"command": 'git log "$HOME"'}, 3, "expands a variable"),
    ("shell", {"command": "ls *.py"}, 3, "glob"),
    ("shell", {"command": "ls ~"}, 3, "~"),
    ("shell", {"command": 'git commit -m "a; b"'}, 3, "inside quotes"),
    ("shell", {"command": "ls\u200b -la"}, 3, "U+200B"),
    ("shell", {"command": "GIT_EXTERNAL_DIFF=x git diff"}, 3,
     "sets GIT_EXTERNAL_DIFF in the environment"),
    ("shell", {"command": "git diff", "env": {"GIT_EXTERNAL_DIFF": "x"}}, 3,
     "sets GIT_EXTERNAL_DIFF in the environment"),
    ("shell", {"command": "git frobnicate"}, 3, "not a known git subcommand"),
    ("shell", {"command": "git config core.pager x"}, 3, "git config"),
    ("shell", {"command": "npm exec x"}, 3, "npm exec runs other programs"),
    ("shell", {"command": "git -c core.pager=x log"}, 3, "subcommand first"),
    ("shell", {"command": "git push --force"}, 3, "forces (--force)"),
    ("shell", {"command": "curl -F f=@x https://e.com"}, 3, "uploads a file (-F"),
    ("shell", {"command": "cat /etc/shadow"}, 3, "outside the workspace (/etc/shadow)"),
    ("shell", {"command": "sudo ls"}, 3, "runs sudo, which runs commands as another user"),
    ("shell", {"command": "bash -c ls"}, 3, "runs bash, a shell"),
    ("shell", {"command": "fakeroot ls"}, 3, "runs fakeroot, which runs other programs"),
    ("shell", {"command": ""}, 3, "empty"),
    ("shell", {"command": "x" * 20_000}, 3, "longer than"),
    ("alter_verification", {"command": "pytest"}, 3, "alter_verification is never granted"),
    ("edit", {"path": "a.py", "diff": "x"}, 3, "only shell commands can be granted"),
    ("shell", {"command": "rm -rf build"}, 4, "tier 4: destructive commands are asked"),
    ("delete", {"path": "a.py"}, 4, "tier 4: destructive calls are asked"),
])
def test_grantability_names_this_calls_reason(tool, tool_input, tier, reason) -> None:
    verdict = grantability(tool, tool_input, tier)
    assert not verdict.grantable and verdict.reason and reason in verdict.reason, verdict


def test_a_grantable_call_has_its_prefix_and_no_reason() -> None:
    verdict = grantability("shell", {"command": "git status --short"}, 3)
    assert verdict == (True, "git status", None)
    assert grantability("shell", {"argv": ["npm", "test"]}, 1) == (True, "npm test", None)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["shell", "execute", "alter_verification", "edit"]),
       st.one_of(st.text(max_size=40), st.sampled_from(
           ["git status", "ls -la", "rm -rf x", "npm test", "python3 x.py", "git push -f"])),
       st.one_of(st.integers(-1, 6), st.booleans(), st.none()))
def test_grantability_agrees_with_the_prefix_and_the_grant(tool, command, tier) -> None:
    verdict = grantability(tool, {"command": command}, tier)  # type: ignore[arg-type]
    assert verdict.prefix == grant_prefix(tool, {"command": command})
    assert (verdict.reason is None) == verdict.grantable
    assert verdict.grantable == (bool(verdict.prefix) and type(tier) is int and tier <= 3
                                 and tool != "alter_verification")
    grant = ApprovalGrant(tool=tool, prefix=verdict.prefix, tier=3)
    if not verdict.grantable and type(tier) is int:
        assert not grant.matches(tool, verdict.prefix, tier)


# -- one lexer -----------------------------------------------------------------------------------

FRAGMENTS = ["git", "status", "ls", "npm", "test", " ", "  ", "-c", "--x=y", "'", '"', ";",
             "&", "|", "$", "`", "(", ")", "<", ">", "\n", "*", "~", "=", "./", "é", "\t",
             "a b", "'a b'", '"x y"', "\\", "#", "{", "}", "-O", "make", "cd", "..", "/tmp"]


PLAIN = st.tuples(st.sampled_from(GRANTABLE), st.lists(st.sampled_from(
    ["-la", "x.py", "'a b'", '"c d"', "src/", "--short", "-n", "5", "a,b", "k=v", "é"]),
    max_size=5)).map(lambda t: " ".join([t[0], *t[1]]))


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=60), PLAIN, st.lists(st.sampled_from(FRAGMENTS), max_size=12)
                 .map("".join)))
def test_a_granted_command_is_one_simple_command_to_the_classifier(command) -> None:
    granted = prefix(command)
    if not granted:
        return
    lexed = lex(command)
    commands = simple_commands(lexed.tokens)
    assert len(commands) == 1 and not lexed.nested and not commands[0].writes_to
    words = [w.text for w in commands[0].words]
    assert granted.split(" ") == words[: len(granted.split(" "))]
    assert words == shlex.split(command)  # an independent reading agrees on the words
    seen: list[list[str]] = []
    real = classify_module._classify_command

    def spy(simple, ctx):
        if ctx.depth == 0:
            seen.append([w.text for w in simple.words])
        return real(simple, ctx)

    with mock.patch.object(classify_module, "_classify_command", spy):
        classify_command(command, Path.cwd())
    assert seen == [words]


def test_no_view_module_imports_grant_rules() -> None:
    """Views show the verdict the event carries; they never decide it again."""
    # The cockpit may read and change saved grants (`engine_adapter.grants`: the store, the
    # gate, the CLI) but never the rules that decide what a call is.
    rules = re.compile(r"engine_adapter\.shell|engine_adapter\.grants\.(records|deny|policy)|"
                       r"grant_prefix|grantability|"
                       r"classify_command|MAX_GRANTABLE_TIER|UNGRANTABLE_TOOLS")
    root = ROOT / "cockpit"
    offenders = [str(path.relative_to(root)) for path in sorted(root.rglob("*.py"))
                 if rules.search(path.read_text(encoding="utf-8"))]
    assert not offenders, offenders


@pytest.mark.parametrize("raw", [
    {"command": "git status", "cmd": "rm -rf ~"},
    {"command": "git status", "argv": ["rm", "-rf", "x"]},
    {"cmd": "git status", "argv": ["git", "push", "--force"]},
    {"command": "ls", "cmd": "ls"},
])
def test_an_acp_permission_naming_two_commands_shows_both_and_grants_neither(raw) -> None:
    from engine_adapter.engines.acp.client.permissions import (
        approval_input,
        command_of,
        destructive_reason,
        tier_for,
    )

    shown = approval_input(raw, workspace="/ws")
    assert {k: shown[k] for k in raw} == raw  # every command the agent named, as named
    assert "two commands" in why(shown, tool="execute")
    assert command_of(raw) is None  # no permit for a later terminal: which one runs is unknown
    worst = max(classify_command(c, "/ws").tier for c in raw.values())
    assert tier_for("execute", raw, "/ws") == max(3, worst)
    assert (destructive_reason(raw, "/ws") is not None) == (worst == 4)
