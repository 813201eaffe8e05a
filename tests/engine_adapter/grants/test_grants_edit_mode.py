"""The gate's rule for plain edits (issue 27 §3): accept-edits and auto allow an edit tool's
tier-2 call (`via="mode"`, the rule naming why), ask and plan do not, and nothing else is
widened: a tier-3 edit (an ACP agent's own edit permission, a file asked about), a tier-2 call
of another tool, and a policy's ask or deny still win."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine_adapter import ApprovalRequest
from engine_adapter.grants import ApprovalGate
from engine_adapter.grants.modes import edit_runs
from engine_adapter.shell import grantability

EDIT_INPUT = {"path": "a.txt", "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"}


def _rule(mode: str, tool: str = "edit", tier: int = 2, policy: Any = None) -> Any:
    gate = ApprovalGate([], policy=policy)
    gate.mode = mode  # type: ignore[assignment]
    verdict = grantability(tool, EDIT_INPUT, tier)
    request = ApprovalRequest(tool, EDIT_INPUT, tier, verdict.prefix, verdict.grantable)
    return asyncio.run(gate.rule(request, verdict))


@pytest.mark.parametrize(("mode", "label"), [("accept-edits", "accept edits"), ("auto", "auto")])
def test_the_edit_modes_allow_a_plain_edit_and_say_why(mode: str, label: str) -> None:
    ruling = _rule(mode)
    assert ruling.allowed and ruling.via == "mode"
    assert ruling.rule == f"{label} mode: an edit inside the workspace"
    assert edit_runs(mode, "write_file", 2)


def test_ask_asks_and_plan_denies() -> None:
    assert _rule("ask") is None
    plan = _rule("plan")
    assert not plan.allowed and plan.via == "mode" and "plan mode" in plan.rule


@pytest.mark.parametrize(("tool", "tier"), [("edit", 3), ("edit", 4), ("edit", 1),
                                            ("fetch", 2), ("switch_mode", 2), ("delete", 2),
                                            ("shell", 2)])
def test_nothing_but_a_tier_2_edit_is_widened(tool: str, tier: int) -> None:
    assert _rule("accept-edits", tool, tier) is None
    assert not edit_runs("auto", tool, tier)


def test_a_policys_ask_or_deny_still_wins() -> None:
    assert _rule("accept-edits", policy=lambda request: "ask") is None
    denied = _rule("accept-edits", policy=lambda request: "deny")
    assert not denied.allowed and denied.via == "policy"
