"""The small panels around the transcript: status line, verification, grants in force.

Each renders from a `RunView` (`show(view)`), never from a Session, so the replay viewer uses
them as they are. Texts are built as Rich `Text` without markup; untrusted strings are cleaned.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual.app import RenderResult
from textual.widget import Widget
from textual.widgets import Static

from engine_adapter.fold import RunView
from engine_adapter.sandbox import is_sandboxed, sandbox_label
from engine_adapter.text import plural

from ..styles import palette_for
from .text import clean_line, one_line

__all__ = ["GrantsPanel", "StatusLine", "VerificationPanel", "format_elapsed"]

_RUN_ICONS = {"idle": "○", "running": "●", "completed": "✓", "failed": "✗", "cancelled": "⊘"}
_CHECK_ICONS = {"pending": "○", "running": "…", "passed": "✓", "failed": "✗"}


def format_elapsed(seconds: float) -> str:
    """`mm:ss`, or `h:mm:ss` past an hour."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class StatusLine(Widget):
    """Task, engine, model, phase, turn, tokens and cost, elapsed, and the run's status.

    With a `clock` (the live cockpit passes `time.time`) the elapsed time ticks while the run is
    live; without one (replay) it is the time up to the last event shown.
    """

    DEFAULT_CSS = """
    StatusLine {
        height: 2;
        background: $panel;
        padding: 0 1;
    }
    """

    def __init__(self, *, clock: Callable[[], float] | None = None, id: str | None = None,
                 ) -> None:
        super().__init__(id=id)
        self.clock = clock
        self._view: RunView | None = None
        self._text = Text()

    def render(self) -> RenderResult:
        return self._text

    def on_mount(self) -> None:
        if self.clock is not None:
            self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        if self._view is not None and self._view.live:
            self.show(self._view)

    def show(self, view: RunView) -> None:
        """Redraw from `view`."""
        self._view = view
        palette = palette_for(self.app)
        status_style = palette.status_style(view.status)
        top = Text(no_wrap=True, overflow="ellipsis")
        top.append(f"{_RUN_ICONS.get(view.status, '·')} {view.status}", status_style)
        top.append("  ")
        top.append(one_line(view.task, 300) or "(no task yet)", palette.text)
        bottom = Text(no_wrap=True, overflow="ellipsis")
        engine = clean_line(view.engine or "?", 60)
        if view.agent:
            engine += f" · {clean_line(view.agent, 60)}"
        if view.model:
            engine += f" · {clean_line(view.model, 60)}"
        fields = [engine]
        if view.phase:
            fields.append(f"phase {clean_line(view.phase, 40)}")
        fields.append(f"turn {view.turn}")
        cached = f" ({view.cached_tokens:,} cached)" if view.cached_tokens else ""
        tokens = f"{view.input_tokens:,} in{cached} / {view.output_tokens:,} out"
        if view.cost_usd is not None:
            tokens += f" · ${view.cost_usd:.4f}"
        fields.append(tokens)
        if view.context is not None:
            used, size = view.context
            fields.append(f"context {min(used * 100 // size, 999)}% of {size:,}")
        fields.append(self._elapsed(view))
        if view.task_index > 1:
            fields.append(f"task {view.task_index}")
        warn = -1
        if view.sandbox:  # early, so a narrow screen still shows it; no sandbox stands out
            label = sandbox_label(view.sandbox, view.sandbox_network)
            if view.engine.startswith("acp:"):  # the agent itself runs outside any sandbox
                label = f"terminals: {label}"
            warn = -1 if is_sandboxed(view.sandbox) else 1
            fields.insert(1, label if warn < 0 else f" ⚠ {label} ")
        for i, value in enumerate(fields):
            if i:
                bottom.append("  │  ", palette.dim)
            bottom.append(value, palette.warning + Style(reverse=True, bold=True) if i == warn
                          else palette.dim if i else palette.accent)
        # A fixed-size widget: a repaint, not a layout pass (this runs every frame in a flood).
        self._text = Text("\n").join([top, bottom])
        self.refresh()

    def _elapsed(self, view: RunView) -> str:
        if view.started_ts is None:
            return "--:--"
        if view.ended_ts is not None:
            end = view.ended_ts
        elif self.clock is not None:
            end = self.clock()
        else:
            end = view.last_ts or view.started_ts
        return format_elapsed(end - view.started_ts)


class VerificationPanel(Static):
    """Each check of the frozen plan: pending / running / passed / failed, with duration;
    checks added or changed after the first plan are marked."""

    DEFAULT_CSS = """
    VerificationPanel {
        height: auto;
        max-height: 50%;
        padding: 0 1;
        border-top: solid $panel;
    }
    """

    def show(self, view: RunView) -> None:
        """Redraw from `view`."""
        palette = palette_for(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("Verification", palette.primary)
        if view.plan_version > 1:
            text.append(f"  plan changed (v{view.plan_version})", palette.warning)
        if not view.checks:
            text.append("\nno plan yet", palette.dim)
        for check in list(view.checks.values())[:50]:
            style = palette.status_style(check.status)
            text.append(f"\n{_CHECK_ICONS.get(check.status, '·')} ", style)
            text.append(clean_line(check.name, 80), palette.text)
            text.append(f" {check.status}", style)
            if check.duration_ms is not None:
                text.append(f" {check.duration_ms:,.0f}ms", palette.dim)
            if check.added_in > 1:
                text.append(" ◆changed", palette.warning)
            if check.status == "failed" and check.output:
                text.append("\n   " + one_line(check.output.strip(" \t\r\n"), 200), palette.dim)
        if len(view.checks) > 50:
            text.append(f"\n… {plural(len(view.checks) - 50, 'more check')}", palette.dim)
        self.update(text)


class GrantsPanel(Static):
    """The grants in force: session grants (✓), saved project and user grants (★, with their
    scope) and deny rules (✗)."""

    DEFAULT_CSS = """
    GrantsPanel {
        height: auto;
        max-height: 40%;
        padding: 0 1;
        border-top: solid $panel;
    }
    """

    def show(self, view: RunView) -> None:
        """Redraw from `view`."""
        palette = palette_for(self.app)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("Grants in force", palette.primary)
        if not view.grants:
            text.append("\nnone", palette.dim)
        for grant in view.grants[:30]:
            # Session grants plain (✓), saved ones starred with their scope (★ project / user),
            # deny rules crossed (✗): a saved grant outlives the run, the panel says so.
            saved = grant.scope in ("project", "user")
            mark, style = ("✗ ", palette.error) if grant.deny else (
                ("★ ", palette.warning) if saved else ("✓ ", palette.success))
            text.append("\n" + mark, style)
            text.append(clean_line(grant.tool, 40), palette.text)
            text.append(f" `{clean_line(grant.prefix, 80)} …`", palette.accent)
            if grant.deny:
                text.append(" denied", palette.error)
            else:
                text.append(f" ≤T{grant.tier}", palette.tier_style(grant.tier))
            if saved:
                text.append(f" {grant.scope}", palette.dim)
        if len(view.grants) > 30:
            text.append(f"\n… {len(view.grants) - 30} more", palette.dim)
        self.update(text)


