"""`after_next_frame`: run a callback once the frame being asked for is drawn (issue 29)."""

from __future__ import annotations

from collections.abc import Callable

from textual.dom import DOMNode

__all__ = ["after_next_frame"]


def after_next_frame(node: DOMNode, callback: Callable[[], object]) -> None:
    """Call `callback` once the next frame is drawn. Through `call_after_refresh` twice: a
    screen with nothing to repaint yet runs those callbacks at once, and the repaint a key's
    answer asked for may not have reached it yet (the approval bar closing on `y` is a layout
    still queued as a message): the second waits for that frame."""
    node.call_after_refresh(node.call_after_refresh, callback)
