"""Driving the replay viewer (Pilot): waiting for what it shows, and comparing it with the fold."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from engine_adapter.view import RunFold
from support.journals import summary


def opened(app) -> bool:
    screen = app.replay_screen
    return screen is not None and screen.complete and app.position_shown >= 0


def shown_equals_fold(app, events, cursor: int) -> bool:
    screen = app.replay_screen
    return summary(screen.view) == summary(RunFold().apply_all(events[:cursor + 1]))



def text_at_end(path, widget: type, *, size: tuple[int, int],
                until: Callable[[str], bool]) -> str:
    """Open the viewer on `path`, go to the last event, and return the text of its `widget`
    (a line-API widget's rendered lines, else its rendered text) once `until(text)` holds."""
    from textual.widget import Widget

    from cockpit.replay import ReplayApp
    from support.pilot import until_shown

    def text(shown: Widget) -> str:
        if hasattr(shown, "render_line"):
            return "\n".join(shown.render_line(y).text for y in range(shown.size.height))
        rendered = shown.render()
        return rendered.plain if hasattr(rendered, "plain") else str(rendered)

    async def main() -> str:
        viewer = ReplayApp(path, remember_theme=False)
        async with viewer.run_test(size=size) as pilot:
            await until_shown(pilot, lambda: opened(viewer))
            await pilot.press("end")
            found = viewer.replay_screen.query_one(widget)
            await until_shown(pilot, lambda: until(text(found)))
            return text(found)

    return asyncio.run(main())
