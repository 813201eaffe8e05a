"""The built-in tools as Chat Completions function tools: JSON schemas generated from each
tool's `ToolSpec` (its name, description, required and optional fields and their types), plus
`finish`, which ends the task.

The `ToolSpec` is the one source of truth; the only detail it cannot express, what a list holds,
is added here by field name (`_ITEMS`): a list field not named there accepts any items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine_adapter.engines.builtin.models.base import ToolSpec

__all__ = ["FINISH", "function_tools", "json_type"]

FINISH = "finish"
"""The function that ends the task (a decision, not a tool of the engine)."""

_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array",
          dict: "object"}

_CHECK = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "what the check proves, in a few words"},
        "command": {"type": "string",
                    "description": "a shell command that exits 0 when the check passes"},
        "id": {"type": "string", "description": "optional short id (default: from the name)"},
    },
    "required": ["name", "command"],
}
_ITEMS: dict[str, dict[str, Any]] = {
    "argv": {"type": "string"},
    "remove": {"type": "string"},
    "checks": _CHECK,
    "add": _CHECK,
}

_FINISH_TOOL = {
    "type": "function",
    "function": {
        "name": FINISH,
        "description": "End the task: say what was done. The engine then runs the verification "
                       "plan for real. Call it alone, never beside other calls.",
        "parameters": {
            "type": "object",
            "properties": {
                "result": {"type": "string", "description": "what was done, in words"},
                "success": {"type": "boolean",
                            "description": "false if the task could not be done (default true)"},
            },
            "required": ["result"],
        },
    },
}


def json_type(kind: type | tuple[type, ...]) -> dict[str, Any]:
    """The JSON schema of a `ToolSpec` field type (a tuple of types is any of them)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = [_TYPES[k] for k in kinds if k in _TYPES]
    if set(names) == {"integer", "number"}:
        names = ["number"]  # every integer is a number: one type, which more servers accept
    if not names:
        return {}
    return {"type": names[0]} if len(names) == 1 else {"type": names}


def _parameters(spec: ToolSpec) -> dict[str, Any]:
    fields: Mapping[str, type | tuple[type, ...]] = {**spec.required, **spec.optional}
    properties: dict[str, Any] = {}
    for name, kind in fields.items():
        schema = json_type(kind)
        if schema.get("type") == "array" and name in _ITEMS:
            schema["items"] = _ITEMS[name]
        properties[name] = schema
    return {"type": "object", "properties": properties, "required": list(spec.required)}


def function_tools(specs: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """The `tools` of a Chat Completions request: each spec as a function, then `finish`."""
    tools = [{"type": "function", "function": {
        "name": spec.name, "description": spec.description, "parameters": _parameters(spec)}}
        for spec in specs]
    return [*tools, _FINISH_TOOL]
