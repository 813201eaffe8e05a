"""A task's `@` mentions reach the built-in engine's model as context: the first user message is
the task as written, then each file's text fenced and named, checked on the wire against a real
HTTP server on 127.0.0.1. A refused mention adds nothing and is journaled with its reason."""

from __future__ import annotations

from fakes.openai_fake.helpers import run_against
from fakes.openai_fake.server import Stream, chunks

FINISH = Stream(chunks("Done.", calls=[("finish", {"result": "all done"})]))


def _user_message(fake):
    [first] = [m for m in fake.requests[0]["messages"] if m["role"] == "user"][:1]
    return first["content"]


def test_the_files_text_follows_the_task_in_the_models_first_message(tmp_path):
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    (tmp_path / "data.bin").write_bytes(b"\0\1\2")
    task = "explain @app.py and @data.bin"
    session, fake = run_against(tmp_path, [FINISH], task=task)
    content = _user_message(fake)
    assert content.startswith(task + "\n\nThe files the user mentioned")
    assert "@app.py (25 bytes):\n```\ndef main():\n    return 1\n```" in content
    assert "\0" not in content and content.count("```") == 2  # one fence: app.py's
    [mentioned] = [e for e in session.history if e.type == "files_mentioned"]
    assert [(f.path, f.delivery) for f in mentioned.files] == [
        ("app.py", "context"), ("data.bin", "not_sent")]
    assert "not text" in mentioned.files[1].reason
    [start] = [e for e in session.history if e.type == "agent_start"]
    assert start.task == task  # the task is journaled as written; the files are not


def test_no_mention_no_context(tmp_path):
    session, fake = run_against(tmp_path, [FINISH], task="write to ada@example.com")
    assert _user_message(fake) == "write to ada@example.com"
    assert "files_mentioned" not in [e.type for e in session.history]
