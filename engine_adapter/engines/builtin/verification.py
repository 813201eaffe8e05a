"""The built-in loop's verification plan: what the calls that declare and alter it propose,
freezing it, and running each of its checks for real at the end of the task.

`VerificationSteps` is a collaborator the run owns: it holds the plan and answers the run's
questions about it; the run itself gates and runs the calls (asking, refusing, showing them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, NamedTuple

from engine_adapter.context import RunContext
from engine_adapter.engines.builtin.calls import ms_since
from engine_adapter.engines.builtin.process import run_process, shell_argv
from engine_adapter.engines.builtin.tools import ToolError, cap_text, parse_checks
from engine_adapter.engines.builtin.workspace import Workspace
from engine_adapter.events import (
    VerificationCheck,
    VerificationEnd,
    VerificationPlanFrozen,
    VerificationStart,
)
from engine_adapter.sandbox import Sandbox

__all__ = ["PlanChange", "VerificationSteps"]


class PlanChange(NamedTuple):
    """A plan a call proposes: the checks it would freeze, and what the human is asked."""

    checks: list[VerificationCheck]
    question: str


class VerificationSteps:
    """One run's verification plan (`plan`: None until declared) and its checks.

    Args:
        ctx: The run's context (its events, its cancel token).
        workspace: Where the checks run, and the paths they name are read against.
        sandbox: What the checks run in.
        check_timeout: Seconds a check may run.
        output_cap: Characters of a check's output kept.
    """

    def __init__(self, ctx: RunContext, workspace: Workspace, sandbox: Sandbox, *,
                 check_timeout: float, output_cap: int) -> None:
        self.ctx = ctx
        self.workspace = workspace
        self.sandbox = sandbox
        self.check_timeout = check_timeout
        self.output_cap = output_cap
        self.plan: list[VerificationCheck] | None = None

    def declaration(self, tool_input: Mapping[str, Any]) -> PlanChange:
        """The plan a `declare_verification` call proposes; `ToolError` (why the call is
        refused) when it cannot be declared."""
        if self.plan is not None:
            raise ToolError("the verification plan is frozen; change it with "
                            "alter_verification")
        checks = parse_checks(tool_input["checks"], self.workspace)
        return PlanChange(checks, "verification plan, run for real at the end: "
                          + _describe_checks(checks))

    def alteration(self, tool_input: Mapping[str, Any]) -> PlanChange:
        """The plan an `alter_verification` call proposes; `ToolError` (why the call is
        refused) when the change is not one the plan can take."""
        if self.plan is None:
            raise ToolError("there is no plan to alter; use declare_verification")
        remove, add = tool_input.get("remove") or [], tool_input.get("add") or []
        known = {check.id for check in self.plan}
        unknown = [r for r in remove if r not in known]
        if unknown or not (remove or add):
            raise ToolError(f"no check with id {unknown[0]!r}" if unknown else
                            "give checks to 'add' and/or check ids to 'remove'")
        kept = [check for check in self.plan if check.id not in remove]
        added = parse_checks(add, self.workspace, taken=[c.id for c in kept]) if add else []
        if not kept + added:
            raise ToolError("the plan must keep at least one check")
        change = "; ".join([*(f"add {_describe_checks([c])}" for c in added),
                            *(f"remove {r}" for r in remove)])
        return PlanChange(kept + added, f"change the verification plan ({change}): "
                          f"{tool_input['reason']}")

    async def freeze(self, checks: list[VerificationCheck]) -> str:
        """Make `checks` the plan (announced); what the model is told."""
        self.plan = checks
        self.ctx.emit(VerificationPlanFrozen(checks=checks))
        return "verification plan frozen: " + _describe_checks(checks)

    async def verify(self, check: VerificationCheck) -> tuple[bool, str]:
        """Run `check` for real (announced, start and end); whether it passed, and how it
        ended in a few words."""
        sandbox = self.sandbox
        self.ctx.emit(VerificationStart(check_id=check.id, name=check.name,
                                         sandbox=sandbox.state))
        started = asyncio.get_running_loop().time()
        blocked = None
        try:
            done = await run_process(shell_argv(check.command or "true"),
                                     cwd=self.workspace.root, timeout=self.check_timeout,
                                     output_cap=self.output_cap, cancel_token=self.ctx.token,
                                     sandbox=sandbox)
            passed, output, detail = done.ok, done.text(), done.describe()
            blocked = done.blocked
        except OSError as exc:
            passed, output, detail = False, f"cannot run the check: {exc}", "not run"
        if blocked:
            output = f"{output}\n[blocked by sandbox: {blocked}]"
        self.ctx.emit(VerificationEnd(check_id=check.id, name=check.name, passed=passed,
                                       output=cap_text(output, self.output_cap),
                                       duration_ms=ms_since(started), sandbox=sandbox.state,
                                       sandbox_blocked=blocked))
        return passed, detail


def _describe_checks(checks: list[VerificationCheck]) -> str:
    return "; ".join(f"{c.name} ({c.command})" for c in checks)
