"""Approval policies: who answers when nobody watches (the `on_approval` of a programmatic client).

A policy is any callable the Session consults before it asks: it gets an `ApprovalRequest`
(tool, input, tier, prefix, …) and returns `"allow"`, `"deny"`, `"ask"` (the human decides, even
if a grant would allow), or `None` (no opinion: grants, then the human or the unattended rules) —
or a `PolicyDecision` that also names the rule that decided. An exception in it is a deny,
journaled with the error. A policy never allows tier 4: such an "allow" is treated as "ask".

`load_policy(path)` reads a TOML policy, an ordered list of rules (the first that matches
decides; none matching means no opinion)::

    [[rule]]
    tool = "shell"          # a tool name, or "*" (the default): every tool
    prefix = "git push"     # optional: see below
    decision = "deny"       # allow | deny | ask

    [[rule]]
    tool = "shell"
    prefix = "pytest"
    max_tier = 3            # optional: min_tier / max_tier bound the call's tier
    decision = "allow"
    note = "CI runs the tests"

`prefix` is matched as grants and deny rules are: an `allow` rule only by exact equality with the
call's grant prefix (so a chained or dressed-up command never matches an allow), a `deny` or
`ask` rule broadly (any command the call runs, see `deny`). An `allow` rule never reaches tier 4
(`max_tier` defaults to 3 and cannot be more), and names its tool: `*` cannot allow everything.
"""

from __future__ import annotations

import tomllib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engine_adapter.grants.deny import runs_prefix
from engine_adapter.grants.records import (
    ANY_TOOL,
    deny_words,
    rule_covers_tool,
    text_problem,
    tool_problem,
)

__all__ = ["ApprovalPolicy", "ApprovalRequest", "Decision", "PolicyDecision", "PolicyError",
           "PolicyRule", "TomlPolicy", "load_policy"]

Decision = Literal["allow", "deny", "ask"]
DECISIONS: tuple[Decision, ...] = ("allow", "deny", "ask")
MAX_POLICY_BYTES = 256 * 1024
MAX_RULES = 500


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A gated call, as a policy sees it. `prefix` is its grant prefix (`""`: not grantable),
    `grantable` the Session's verdict on it."""

    tool: str
    tool_input: Mapping[str, Any]
    tier: int
    prefix: str
    grantable: bool
    approval_id: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """A policy's answer with the rule that gave it (journaled in `approval_resolved.rule`)."""

    decision: Decision
    rule: str | None = None


PolicyResult = Decision | PolicyDecision | None
ApprovalPolicy = Callable[[ApprovalRequest], PolicyResult | Awaitable[PolicyResult]]
"""What `Session(approval_policy=…)` takes."""


class PolicyError(ValueError):
    """A policy file could not be used; the message names the file and the line."""


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """One rule of a TOML policy (`number` counts from 1 in the file)."""

    number: int
    decision: Decision
    tool: str = ANY_TOOL
    prefix: str | None = None
    min_tier: int = 1
    max_tier: int = 4
    note: str = ""

    def matches(self, request: ApprovalRequest) -> bool:
        """Whether this rule decides `request` (see the module docstring)."""
        if self.decision == "allow" and self.tool != request.tool:
            return False  # an allow names its tool exactly (it cannot be `*`)
        if not rule_covers_tool(self.tool, request.tool):  # deny and ask: read broadly
            return False
        if not self.min_tier <= request.tier <= self.max_tier:
            return False
        if self.decision == "allow" and request.tier > 3:
            return False
        if self.prefix is None:
            return True
        if self.decision == "allow":
            return request.grantable and request.prefix == self.prefix
        words = deny_words(self.prefix)
        return isinstance(words, tuple) and runs_prefix(request.tool_input, words)

    def describe(self, source: str) -> str:
        """How the journal names this rule: `ci.toml rule 2: shell `git push` → deny`."""
        what = self.tool if self.prefix is None else f"{self.tool} `{self.prefix}`"
        return f"{source} rule {self.number}: {what} → {self.decision}"


class TomlPolicy:
    """A policy read from a TOML file: its rules in order, the first match decides."""

    def __init__(self, rules: list[PolicyRule], source: str) -> None:
        self.rules = rules
        self.source = source

    def __call__(self, request: ApprovalRequest) -> PolicyDecision | None:
        for rule in self.rules:
            if rule.matches(request):
                return PolicyDecision(rule.decision, rule.describe(self.source))
        return None


_KEYS = {"tool": str, "prefix": str, "decision": str, "min_tier": int, "max_tier": int,
         "note": str}


def load_policy(path: str | Path) -> TomlPolicy:
    """Read a TOML policy. Raises `PolicyError` naming the file, the rule and the line."""
    path = Path(path)
    try:
        data = path.read_bytes()[: MAX_POLICY_BYTES + 1]
    except OSError as exc:
        raise PolicyError(f"--policy {path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyError(f"--policy {path}: larger than {MAX_POLICY_BYTES // 1024} KiB")
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PolicyError(f"--policy {path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"--policy {path}: {exc}") from None
    text = data.decode("utf-8")
    extra = sorted(set(raw) - {"rule"})
    if extra:
        raise PolicyError(f"--policy {path}: unknown setting {extra[0]!r} (rules are "
                          "[[rule]] tables)")
    tables = raw.get("rule", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise PolicyError(f"--policy {path}: rules are [[rule]] tables")
    if len(tables) > MAX_RULES:
        raise PolicyError(f"--policy {path}: more than {MAX_RULES} rules")
    starts = [n for n, line in enumerate(text.splitlines(), 1)
              if line.strip().replace(" ", "").startswith("[[rule]]")]
    rules = []
    for number, table in enumerate(tables, 1):
        line = starts[number - 1] if number <= len(starts) else 1
        try:
            rules.append(_rule(number, table))
        except ValueError as exc:
            raise PolicyError(f"--policy {path}: line {line}: rule {number}: {exc}") from None
    return TomlPolicy(rules, path.name)


def _rule(number: int, table: dict[str, Any]) -> PolicyRule:
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (known: {', '.join(_KEYS)})")
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, _KEYS[key]):
            raise ValueError(f"{key} must be {_KEYS[key].__name__}")
    decision = table.get("decision")
    if decision not in DECISIONS:
        raise ValueError("decision must be allow, deny or ask")
    tool = table.get("tool", ANY_TOOL)
    problem = tool_problem(tool, allow_any=True) or text_problem(table.get("note", ""),
                                                                 "note", 1_000)
    if problem:
        raise ValueError(problem)
    if decision == "allow" and tool == ANY_TOOL:
        raise ValueError('an allow rule names its tool (tool = "*" cannot allow everything)')
    prefix = table.get("prefix")
    if prefix is not None:
        words = deny_words(prefix)
        if isinstance(words, str):
            raise ValueError(words)
    min_tier, max_tier = table.get("min_tier", 1), table.get("max_tier",
                                                             3 if decision == "allow" else 4)
    if not (1 <= min_tier <= max_tier <= 4):
        raise ValueError("tiers are 1 to 4, min_tier <= max_tier")
    if decision == "allow" and max_tier > 3:
        raise ValueError("a policy never allows tier 4 (max_tier is at most 3 in an allow rule)")
    return PolicyRule(number, decision, tool, prefix, min_tier, max_tier, table.get("note", ""))
