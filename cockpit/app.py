"""`CockpitApp`: the live cockpit over a `Session` — watch the run, steer it by keypress.

The one-way flow: the session's events are folded once (`RunFold`) by a `FramePump`, which hands
`RunDisplay` what changed at most once a frame. Keys go back only through
`Session.resolve_approval` and `Session.cancel`. The widgets never see the Session, so the
replay viewer reuses `RunDisplay` as it is; what is live-only lives here: the approval keys,
cancel, quit, the end-of-task panel with an input for the next task, and the raw-event
inspector's lookup into `Session.history`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Keymap
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import Worker

from engine_adapter import Session
from engine_adapter.fold import APPROVALS, RUN, Item, RunFold, RunView, ToolCallItem

from .config import load_config, save_theme
from .keys import bindings
from .runs import aclose_factory
from .screens import HelpScreen, PagerScreen, QuitScreen
from .themes import DEFAULT_THEME, VARIABLE_DEFAULTS, load_themes
from .widgets import ChangeSet, FramePump, RunDisplay, Transcript
from .widgets.items import item_text, raw_events_text
from .widgets.key_hints import KeyHints
from .widgets.text import clean, clean_line

__all__ = ["CockpitApp", "ThemedApp"]

CANCEL_WINDOW = 2.0  # seconds within which a second escape confirms the cancel


class ThemedApp(App[Any]):
    """An app with the cockpit's themes registered, the chosen one applied and remembered.

    `theme`: a theme name; else the one remembered in `config.toml`; else `cockpit-dark`.
    An unknown name raises `ValueError` listing the available ones. The replay viewer can
    subclass this too.
    """

    def __init__(self, *, theme: str | None = None, remember_theme: bool = True) -> None:
        super().__init__()
        self.theme_errors: list[str] = []
        self.cockpit_themes = load_themes(self.theme_errors)
        for registered in self.cockpit_themes.values():
            self.register_theme(registered)
        self.config = load_config()
        self._remember_theme = remember_theme
        if theme is not None and theme not in self.available_themes:
            names = ", ".join(sorted(self.cockpit_themes))
            raise ValueError(f"unknown theme {theme!r}; available: {names}")
        chosen = theme or self.config.theme
        if chosen not in self.available_themes:
            if chosen:
                self.theme_errors.append(f"remembered theme {chosen!r} is not installed")
            chosen = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = chosen

    def on_mount(self) -> None:
        # Subscribing needs a running app; the initial choice above is not a switch to save.
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Defaults for the cockpit's own variables, so any Textual theme works too."""
        return dict(VARIABLE_DEFAULTS)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette: Textual's commands plus one entry per cockpit theme."""
        yield from super().get_system_commands(screen)
        for name in sorted(self.cockpit_themes):
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme (remembered)",
                                lambda name=name: setattr(self, "theme", name))

    def _on_theme_changed(self, theme: Any) -> None:
        if self._remember_theme:
            error = save_theme(theme.name)
            if error:
                self.notify(error, severity="warning")
        self.refresh_theme()

    def refresh_theme(self) -> None:
        """Redraw what caches colours (subclasses)."""


class CockpitApp(ThemedApp):
    """The live cockpit over a `Session` the caller built; starts `session.run()` on mount.

    Args:
        session: The run to watch and steer.
        theme: A theme name (see `cockpit.themes`); `None` = the remembered one.
        next_session: Builds the Session for the next task from its text (same grants, same
            session id); without it, no next-task input is offered.
        remember_theme: Whether a theme switch is saved to `config.toml`.
        clock: What the elapsed time ticks by; `None` shows the time up to the last event
            (snapshot tests use that, so the picture does not depend on the wall clock).
    """

    CSS = """
    #end-panel {
        display: none;
        height: auto;
        background: $panel;
        border-top: thick $primary;
        padding: 0 1;
    }
    #end-panel.-shown { display: block; }
    #end-panel.-failed { border-top: thick $error; }
    #end-panel.-cancelled { border-top: thick $warning; }
    #next-task { display: none; margin-top: 1; }
    #next-task.-shown { display: block; }
    """

    BINDINGS = bindings("app")
    TITLE = "cockpit"

    def __init__(self, session: Session, *, theme: str | None = None,
                 next_session: Callable[[str], Session] | None = None,
                 remember_theme: bool = True,
                 clock: Callable[[], float] | None = time.time) -> None:
        super().__init__(theme=theme, remember_theme=remember_theme)
        self._elapsed_clock = clock
        self.sessions: list[Session] = [session]
        self.next_session = next_session
        self.fold = RunFold(grants=session.grants)
        self.pump = FramePump(self.fold, self._deliver)
        self._cancel_armed_until = 0.0
        self._run_worker: Worker[Any] | None = None
        self._quitting = False

    # Properties --------------------------------------------------------------------------------
    @property
    def session(self) -> Session:
        """The session of the current task."""
        return self.sessions[-1]

    @property
    def view(self) -> RunView:
        """The folded view of everything so far."""
        return self.fold.view

    @property
    def display_widget(self) -> RunDisplay:
        """The run display."""
        return self.query_one(RunDisplay)

    # Building ----------------------------------------------------------------------------------
    def on_mount(self) -> None:
        self._on_mount_cockpit()

    def compose(self) -> ComposeResult:
        yield RunDisplay(clock=self._elapsed_clock, id="run")
        with Vertical(id="end-panel"):
            yield Static("", id="end-text")
            yield Input(placeholder="next task — enter runs it in this session (grants carry "
                        "over)", id="next-task", max_length=20_000)
        yield KeyHints(id="keys")

    def _on_mount_cockpit(self) -> None:
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        for problem in self.theme_errors + ([self.config.error] if self.config.error else []):
            self.notify(clean(problem, 500), severity="warning", markup=False)
        self.display_widget.show(self.view)
        self.query_one(Transcript).focus()
        self._start(self.session)

    def on_unmount(self) -> None:
        self.pump.close()

    def _start(self, session: Session) -> None:
        # Subscribe before the run starts so no wake-up is missed; the pump folds from history.
        stream = session.events()
        self.pump.attach(session.history)
        self.run_worker(self.pump.follow(stream), group="pump", exit_on_error=False)
        self._run_worker = self.run_worker(session.run(), group="run", exit_on_error=False)

    def refresh_theme(self) -> None:
        """Re-render the run display in the new theme's colours."""
        if self.is_mounted and self.query(RunDisplay):
            self.display_widget.refresh_theme()

    # The frame -------------------------------------------------------------------------------
    def _deliver(self, view: RunView, changes: ChangeSet) -> None:
        if not self.is_running:
            return
        self.display_widget.apply_changes(view, changes)
        if changes.parts & (APPROVALS | RUN):
            self.refresh_bindings()
        if changes.parts & RUN:
            self._show_end(view)

    def _show_end(self, view: RunView) -> None:
        panel = self.query_one("#end-panel")
        if view.live or view.status == "idle":
            panel.remove_class("-shown", "-failed", "-cancelled")
            return
        from rich.text import Text

        from .widgets.palette import palette_for

        palette = palette_for(self)
        text = Text()
        text.append(f"{view.status}", palette.status_style(view.status))
        outcome = view.result or view.error or view.cancel_reason or ""
        if outcome:
            text.append(": " + clean(outcome[:4_000]), palette.text)
        journal = getattr(self.session.journal, "path", None)
        text.append("\njournal: ", palette.dim)
        text.append(clean_line(str(journal), 1_000) if journal else "(none: run without a journal)",
                    palette.accent if journal else palette.dim)
        if self.next_session is None:
            text.append("\nctrl+q quits", palette.dim)
        else:
            text.append("\ntab (or a click) to type the next task · ctrl+q quits", palette.dim)
        self.query_one("#end-text", Static).update(text)
        panel.set_class(view.status == "failed", "-failed")
        panel.set_class(view.status == "cancelled", "-cancelled")
        panel.add_class("-shown")
        next_input = self.query_one("#next-task", Input)
        if self.next_session is not None and not self._quitting:
            # Shown, not focused: a `y` pressed a moment too late must not start typing a task.
            next_input.add_class("-shown")
            next_input.value = ""
        else:
            next_input.remove_class("-shown")

    # Approvals -------------------------------------------------------------------------------
    def _oldest_pending(self) -> ToolCallItem | None:
        pending = self.view.pending
        return next(iter(pending.values()), None) if pending else None

    def _answer(self, allow: bool, remember: bool = False) -> None:
        row = self._oldest_pending()
        if row is None or row.approval is None:
            return
        # Answer the request the human is looking at (by id): a stale double press is a no-op.
        self.session.resolve_approval(row.approval.approval_id, allow=allow, remember=remember)
        self.pump.flush()
        self._paint_now()
        # The refreshes it caused reach the screen through a few message hops; paint again
        # once they have, instead of waiting for the screen's next timer tick.
        asyncio.get_running_loop().call_later(0.002, self._paint_now)

    def _paint_now(self) -> None:
        """Compose the frame now rather than at the screen's next timer tick (up to a frame
        later): the human who pressed a key sees its effect at once. Uses Textual's private
        update hook (Textual is pinned); without it, the next tick paints as usual."""
        if not self.is_running:
            return
        screen = self.screen
        update = getattr(screen, "_on_timer_update", None)
        if update is not None and screen.is_current:
            update()

    def action_approve(self) -> None:
        """Allow the oldest pending call once."""
        self._answer(True)

    def action_approve_always(self) -> None:
        """Allow it and grant its program prefix for the rest of the session."""
        self._answer(True, remember=True)

    def action_deny(self) -> None:
        """Deny the oldest pending call."""
        self._answer(False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Approval keys only while one is pending (and `a` only when it can be granted);
        cancel only while the run is live."""
        if action in ("approve", "deny"):
            return self._oldest_pending() is not None
        if action == "approve_always":
            row = self._oldest_pending()
            if row is None or row.approval is None:
                return False
            return True if row.approval.grantable else None  # shown disabled: the bar says why
        if action == "cancel_run":
            return self.view.live and not self.session.done
        return True

    # Cancel and quit -------------------------------------------------------------------------
    def action_cancel_run(self) -> None:
        """First escape arms, a second within two seconds cancels the run."""
        if self.session.done:
            return
        now = time.monotonic()
        if now <= self._cancel_armed_until:
            self._cancel_armed_until = 0.0
            self.session.cancel("cancelled by the user")
            self.notify("cancelling the run…", timeout=2)
            self.pump.flush()
            return
        self._cancel_armed_until = now + CANCEL_WINDOW
        self.notify("press escape again to cancel the run", timeout=CANCEL_WINDOW)

    async def action_quit_cockpit(self) -> None:
        """Quit; while the run is live, ask first (quitting cancels it cleanly)."""
        if not self.session.done and self._run_worker is not None:
            self.push_screen(QuitScreen(), self._quit_answered)
            return
        await self._finish()

    def _quit_answered(self, quit_: bool | None) -> None:
        if quit_:
            self._quit_and_cancel()

    @work(group="quit", exclusive=True)
    async def _quit_and_cancel(self) -> None:
        self._quitting = True
        self.session.cancel("quit by the user")
        await self._finish()

    async def _finish(self) -> None:
        worker = self._run_worker
        if worker is not None and not worker.is_finished:
            await worker.wait()  # the run ends: cancellation observed, journal closed
        self.pump.flush()
        await aclose_factory(self.next_session)  # an agent is closed, not killed at exit
        self.exit(self.session.state.status)

    # Help, pager, inspector ------------------------------------------------------------------
    def action_help(self) -> None:
        """Show every key, generated from the binding table."""
        self.push_screen(HelpScreen(keymap=self.config.keymap))

    @on(Transcript.OpenPager)
    def _open_pager(self, message: Transcript.OpenPager) -> None:
        item = message.item
        self.push_screen(PagerScreen(_item_title(item), item_text(item)))

    @on(Transcript.Inspect)
    def _inspect(self, message: Transcript.Inspect) -> None:
        item = message.item
        self.push_screen(PagerScreen(f"raw events behind {_item_title(item)}",
                                     self.raw_events(item)))

    def raw_events(self, item: Item) -> str:
        """The events behind `item`, as JSON, from its task's history."""
        if not 1 <= item.task <= len(self.sessions):
            return "(the events of this item are not in this session)"
        history = self.sessions[item.task - 1].history
        return raw_events_text(item, lambda seq: history[seq] if 0 <= seq < len(history)
                               else None)

    # The next task ---------------------------------------------------------------------------
    @on(Input.Submitted, "#next-task")
    def _next_task(self, message: Input.Submitted) -> None:
        task = message.value.strip()
        if not task or self.next_session is None or not self.session.done:
            return
        try:
            session = self.next_session(task)
        except Exception as exc:  # a factory failure is the user's to see, not a crash
            self.notify(f"could not start the next task: {clean(str(exc), 500)}",
                        severity="error", markup=False)
            return
        self.sessions.append(session)
        message.input.remove_class("-shown")
        self.query_one("#end-panel").remove_class("-shown")
        self.query_one(Transcript).focus()
        self._start(session)

    def set_keymap(self, keymap: Keymap) -> None:
        """Apply a user keymap (binding id -> key), as read from `config.toml`."""
        super().set_keymap(keymap)


def _item_title(item: Item) -> str:
    if isinstance(item, ToolCallItem):
        return f"{clean_line(item.tool, 60)} call {clean_line(item.call_id, 60)}"
    return f"{item.kind} #{item.index}"
