"""`GrantControls`: the live cockpit's grants — the grants screen (`g`), the grants panel kept
current when saved grants change (a revoke here or in another cockpit), and the warnings about
saved grants that are not trusted or a grant that could not be saved.

Mixed into `CockpitApp`, like `SteeringControls`: it acts on the Session's gate and the fold's
grants only; the widgets draw what the fold says.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from cockpit.keys import key_label
from cockpit.screens import GrantsScreen
from cockpit.widgets import clean
from engine_adapter import Session
from engine_adapter.text import plural
from engine_adapter.view import ChangeSet

if TYPE_CHECKING:
    from cockpit.live.app import CockpitApp

__all__ = ["GrantControls"]


class GrantControls:
    """The grants screen, panel and warnings for `CockpitApp`."""

    _watched_stores: list[object]

    def action_grants(self: CockpitApp) -> None:
        """Show every grant and deny rule in force; revoke from there."""
        self.push_screen(GrantsScreen(self.session.gate, changed=self._grants_changed))

    def _watch_grants(self: CockpitApp, session: Session) -> None:
        """Redraw the grants panel whenever saved grants change (a revoke, another cockpit);
        say when a grant the human chose to save was not saved, and, once, what in the saved
        grants is not trusted (a broken file, an ignored grant, saved grants off)."""
        loop = asyncio.get_running_loop()
        session.gate.on_problem(lambda line: loop.call_soon_threadsafe(self._grant_problem, line))
        store = session.gate.store
        if store is None or any(s is store for s in self._watched_stores):
            return
        self._watched_stores.append(store)
        store.on_change(lambda: loop.call_soon_threadsafe(self._grants_changed))
        problems = store.problems
        if problems:
            more = f" (and {plural(len(problems) - 1, 'more problem')})" \
                if len(problems) > 1 else ""
            self._grant_problem(f"saved grants: {problems[0]}{more}")

    def _grant_problem(self: CockpitApp, line: str) -> None:
        if self.is_running:
            hint = key_label(self, "grants")
            self.notify(clean(f"{line} · {hint} shows grants" if hint else line, 600),
                        severity="warning", markup=False, timeout=10)

    def _grants_changed(self: CockpitApp) -> None:
        if not self.is_running:
            return
        self.pump.flush()
        change = self.fold.set_grants(self.session.gate.entries())
        if change.parts:
            changes = ChangeSet()
            changes.add(change.parts, change.item)
            self.display_widget.apply_changes(self.view, changes)
