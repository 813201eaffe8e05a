"""Sample payloads of every event type, and the families of types only an external agent emits
(what the demo never writes)."""

from __future__ import annotations

AGENT_DIALOGUE = {"question_asked", "question_answered", "commands_available", "prompt_note",
                  "files_mentioned"}
"""What only an external agent says (questions, commands, notes passed on), and the files a task
mentions (the demo's task mentions none): never in the demo."""
AGENT_SESSION_TYPES = {"agent_config", "session_info", "agent_notice", "history_message",
                       "history_tool", "agent_plan", "agent_ready"}
"""Types only an engine driving an external agent (ACP) emits about its session."""
MODE_TYPES = {"mode_changed"}
"""Types only a Session started in (or switched to) a permission mode other than the default
writes: not in a bare demo Session."""
CHECKPOINT_TYPES = {"checkpoint_taken", "workspace_rewound"}
"""Types only a Session given `checkpoints=` (or a rewind) writes: not in a bare demo Session."""

MINIMAL = {  # the fewest fields each type takes
    "agent_start": {"task": "t", "engine": "e"},
    "agent_end": {"status": "completed"},
    "turn_start": {"turn": 1},
    "turn_end": {"turn": 1},
    "phase_changed": {"phase": "edit"},
    "declaration_required": {"reason": "declare first"},
    "model_decision": {"action": "finish"},
    "model_update": {"text": "hi"},
    "tool_start": {"call_id": "c", "tool": "shell"},
    "tool_end": {"call_id": "c", "tool": "shell", "ok": True},
    "approval_requested": {"approval_id": "a", "tool": "shell", "reason": "r"},
    "approval_resolved": {"approval_id": "a", "tool": "shell", "allowed": True, "via": "human"},
    "decision_error": {"error": "bad"},
    "model_usage": {"input_tokens": 1, "output_tokens": 2},
    "verification_plan_frozen": {"checks": [{"id": "1", "name": "tests", "command": "pytest"}]},
    "verification_start": {"check_id": "1", "name": "tests"},
    "verification_end": {"check_id": "1", "name": "tests", "passed": True},
    "cancellation_observed": {"reason": "user"},
    "task_escalated": {"reason": "needs edits", "target": "edit"},
    "model_retry": {"attempt": 1, "max_attempts": 4, "delay_s": 1.0, "error": "429"},
    "question_asked": {"question_id": "q", "message": "which?",
                       "fields": [{"name": "x", "kind": "text"}]},
    "question_answered": {"question_id": "q", "action": "decline"},
    "commands_available": {"commands": [{"name": "review"}]},
    "prompt_note": {"text": "use the staging database"},
    "agent_config": {"options": [{"id": "model", "value": "m", "choices": [{"value": "m"}]}]},
    "session_info": {"title": "Fix the tests"},
    "agent_notice": {"text": "the agent restarted; its earlier conversation is gone"},
    "history_message": {"role": "user", "text": "earlier"},
    "history_tool": {"call_id": "c", "tool": "read", "status": "completed"},
    "checkpoint_taken": {"turn": 1, "checkpoint": "18c2f0a1b2c-0a1b2c3d"},
    "mode_changed": {"mode": "plan", "previous": "accept-edits", "source": "human"},
    "workspace_rewound": {"to_turn": 1, "checkpoint": "18c2f0a1b2c-0a1b2c3d",
                          "before": "18c2f0a1b2d-0a1b2c3e", "after": "18c2f0a1b2e-0a1b2c3f"},
    "agent_plan": {"entries": [{"content": "read the file"}]},
    "files_mentioned": {"files": [{"path": "src/app.py", "size": 120, "delivery": "link"}]},
    "agent_ready": {},
}

