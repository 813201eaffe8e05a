"""The built-in loop's verification plan: the tools that declare and alter it, freezing it, and
running each of its checks for real at the end of the task."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from engine_adapter.context import RunContext
from engine_adapter.engines.builtin.calls import Call, ms_since
from engine_adapter.engines.builtin.models import ToolResult
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

__all__ = ["VerificationSteps"]


class VerificationSteps:
    """The verification plan's part of a run (mixed into the loop's `_Run`; see the module
    docstring). It works on the run's state and calls, declared below."""

    plan: list[VerificationCheck] | None
    workspace: Workspace
    sandbox: Sandbox
    ctx: RunContext
    engine: Any  # the `BuiltinRunner`: its `check_timeout` and `output_cap`
    _refuse: Callable[[Call, str], Awaitable[ToolResult]]
    _ask: Callable[..., Awaitable[bool]]
    _run_tool: Callable[..., Awaitable[ToolResult]]

    async def _declare_verification(self, call: Call) -> ToolResult:
        if self.plan is not None:
            return await self._refuse(call, "the verification plan is frozen; change it with "
                                      "alter_verification")
        try:
            checks = parse_checks(call.input["checks"], self.workspace)
        except ToolError as exc:
            return await self._refuse(call, str(exc))
        if not await self._ask(call, "verification plan, run for real at the end: "
                               + _describe_checks(checks), commands=True):
            return call.result("denied", error="denied")
        return await self._run_tool(call, lambda: self._freeze(checks))

    async def _alter_verification(self, call: Call) -> ToolResult:
        if self.plan is None:
            return await self._refuse(call, "there is no plan to alter; use "
                                      "declare_verification")
        remove, add = call.input.get("remove") or [], call.input.get("add") or []
        known = {check.id for check in self.plan}
        unknown = [r for r in remove if r not in known]
        if unknown or not (remove or add):
            return await self._refuse(call, f"no check with id {unknown[0]!r}" if unknown else
                                      "give checks to 'add' and/or check ids to 'remove'")
        kept = [check for check in self.plan if check.id not in remove]
        try:
            added = parse_checks(add, self.workspace, taken=[c.id for c in kept]) if add else []
        except ToolError as exc:
            return await self._refuse(call, str(exc))
        if not kept + added:
            return await self._refuse(call, "the plan must keep at least one check")
        change = "; ".join([*(f"add {_describe_checks([c])}" for c in added),
                            *(f"remove {r}" for r in remove)])
        if not await self._ask(call, f"change the verification plan ({change}): "
                               f"{call.input['reason']}", commands=True):
            return call.result("denied", error="denied")
        return await self._run_tool(call, lambda: self._freeze(kept + added))

    async def _freeze(self, checks: list[VerificationCheck]) -> str:
        self.plan = checks
        self.ctx.emit(VerificationPlanFrozen(checks=checks))
        return "verification plan frozen: " + _describe_checks(checks)

    async def _verify(self, check: VerificationCheck) -> tuple[bool, str]:
        sandbox = self.sandbox
        self.ctx.emit(VerificationStart(check_id=check.id, name=check.name,
                                         sandbox=sandbox.state))
        started = asyncio.get_running_loop().time()
        blocked = None
        try:
            done = await run_process(shell_argv(check.command or "true"),
                                     cwd=self.workspace.root, timeout=self.engine.check_timeout,
                                     output_cap=self.engine.output_cap, cancel_token=self.ctx.token,
                                     sandbox=sandbox)
            passed, output, detail = done.ok, done.text(), done.describe()
            blocked = done.blocked
        except OSError as exc:
            passed, output, detail = False, f"cannot run the check: {exc}", "not run"
        if blocked:
            output = f"{output}\n[blocked by sandbox: {blocked}]"
        self.ctx.emit(VerificationEnd(check_id=check.id, name=check.name, passed=passed,
                                       output=cap_text(output, self.engine.output_cap),
                                       duration_ms=ms_since(started), sandbox=sandbox.state,
                                       sandbox_blocked=blocked))
        return passed, detail


def _describe_checks(checks: list[VerificationCheck]) -> str:
    return "; ".join(f"{c.name} ({c.command})" for c in checks)
