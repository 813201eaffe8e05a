"""Opening an agent's link in the human's web browser, only when the human pressed the key.

`open_in_browser` runs in a worker thread (a browser may take a while to start, and must never
hold up the event loop). It refuses what `engine_adapter.events.link_refusal` refuses, and a
browser that runs in this terminal (lynx, w3m, …: Python's `webbrowser` falls back to one
without a display, and it would fight the cockpit for the screen).
"""

from __future__ import annotations

import os
import webbrowser

from engine_adapter.events import link_refusal

__all__ = ["TERMINAL_BROWSERS", "open_in_browser"]

TERMINAL_BROWSERS = frozenset({"www-browser", "links", "links2", "elinks", "lynx", "w3m"})
"""Browsers that draw in the terminal they are started from."""


def open_in_browser(url: str) -> str | None:
    """Open `url` in a new browser tab; None when the browser took it, else why not (a
    sentence the form shows). Blocking: call it off the event loop."""
    refusal = link_refusal(url)
    if refusal is not None:
        return refusal
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return "no web browser was found here: open the link yourself"
    name = os.path.basename(getattr(browser, "name", "") or "")
    # A foreground GenericBrowser (not a BackgroundBrowser) takes over the terminal it runs in.
    if name in TERMINAL_BROWSERS and not isinstance(browser, webbrowser.BackgroundBrowser):
        return f"the only browser here ({name}) runs in this terminal: open the link yourself"
    try:
        opened = browser.open(url, new=2)
    except (OSError, webbrowser.Error) as exc:
        return f"the browser could not be started ({exc}): open the link yourself"
    return None if opened else "the browser did not take the link: open it yourself"
