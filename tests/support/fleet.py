"""The fleet view in tests: what its screen shows, as text, and a wait on its board."""

from __future__ import annotations

from typing import Any


def screen_text(app: Any) -> str:
    """Every row of the app's screen as plain text (what the terminal would show)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def select_ask(pilot: Any, app: Any, key: str) -> None:
    """Move the inbox's cursor to the ask `key` with the arrow keys, as a human does, and wait
    until its keys are armed."""
    inbox = app.query_one("#inbox")
    inbox.focus()
    await pilot.pause()
    for _ in range(2 * len(app.board.inbox) + 1):
        at = inbox.cursor_row
        keys = [ask.key for ask in app.board.inbox]
        if key not in keys:
            raise AssertionError(f"{key!r} is not in the inbox")
        if keys[at] == key:
            break
        await pilot.press("down" if keys.index(key) > at else "up")
    else:
        raise AssertionError("the cursor did not reach the ask")
    from support.pilot import until_shown

    await until_shown(pilot, lambda: app.arming.target().approval_id == key)
