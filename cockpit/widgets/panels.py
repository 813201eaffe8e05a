"""The small panels around the transcript: status line, verification, grants in force, and
the one-line summary of the last two that the status line shows on a narrow terminal.

Each renders from a `RunView` (`show(view)`), never from a Session, so the replay viewer uses
them as they are. Texts are built as Rich `Text` without markup; untrusted strings are cleaned.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.app import RenderResult
from textual.widget import Widget
from textual.widgets import Static

from cockpit.keys import key_label
from cockpit.styles import palette_for
from cockpit.widgets.safe_text import clean_line, one_line
from engine_adapter.events import DEFAULT_MODE, mode_label
from engine_adapter.sandbox import agent_place_label, is_sandboxed, sandbox_label
from engine_adapter.text import plural
from engine_adapter.view import RunView, options_text

__all__ = ["GrantsPanel", "StatusLine", "VerificationPanel", "format_elapsed", "short_path",
           "side_summary"]

_RUN_ICONS = {"idle": "○", "running": "●", "completed": "✓", "failed": "✗", "cancelled": "⊘"}
_CHECK_ICONS = {"pending": "○", "running": "…", "passed": "✓", "failed": "✗"}


def _shown_elsewhere(options: tuple) -> list[str]:
    """The settings the status line already shows: the model (as the model) and the mode (as
    the phase)."""
    return [o.id for o in options if o.category in ("model", "mode") or o.id in ("model",
                                                                                 "mode")]


def format_elapsed(seconds: float) -> str:
    """`mm:ss`, or `h:mm:ss` past an hour."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def short_path(path: str, width: int, home: str | None = None) -> str:
    """`path` with the home folder as `~`, cut from the left (`…/src/app`) to `width` cells."""
    home = home if home is not None else os.path.expanduser("~")
    path = clean_line(path, 4_000)
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        path = "~" + path[len(home.rstrip("/")):]
    if cell_len(path) <= width:
        return path
    parts = path.split("/")
    while len(parts) > 1 and cell_len("…/" + "/".join(parts)) > width:
        parts.pop(0)
    short = "…/" + "/".join(parts)
    return short if cell_len(short) <= width else "…" + path[-max(1, width - 1):]


def side_summary(view: RunView) -> str:
    """The side column in a few words, for the status line of a narrow terminal."""
    checks = view.checks.values()
    total = len(view.checks)
    if not total:
        text = "no checks yet"
    else:
        # A ✓ only for checks that passed: `0/2 ✓` before any ran read as "all fine".
        passed = sum(c.status == "passed" for c in checks)
        failed = sum(c.status == "failed" for c in checks)
        if passed:
            text = f"checks {passed}/{total} ✓" + (f" {failed} ✗" if failed else "")
        elif failed:
            text = f"checks {failed}/{total} ✗"
        else:
            text = f"checks 0 of {total} run"
    # A deny rule allows nothing: it is never counted as a grant.
    denies = sum(1 for g in view.grants if g.deny)
    allows = len(view.grants) - denies
    for count, word in ((allows, "grant"), (denies, "deny rule")):
        if count:
            text += f" · {plural(count, word)}"
    return text


class StatusLine(Widget):
    """Two lines: the run's status and task; then what fits of: the side column summed up
    (on a narrow terminal), elapsed time, working directory (`~`-shortened), engine and model,
    turn and task number, tokens and cost, phase — the less important dropped first.

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
        self.side_summary = False  # sum up verification and grants (the side column is hidden)
        self.side_overlay = False  # the side column is shown over the transcript now
        # The journal ended without `agent_end` and nothing writes it any more (replay at its
        # last event): a "running" run is shown as what it is, "crashed?"
        self.crashed = False
        # Replay's provisional end (the fold of the journal's last part only): what to say
        # instead of the run's status and totals, which that part cannot give.
        self.provisional: str | None = None
        self._view: RunView | None = None
        self._lines: list[Text] = [Text(), Text()]
        # The task a run was started with and when (by `clock`), until its first event: an
        # agent can take a minute to answer `initialize`, and the screen must say so at once.
        self.starting: tuple[str, float] | None = None

    def render(self) -> RenderResult:
        return Text("\n").join(self._lines)

    def on_mount(self) -> None:
        if self.clock is not None:
            self.set_interval(1.0, self._tick)

    def on_resize(self) -> None:
        if self._view is not None:
            self.show(self._view)

    def _tick(self) -> None:
        if self._view is not None and (self._view.live or self._waiting(self._view)):
            self.show(self._view)

    def _waiting(self, view: RunView) -> tuple[str, float] | None:
        """The task and since when, while the run's agent is starting: it said so
        (`view.starting`, until `agent_ready`), or the run was started and nothing of it has
        arrived yet; else None."""
        if view.starting and view.started_ts is not None:
            return view.task, view.started_ts
        if self.starting is not None and view.task_index == 0 and view.status == "idle":
            return self.starting
        return None

    def show(self, view: RunView) -> None:
        """Redraw from `view`."""
        self._view = view
        palette = palette_for(self.app)
        width = max(10, self.size.width - 2 if self.size.width else 118)
        status_style = palette.status_style(view.status)
        if self.provisional is not None:
            self._lines = [Text(self.provisional, palette.warning, no_wrap=True, end="",
                                overflow="ellipsis"),
                           Text("status, tokens, cost, turns and time: once the whole journal "
                                "is read", palette.dim, no_wrap=True, end="")]
            self.refresh()
            return
        waiting = self._waiting(view)
        if waiting is not None:
            task, since = waiting
            waited = format_elapsed(self.clock() - since) if self.clock is not None else ""
            top = Text(no_wrap=True, overflow="ellipsis", end="")
            top.append(f"◌ starting agent … {waited}".rstrip(), palette.status_style("running"))
            top.append("  ")
            top.append(one_line(task, 300) or "(no task)", palette.text)
            self._lines = [top, Text("waiting for the agent to answer (an agent may take a "
                                     "minute to start; escape twice cancels)", palette.dim,
                                     no_wrap=True, end="", overflow="ellipsis")]
            self.refresh()
            return
        top = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.crashed and view.status == "running":
            top.append("⚠ crashed?", palette.warning)
        else:
            top.append(f"{_RUN_ICONS.get(view.status, '·')} {view.status}", status_style)
        top.append("  ")
        if view.title:  # the agent's name for its session
            top.append(one_line(view.title, 80), palette.accent)
            top.append(" · ", palette.dim)
        top.append(one_line(view.task, 300) or "(no task yet)", palette.text)
        top.truncate(width, overflow="ellipsis")
        # (text, style, priority: lower is kept first)
        fields: list[tuple[str, Style, int]] = []
        if self.side_summary:
            verb = "hides" if self.side_overlay else "shows"  # what the key does now
            fields.append((f"{side_summary(view)} · {key_label(self.app, 'side-panel')} {verb}",
                           palette.warning if any(c.status == "failed"
                                                  for c in view.checks.values())
                           else palette.accent, 0))
        engine = clean_line(view.engine or "?", 60)
        if view.agent:
            engine += f" · {clean_line(view.agent, 60)}"
        if view.model:
            engine += f" · {clean_line(view.model, 60)}"
        fields.append((engine, palette.accent, 3))
        if view.cwd:
            fields.append((short_path(view.cwd, max(12, width // 3)), palette.text, 2))
        if view.phase:
            fields.append((f"phase {clean_line(view.phase, 40)}", palette.dim, 6))
        # The permission mode: any but the default is kept early (what runs unasked depends on
        # it); the default goes as soon as room is short, as the phase does.
        mode = f"mode {mode_label(view.mode)}" + (" (asks)" if view.mode_note else "")
        if view.mode == DEFAULT_MODE:
            fields.append((mode, palette.dim, 6))
        else:
            fields.append((mode, palette.warning if view.mode == "auto" else palette.accent, 1))
        settings = options_text(view.options, skip=_shown_elsewhere(view.options))
        if settings:
            fields.append((clean_line(settings, 120), palette.dim, 2))  # chosen by the human
        fields.append((f"turn {view.turn}", palette.dim, 4))
        cached = f" ({view.cached_tokens:,} cached)" if view.cached_tokens else ""
        tokens = (f"{view.input_tokens:,} in{cached} / {view.output_tokens:,} out"
                  if view.tokens_reported else "tokens unknown")
        if view.cost_usd is not None:
            tokens += f" · ${view.cost_usd:.4f}"
        for currency, amount in view.other_costs.items():
            tokens += f" · {amount:.4f} {currency}"
        fields.append((tokens, palette.dim, 5))
        if view.context is not None:
            used, size = view.context
            fields.append((f"context {min(used * 100 // size, 999)}% of {size:,}", palette.dim,
                           4))
        fields.append((self._elapsed(view), palette.dim, 1))
        if view.task_index > 1:
            fields.append((f"task {view.task_index}", palette.dim, 4))
        if view.sandbox:  # kept early, so a narrow screen still shows it; no sandbox stands out
            label = sandbox_label(view.sandbox, view.sandbox_network)
            contained = is_sandboxed(view.sandbox)
            if view.engine.startswith("acp:") and not view.agent_sandbox:
                label = f"terminals: {label}"  # a journal from before the agent's own place
            elif view.engine.startswith("acp:"):  # where the agent runs (its terminals too)
                # A contained agent's terminals run in the same sandbox: one short label.
                agent = agent_place_label(view.agent_sandbox)
                contained = contained and is_sandboxed(view.agent_sandbox)
                label = agent if contained else f"{agent} · terminals: {label}"
            if contained:
                fields.insert(1, (label, palette.dim, 1))
            else:
                fields.insert(1, (f" ⚠ {label} ", palette.warning + Style(reverse=True, bold=True),
                                  0))
        kept = _fit(fields, width, separator=5)
        bottom = Text(no_wrap=True, overflow="ellipsis", end="")
        for i, (value, style, _) in enumerate(kept):
            if i:
                bottom.append("  │  ", palette.dim)
            bottom.append(value, style)
        bottom.truncate(width, overflow="ellipsis")
        # A fixed-size widget: a repaint, not a layout pass (this runs every frame in a flood).
        self._lines = [top, bottom]
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


def _fit(fields: list[tuple[str, Style, int]], width: int,
         separator: int) -> list[tuple[str, Style, int]]:
    """The fields that fit in `width` cells, most important first, in their own order (the
    most important one is kept even when it alone is too wide: it is cut)."""
    order = sorted(range(len(fields)), key=lambda i: fields[i][2])
    chosen: set[int] = set()
    used = 0
    for i in order:
        need = cell_len(fields[i][0]) + (separator if chosen else 0)
        if used + need <= width or not chosen:
            chosen.add(i)
            used += need
    return [field for i, field in enumerate(fields) if i in chosen]


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


