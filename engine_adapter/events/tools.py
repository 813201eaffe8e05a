"""The events of a tool call and its approval: start, end, approval asked and decided."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from engine_adapter.events.base import BaseEvent


class ToolStart(BaseEvent):
    """A tool call began running. `call_id` joins it to its `ToolEnd` (and approval, if any).

    Optional, from engines that know them: `source` ("client": the cockpit itself ran it for an
    external agent, a file read or write or a command in a terminal; "agent": the agent ran it
    and reports it), `terminal_id` (the terminal a command runs in) and `permitted_by` (what let
    it run without asking again, e.g. "agent permission": an approval the agent asked for
    earlier in the turn covers it). A command's `sandbox` state (as on `AgentStart`, or
    "bypassed": approved to run outside it) and `sandbox_network`. `agent_sandbox`: for an
    external agent's run, where the agent process itself runs (a sandbox state, as on
    `AgentStart`): what the agent runs of its own is contained only when it is sandboxed.

    The same call may start more than once: an agent that announces a call with an empty input
    and sends it later (`tool_call_update`), or changes it, gets a `tool_start` for each input,
    with `revision` 1, 2, … (None: the first); views show the row's newest input. When the input
    changed after the call was approved, `approved_input` is the input the approval was given
    for (the new one is `tool_input`): both are journaled, and the row says so.
    """

    type: Literal["tool_start"] = "tool_start"
    call_id: str
    tool: str
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tier: int = 1
    title: str | None = None
    source: str | None = None
    terminal_id: str | None = None
    permitted_by: str | None = None
    sandbox: str | None = None
    sandbox_network: bool | None = None
    agent_sandbox: str | None = None
    revision: int | None = None
    approved_input: dict[str, Any] | None = None


class ToolEnd(BaseEvent):
    """A tool call finished, well or badly. Optional: `title` (the call's title as it stood at
    the end, when the agent renamed it while it ran), a command's `exit_code`, its `sandbox`
    state (as on its `ToolStart`) and what the sandbox stopped (`sandbox_blocked`: "write to
    /etc/x", "network"), and `diff`: the unified diff of the files the call changed when the
    engine knows it (an agent's edit reported with diff content), made off the event loop and
    capped by `engine_adapter.files.diffs`; views show it, never compute one."""

    type: Literal["tool_end"] = "tool_end"
    call_id: str
    tool: str
    ok: bool
    output: str = ""
    error: str | None = None
    duration_ms: float | None = None
    title: str | None = None
    exit_code: int | None = None
    diff: str | None = None
    sandbox: str | None = None
    sandbox_blocked: str | None = None


class ApprovalRequested(BaseEvent):
    """A human must decide on a gated call. `prefix` is what `[a] always` would grant;
    `grantable` and `ungrantable_reason` are the Session's verdict on whether it may
    (`None` in journals written before the verdict travelled in the event)."""

    type: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    tool: str
    reason: str
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tier: int = 3
    prefix: str = ""
    grantable: bool | None = None
    ungrantable_reason: str | None = None

    @property
    def grant_verdict(self) -> tuple[bool, str | None]:
        """`(grantable, why not)` as the views show it: the Session's verdict, or, for an old
        journal without one, grantable iff the prefix is not blank and the tier below 4 (what
        the Session then stored; no reason known)."""
        if self.grantable is None:
            return bool(self.prefix.strip()) and self.tier < 4, None
        return self.grantable, None if self.grantable else self.ungrantable_reason


class ApprovalResolved(BaseEvent):
    """A gated call was decided: by a human, a standing grant, a deny rule, an approval policy,
    or automatically (the unattended rules, a timeout, a cancel).

    Optional, when known: `scope` and `grant_id` — the grant or deny rule that decided (`via`
    "grant" / "deny-rule"), or the grant a human's `[a] always` kept (`remember`); `rule` — that
    grant or rule in words, or the policy rule that decided; `error` — why the policy failed
    (a deny); for `via` "mode", `rule` says which permission mode decided and why ("plan mode
    is read-only"). A decision made without asking (no `approval_requested` before it) also carries
    the call's `tool_input` and `tier`, so the views show what was decided.
    `reason`: the human's own words with the answer ("deny: use the staging database"), which
    the engine passes on to the agent; `None` when none was given. `edited`: the human
    accepted an edit in their own version (changed in `$EDITOR`): what is written differs from
    what the agent proposed, and the agent is told.
    """

    type: Literal["approval_resolved"] = "approval_resolved"
    approval_id: str
    tool: str
    allowed: bool
    via: Literal["human", "grant", "auto", "deny-rule", "policy", "mode"]
    remember: bool = False
    scope: Literal["session", "project", "user"] | None = None
    grant_id: str | None = None
    rule: str | None = None
    error: str | None = None
    tool_input: dict[str, Any] | None = None
    tier: int | None = None
    reason: str | None = None
    edited: bool | None = None
