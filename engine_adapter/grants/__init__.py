"""Grants that last, deny rules, and approval policies: what may answer a call before a human.

- `records`: the scopes (`session`, `project`, `user`), `SavedGrant`, `DenyRule`, and the checks
  that hold a saved grant to the rules a session grant is held to.
- `grant_file`: one TOML file, read with clear errors, written atomically under a lock.
- `store`: `GrantStore`, the user's and one project's files, kept outside the workspace.
- `deny`: whether a call runs a denied program prefix (read broadly, where grants read narrowly).
- `policy`: `ApprovalPolicy` callables and the TOML policy (`load_policy`).
- `gate`: `ApprovalGate`, the order in which all of them answer (the Session's one entry point).

How the views word who decided a call is `engine_adapter.view.describe.verdict_text`.
"""

from engine_adapter.grants.gate import ApprovalGate, GrantEntry, Ruling
from engine_adapter.grants.grant_file import GrantFileError
from engine_adapter.grants.policy import (
    ApprovalPolicy,
    ApprovalRequest,
    PolicyDecision,
    PolicyError,
    PolicyRule,
    TomlPolicy,
    load_policy,
)
from engine_adapter.grants.records import SAVED_SCOPES, SCOPES, DenyRule, SavedGrant, Scope
from engine_adapter.grants.store import GrantStore, project_identity

__all__ = [
    "SAVED_SCOPES",
    "SCOPES",
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRequest",
    "DenyRule",
    "GrantEntry",
    "GrantFileError",
    "GrantStore",
    "PolicyDecision",
    "PolicyError",
    "PolicyRule",
    "Ruling",
    "SavedGrant",
    "Scope",
    "TomlPolicy",
    "load_policy",
    "project_identity",
]
