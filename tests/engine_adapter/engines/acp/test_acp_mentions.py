"""A task's `@` mentions reach an ACP agent as the spec's content blocks, checked at the real test
agent: an embedded `resource` with the file's text when the agent says
`promptCapabilities.embeddedContext`, else a `resource_link` to the file (the baseline every
agent takes). A refused mention (a path out of the workspace) sends nothing and is journaled with
its reason; the task's text stays the last text block, as the human wrote it."""

from __future__ import annotations

from fakes.acp_agent.helpers import agent_argv, agent_log, drive
from support.event_loop import run

from engine_adapter.engines.acp import AcpRunner
from engine_adapter.view import fold_events

TASK = 'hello @src/app.py @"my notes.md" @../secret.txt'


def _run(tmp_path, *flags):
    log = tmp_path / "agent.jsonl"
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    (workspace / "my notes.md").write_text("# notes\n")
    (tmp_path / "secret.txt").write_text("do not send")

    async def main():
        runner = AcpRunner(agent_argv("--log", log, *flags), cwd=workspace)
        try:
            return await drive(runner, TASK, tmp_path / "run.jsonl")
        finally:
            await runner.close()

    state, events = run(main())
    [prompt] = [e for e in agent_log(log) if e["event"] == "prompt"]
    [mentioned] = [e for e in events if e.type == "files_mentioned"]
    return state, events, prompt, mentioned, workspace.resolve()


def test_embedded_resources_when_the_agent_takes_embedded_context(tmp_path):
    state, _, prompt, mentioned, ws = _run(tmp_path, "--embedded-context")
    assert state.status == "completed"
    assert prompt["text"] == TASK and prompt["blocks"] == [TASK]
    assert prompt["resources"] == [
        {"type": "resource", "uri": (ws / "src" / "app.py").as_uri(),
         "mime_type": "text/x-python", "text": "print('hi')\n"},
        {"type": "resource", "uri": (ws / "my notes.md").as_uri(),
         "mime_type": "text/markdown", "text": "# notes\n"}]
    assert [(f.path, f.size, f.delivery) for f in mentioned.files] == [
        ("src/app.py", 12, "embedded"), ("my notes.md", 8, "embedded"),
        ("../secret.txt", None, "not_sent")]
    assert "outside the workspace" in mentioned.files[2].reason
    assert "do not send" not in str(prompt)


def test_resource_links_when_it_does_not(tmp_path):
    _, events, prompt, mentioned, ws = _run(tmp_path)
    assert prompt["resources"] == [
        {"type": "resource_link", "uri": (ws / "src" / "app.py").as_uri(), "name": "app.py",
         "title": "src/app.py", "size": 12, "mime_type": "text/x-python"},
        {"type": "resource_link", "uri": (ws / "my notes.md").as_uri(), "name": "my notes.md",
         "title": "my notes.md", "size": 8, "mime_type": "text/markdown"}]
    assert [f.delivery for f in mentioned.files] == ["link", "link", "not_sent"]
    # journaled before the turn, and shown under the task in the transcript (live and replay)
    types = [e.type for e in events]
    assert types.index("files_mentioned") < types.index("turn_start")
    view = fold_events(events)
    [row] = [item for item in view.items if item.kind == "mentions"]
    assert row.text.startswith("@ files sent with the task: @src/app.py (12 B, as a link)")
    assert "not sent: @../secret.txt: ../secret.txt is outside the workspace" in row.text
    assert row.level == "warning"


def test_a_task_without_mentions_sends_its_text_alone(tmp_path):
    log = tmp_path / "agent.jsonl"

    async def main():
        runner = AcpRunner(agent_argv("--log", log), cwd=tmp_path)
        try:
            return await drive(runner, "hello ada@example.com", tmp_path / "run.jsonl")
        finally:
            await runner.close()

    _, events = run(main())
    [prompt] = [e for e in agent_log(log) if e["event"] == "prompt"]
    assert "resources" not in prompt
    assert "files_mentioned" not in [e.type for e in events]


def test_replay_shows_the_same_row_from_the_journal(tmp_path, monkeypatch):
    from support.replay_app import text_at_end

    from cockpit.widgets import Transcript

    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    _run(tmp_path)
    shown = text_at_end(tmp_path / "run.jsonl", Transcript, size=(160, 30),
                        until=lambda text: "files sent with the task" in text)
    assert "@ files sent with the task: @src/app.py (12 B, as a link) · @my notes.md (8 B, as" \
        in shown
