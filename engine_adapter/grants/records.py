"""What a saved grant and a deny rule are, and the checks a record must pass to be trusted.

A saved grant is a session grant (`ApprovalGrant`) that outlives the process, in a scope: the
`project` it was given in, or the `user` (every project). It is held to the rules a session grant
is held to, checked again every time it is read: its prefix must be one `grant_prefix` produces
today (rules tightened since it was saved make it ignored, and reported), its tool must be
grantable, and its tier is at most `MAX_GRANTABLE_TIER`.

A deny rule names a tool and a program prefix that is denied at once, whatever allows it
elsewhere (see `deny`).
"""

from __future__ import annotations

import secrets
import unicodedata
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import ClassVar, Literal

from engine_adapter.shell import MAX_GRANTABLE_TIER, UNGRANTABLE_TOOLS, ApprovalGrant, grant_prefix
from engine_adapter.shell.lexer import Op, ShellSyntaxError, lex

__all__ = [
    "ANY_TOOL",
    "MAX_DENY_WORDS",
    "MAX_NOTE",
    "MAX_PREFIX",
    "SAVED_SCOPES",
    "SCOPES",
    "DenyRule",
    "SavedGrant",
    "Scope",
    "deny_words",
    "new_id",
    "now",
    "prefix_problem",
    "rule_covers_tool",
    "text_problem",
    "tool_problem",
]

Scope = Literal["session", "project", "user"]
SCOPES: tuple[Scope, ...] = ("session", "project", "user")
"""Every scope, named the same everywhere: the approval bar, `--scope`, files, list output."""
SAVED_SCOPES: tuple[Scope, ...] = ("project", "user")
"""The scopes kept on disk (a session grant lives in memory only)."""

ANY_TOOL = "*"
"""A deny rule (or a policy rule) for every tool; an allow grant always names its tool."""

_RUN_TOOLS = frozenset({"execute", "terminal"})
# An ACP agent's own `execute` and the cockpit's sandboxed `terminal` both run a program: a
# deny (or ask) rule for one is meant for both (grants, read narrowly, keep them apart).


def rule_covers_tool(rule_tool: str, tool: str) -> bool:
    """Whether a deny or ask rule naming `rule_tool` applies to a call of `tool`, read
    broadly: `*`, the same tool, or another tool that runs programs the same way
    (`execute` and `terminal`). Allow grants match their tool exactly, never through this."""
    return rule_tool in (ANY_TOOL, tool) or (rule_tool in _RUN_TOOLS and tool in _RUN_TOOLS)

MAX_PREFIX = 1_000
MAX_NOTE = 1_000
MAX_TOOL = 100
MAX_DENY_WORDS = 8


def now() -> datetime:
    """The current time, UTC, to the second (what the files record)."""
    return datetime.now(UTC).replace(microsecond=0)


def new_id(kind: Literal["g", "d"], taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A fresh short id: `g-` for a grant, `d-` for a deny rule, eight hex digits, not in
    `taken`."""
    while True:
        candidate = f"{kind}-{secrets.token_hex(4)}"
        if candidate not in taken:
            return candidate


def text_problem(value: object, what: str, limit: int) -> str | None:
    """Why a text field cannot be trusted as written (not text, too long, a control
    character), or None."""
    if not isinstance(value, str):
        return f"{what} must be text"
    if len(value) > limit:
        return f"{what} is longer than {limit:,} characters"
    bad = next((ch for ch in value if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")
                and ch != "\t"), None)
    if bad is not None:
        return f"{what} contains a control or invisible character (U+{ord(bad):04X})"
    return None


def tool_problem(tool: object, *, allow_any: bool) -> str | None:
    """Why `tool` cannot be named by a grant (`allow_any`: `*` is fine, for deny rules)."""
    problem = text_problem(tool, "tool", MAX_TOOL)
    if problem is not None:
        return problem
    assert isinstance(tool, str)
    if not tool.strip() or tool != tool.strip():
        return "tool must be a name without surrounding spaces"
    if tool == ANY_TOOL and not allow_any:
        return "an allow grant names its tool (`*` is for deny rules)"
    if tool in UNGRANTABLE_TOOLS and not allow_any:
        return f"{tool} is never granted"
    return None


def prefix_problem(tool: str, prefix: object) -> str | None:
    """Why `prefix` is not a prefix the current rules grant for `tool`, or None.

    A prefix is trusted only if `grant_prefix` gives back exactly the same text for the prefix
    itself, run as a command (or as an argv list): what is saved is then something `[a]
    always` could have granted today. Rules tightened since it was saved make this fail.
    """
    problem = text_problem(prefix, "prefix", MAX_PREFIX)
    if problem is not None:
        return problem
    assert isinstance(prefix, str)
    if not prefix.strip():
        return "the prefix is blank"
    if grant_prefix(tool, {"command": prefix}) == prefix:
        return None
    if grant_prefix(tool, {"argv": prefix.split(" ")}) == prefix:
        return None
    return "the current grant rules would not grant this prefix"


def deny_words(prefix: object) -> tuple[str, ...] | str:
    """The words of a deny rule's prefix (`"git push"` -> `("git", "push")`), or why it is not
    one: a deny prefix is 1 to `MAX_DENY_WORDS` plain words, no operator, quote or expansion."""
    problem = text_problem(prefix, "prefix", MAX_PREFIX)
    if problem is not None:
        return problem
    assert isinstance(prefix, str)
    try:
        tokens = lex(prefix).tokens
    except ShellSyntaxError as exc:
        return f"the prefix cannot be read ({exc})"
    if not tokens:
        return "the prefix is blank"
    if any(isinstance(t, Op) or not t.plain for t in tokens):
        return "a deny prefix is plain words: no quotes, operators or $ expansions"
    if len(tokens) > MAX_DENY_WORDS:
        return f"a deny prefix has at most {MAX_DENY_WORDS} words"
    return tuple(t.text for t in tokens)


@dataclass(frozen=True, kw_only=True, slots=True)
class SavedGrant:
    """A standing allow in a saved scope: calls of `tool` whose `grant_prefix` is exactly
    `prefix`, at a tier up to `max_tier` (never 4), are allowed without asking."""

    kind: ClassVar[str] = "allow"
    id: str
    scope: Scope
    tool: str
    prefix: str
    max_tier: int
    created: datetime
    last_used: datetime | None = None
    note: str = ""

    @property
    def tier(self) -> int:
        """`max_tier`, under the name session grants use."""
        return self.max_tier

    def as_grant(self) -> ApprovalGrant:
        """The session grant with the same reach (what it is matched as)."""
        return ApprovalGrant(tool=self.tool, prefix=self.prefix, tier=self.max_tier)

    def used(self, when: datetime) -> SavedGrant:
        """This grant with `last_used` set to `when`."""
        return replace(self, last_used=when)

    def problem(self) -> str | None:
        """Why the current rules would not honour this grant, or None."""
        return (tool_problem(self.tool, allow_any=False)
                or (None if 1 <= self.max_tier <= MAX_GRANTABLE_TIER
                    else f"max_tier must be 1 to {MAX_GRANTABLE_TIER}")
                or prefix_problem(self.tool, self.prefix))


@dataclass(frozen=True, kw_only=True, slots=True)
class DenyRule:
    """Calls of `tool` (or of any tool, `*`) that run the program prefix `prefix` are denied at
    once, in every scope, whatever grant, policy or flag would allow them."""

    kind: ClassVar[str] = "deny"
    id: str
    scope: Scope
    tool: str
    prefix: str
    created: datetime
    last_used: datetime | None = None
    note: str = ""

    @property
    def words(self) -> tuple[str, ...]:
        """The prefix's words (a rule that is not plain words matches nothing)."""
        words = deny_words(self.prefix)
        return words if isinstance(words, tuple) else ()

    def used(self, when: datetime) -> DenyRule:
        """This rule with `last_used` set to `when`."""
        return replace(self, last_used=when)

    def problem(self) -> str | None:
        """Why this rule cannot be applied, or None."""
        words = deny_words(self.prefix)
        return tool_problem(self.tool, allow_any=True) or (
            words if isinstance(words, str) else None)
