"""Grants: what `[a] always` remembers (`grant_prefix`) and what it later allows (`matches`).

The negative table is the point of this file: every known way to smuggle a second command, a
substitution, an expansion, a redirection, another program or a dangerous option in under a
granted prefix must make the call ungrantable (`""`). The tables live in `support/shell_tables.py`
(the grant-scope tests replay them against saved grants).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.shell_tables import FRAGMENTS, NEGATIVE, POSITIVE, plain_commands

from engine_adapter.shell import UNGRANTABLE_TOOLS, ApprovalGrant, grant_prefix


def prefix(command: str) -> str:
    return grant_prefix("shell", {"command": command})


# -- positive cases ------------------------------------------------------------------------------

@pytest.mark.parametrize(("command", "expected"), POSITIVE)
def test_grantable_commands(command: str, expected: str) -> None:
    assert prefix(command) == expected


@pytest.mark.parametrize(("argv", "expected"), [
    (["git", "log", "-n", "3"], "git log"),
    (["git", "status"], "git status"),
    (["ls", "my file.txt"], "ls"),
    (["npm", "test"], "npm test"),
    (["./git", "status"], "./git status"),
])
def test_grantable_argv(argv: list[str], expected: str) -> None:
    assert grant_prefix("shell", {"argv": argv}) == expected


def test_descriptive_keys_do_not_change_the_prefix() -> None:
    assert grant_prefix("shell", {"command": "git status", "description": "look",
                                  "timeout": 30}) == "git status"


def test_a_granted_prefix_allows_a_later_call_with_other_arguments() -> None:
    grant = ApprovalGrant(tool="shell", prefix=prefix("git status"), tier=3)
    assert grant.matches("shell", prefix("git status --short -- src"), 3)
    assert not grant.matches("shell", prefix("git stash"), 3)


# -- negative cases: every bypass class ----------------------------------------------------------

@pytest.mark.parametrize("command", list(NEGATIVE.values()), ids=list(NEGATIVE))
def test_ungrantable_commands(command: str) -> None:
    assert prefix(command) == ""


@pytest.mark.parametrize("tool_input", [
    {},
    {"path": "x.py"},
    {"command": ["git", "status"]},
    {"command": None},
    {"argv": "git status"},
    {"argv": []},
    {"argv": ["git", 3]},
    {"argv": ["git status"]},
    {"argv": ["git", "status;rm"]},
    {"argv": ["git", "log", "$(x)"]},
    {"argv": ["git", "log", "a\nb"]},
    {"argv": ["git", "-c", "core.pager=sh", "status"]},
    {"argv": ["bash", "-c", "ls"]},
    {"argv": ["env", "ls"]},
    {"argv": ["GIT_PAGER=sh", "git", "log"]},
    {"argv": ["'git'", "status"]},
    {"command": "git status", "argv": ["git", "status"]},
    {"command": "git status", "env": {"GIT_PAGER": "sh"}},
    {"command": "git status", "cwd": "/other/repo"},
    {"command": "git status", "shell": "/tmp/x"},
], ids=repr)
def test_ungrantable_inputs(tool_input: dict[str, Any]) -> None:
    assert grant_prefix("shell", tool_input) == ""


def test_non_mapping_input_is_not_grantable() -> None:
    assert grant_prefix("shell", "git status") == ""  # type: ignore[arg-type]
    assert grant_prefix("shell", None) == ""  # type: ignore[arg-type]


def test_non_shell_tools_are_not_grantable() -> None:
    assert grant_prefix("read_file", {"path": "README.md"}) == ""
    assert grant_prefix("write_file", {"path": "x", "content": "y"}) == ""


def test_alter_verification_has_no_prefix() -> None:
    assert "alter_verification" in UNGRANTABLE_TOOLS
    assert grant_prefix("alter_verification", {"command": "pytest"}) == ""


def test_ls_grant_does_not_cover_lsof() -> None:
    grant = ApprovalGrant(tool="shell", prefix=prefix("ls -la"), tier=3)
    assert grant.prefix == "ls"
    assert prefix("lsof -i") == "lsof"
    assert not grant.matches("shell", prefix("lsof -i"), 3)
    assert not grant.matches("shell", "lsof", 3)
    assert not grant.matches("shell", "ls ", 3)
    assert grant.matches("shell", prefix("ls src"), 3)
    assert not grant.matches("shell", prefix("ls /tmp"), 3)  # a path outside the workspace


@pytest.mark.parametrize("other", ["./git status", "bin/git status", "Git status", "GIT status",
                                   "git stash", "git"])
def test_git_status_grant_does_not_cover_another_program(other: str) -> None:
    grant = ApprovalGrant(tool="shell", prefix="git status", tier=3)
    assert not grant.matches("shell", prefix(other), 3)


# -- ApprovalGrant.matches -----------------------------------------------------------------------

def test_grant_is_a_frozen_keyword_only_dataclass() -> None:
    grant = ApprovalGrant(tool="shell", prefix="ls", tier=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        grant.prefix = "rm"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ApprovalGrant("shell", "ls", 3)  # type: ignore[misc]
    assert ApprovalGrant.__doc__
    assert not hasattr(grant, "__dict__")  # slots


def test_matches_same_tool_prefix_and_tier() -> None:
    grant = ApprovalGrant(tool="shell", prefix="git status", tier=3)
    assert grant.matches("shell", "git status", 3)
    assert grant.matches("shell", "git status", 1)


@pytest.mark.parametrize("blank", ["", " ", "   ", "\t", "\n"])
def test_blank_prefix_never_matches(blank: str) -> None:
    grant = ApprovalGrant(tool="shell", prefix=blank, tier=3)
    assert not grant.matches("shell", blank, 1)
    assert not grant.matches("shell", "", 1)


def test_tier_4_never_matches() -> None:
    grant = ApprovalGrant(tool="shell", prefix="ls", tier=4)
    assert not grant.matches("shell", "ls", 4)
    assert grant.matches("shell", "ls", 3)
    assert not ApprovalGrant(tool="shell", prefix="ls", tier=9).matches("shell", "ls", 5)


def test_higher_tier_than_granted_does_not_match() -> None:
    grant = ApprovalGrant(tool="shell", prefix="ls", tier=2)
    assert grant.matches("shell", "ls", 2)
    assert not grant.matches("shell", "ls", 3)


def test_non_integer_tiers_do_not_match() -> None:
    grant = ApprovalGrant(tool="shell", prefix="ls", tier=3)
    assert not grant.matches("shell", "ls", "1")  # type: ignore[arg-type]
    assert not grant.matches("shell", "ls", True)
    assert not grant.matches("shell", "ls", 1.0)  # type: ignore[arg-type]


def test_alter_verification_never_matches() -> None:
    grant = ApprovalGrant(tool="alter_verification", prefix="pytest", tier=3)
    assert not grant.matches("alter_verification", "pytest", 1)


def test_different_tool_does_not_match() -> None:
    grant = ApprovalGrant(tool="shell", prefix="ls", tier=3)
    assert not grant.matches("bash", "ls", 3)
    assert not grant.matches("alter_verification", "ls", 3)


def test_prefix_must_be_equal_not_a_prefix_or_case_variant() -> None:
    grant = ApprovalGrant(tool="shell", prefix="git", tier=3)
    assert not grant.matches("shell", "git status", 3)
    assert not grant.matches("shell", "Git", 3)
    assert not grant.matches("shell", "gitk", 3)


# -- properties ----------------------------------------------------------------------------------

OPERATORS = [";", "&&", "||", "|", "&", "\n", "|&"]


@settings(max_examples=400, deadline=None)
@given(plain_commands(), st.sampled_from(OPERATORS), plain_commands(),
       st.sampled_from(["", " ", "  "]), st.sampled_from(["", " ", "  "]))
def test_any_two_commands_joined_are_not_grantable(
    first: str, operator: str, second: str, before: str, after: str
) -> None:
    command = f"{first}{before}{operator}{after}{second}"
    assert prefix(command) == ""
    assert grant_prefix("shell", {"argv": [*first.split(), operator, *second.split()]}) == ""


DANGEROUS = ["$(x)", "$(rm -rf ~)", "`x`", "<(x)", ">(x)", "$X", "$HOME", "$IFS", "${X}", "${",
             "$_a", ">", "<", ">>", "2>", "&>", "<<", "<<<", ">|", "$", "$1", "$((1))"]


@settings(max_examples=400, deadline=None)
@given(plain_commands(), st.sampled_from(DANGEROUS), st.data(),
       st.sampled_from(["bare", "double", "single"]))
def test_substitution_expansion_or_redirection_anywhere_is_not_grantable(
    command: str, token: str, data: st.DataObject, quoting: str
) -> None:
    at = data.draw(st.integers(0, len(command)))
    wrapped = {"bare": token, "double": f'"{token}"', "single": f"'{token}'"}[quoting]
    spaced = data.draw(st.booleans())
    inserted = f" {wrapped} " if spaced else wrapped
    assert prefix(command[:at] + inserted + command[at:]) == ""


META = set(";&|<>$`\n\r\t\x00()*?[]{}~!#\\^")


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(), st.lists(st.sampled_from(FRAGMENTS), max_size=10).map("".join)))
def test_any_text_never_raises_and_only_grants_words_the_human_saw(command: str) -> None:
    result = prefix(command)
    assert isinstance(result, str)
    if result:
        assert result == result.strip()
        granted = result.split(" ")
        assert command.split()[: len(granted)] == granted
        assert not META & set(command)
        assert not any(ch in command for ch in "\u00a0\u2028\u200b\u202e")


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.lists(st.text(max_size=6), max_size=5),
    st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.integers(), st.text(),
                                                    st.lists(st.text(max_size=4)))),
))
def test_any_input_shape_never_raises(value: Any) -> None:
    assert isinstance(grant_prefix("shell", {"argv": value}), str)
    if isinstance(value, dict):
        result = grant_prefix("shell", value)
        assert isinstance(result, str)
        if result:
            assert set(value) & {"command", "argv"}
