"""A run's grants over the wire: what the host's `grants` and `revoke_grant` answer, and how a
client reads the answer back into the `GrantEntry` lines the grants screen shows.

The host lists the entries its run's `ApprovalGate` holds (the same the embedded screen
lists) and removes one by id, only if the id still names what the client was shown (a session
grant's id is its place in the list, which moves when another goes). Nothing here adds a
grant: grants are made only by answering an approval. Both functions block (a saved grant's
file is read or written): the host calls them in a thread.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engine_adapter.grants import ApprovalGate, GrantEntry, GrantFileError

__all__ = ["LIST_OP", "MAX_ID", "REVOKE_OP", "entry_from_wire", "entry_to_wire", "listing",
           "revoke_listed"]

LIST_OP = "grants"
"""The request that lists a run's grants (`wire.OPS`)."""
REVOKE_OP = "revoke_grant"
"""The request that removes one (`wire.OPS`)."""

MAX_ID = 128
"""The longest grant id a request may carry (saved ids and `session-N` are far shorter)."""

_SCOPES = ("session", "project", "user")
_KINDS = ("allow", "deny")


def entry_to_wire(entry: GrantEntry) -> dict[str, Any]:
    """One entry as JSON (its times in ISO 8601)."""
    return {"key": entry.key, "scope": entry.scope, "kind": entry.kind, "tool": entry.tool,
            "prefix": entry.prefix, "max_tier": entry.max_tier,
            "created": entry.created.isoformat() if entry.created else None,
            "last_used": entry.last_used.isoformat() if entry.last_used else None,
            "note": entry.note}


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def entry_from_wire(data: Any) -> GrantEntry | None:
    """An entry the host listed, or None if it is not one (the screen shows what parses)."""
    if not isinstance(data, dict):
        return None
    key, scope, kind = data.get("key"), data.get("scope"), data.get("kind")
    tool, prefix, tier = data.get("tool"), data.get("prefix"), data.get("max_tier")
    if not (isinstance(key, str) and scope in _SCOPES and kind in _KINDS
            and isinstance(tool, str) and isinstance(prefix, str)):
        return None
    if isinstance(tier, bool) or not isinstance(tier, int | None):
        return None
    note = data.get("note")
    return GrantEntry(key, scope, kind, tool, prefix, tier, _when(data.get("created")),
                      _when(data.get("last_used")), note if isinstance(note, str) else "")


def _entries(gate: ApprovalGate) -> list[GrantEntry]:
    store = gate.store
    if store is not None and store.stale():  # (`cockpit grants deny` wrote since)
        store.refresh()
    return gate.entries()


def listing(gate: ApprovalGate) -> dict[str, Any]:
    """The `grants` reply: the entries in force, where saved ones live, and the problems."""
    store = gate.store
    where = None if store is None else {"directory": str(store.directory),
                                        "project": store.project}
    problems = list(gate.problems) + (list(store.problems) if store is not None else [])
    return {"entries": [entry_to_wire(e) for e in _entries(gate)], "store": where,
            "problems": problems}


def _field(message: dict[str, Any], name: str) -> str:
    value = message.get(name)
    if not isinstance(value, str) or not value or len(value) > MAX_ID * 64:
        raise ValueError(f"revoke_grant needs {name!r}: the listed grant's, as a string")
    return value


def revoke_listed(gate: ApprovalGate, message: dict[str, Any]) -> dict[str, Any]:
    """The `revoke_grant` reply: the entry `grant_id` names removed, if it still is the one
    listed (same kind, tool and prefix); `ValueError` or `GrantFileError` saying why not."""
    grant_id = message.get("grant_id")
    if not isinstance(grant_id, str) or not grant_id or len(grant_id) > MAX_ID \
            or not grant_id.isprintable():
        raise ValueError(f"revoke_grant needs 'grant_id': a grant's id as `grants` lists it "
                         f"(at most {MAX_ID} printable characters)")
    kind, tool, prefix = _field(message, "kind"), _field(message, "tool"), \
        message.get("prefix")
    if not isinstance(prefix, str):
        raise ValueError("revoke_grant needs 'prefix': the listed grant's, as a string")
    found = next((e for e in _entries(gate) if e.key == grant_id), None)
    if found is None:
        raise GrantFileError(f"no grant {grant_id!r} is in force in this run (it was revoked "
                             "already?): list the grants again")
    if (found.kind, found.tool, found.prefix) != (kind, tool, prefix):
        raise GrantFileError(f"the grant {grant_id!r} is no longer the one listed: list the "
                             "grants again")
    return {"revoked": entry_to_wire(gate.revoke(found))}
