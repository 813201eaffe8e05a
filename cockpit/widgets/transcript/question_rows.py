"""How an agent's question reads in the transcript: the question, each field it asked for, and
the answer (or that it waits for one). Plain text from the agent, cleaned, never markup."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual.strip import Strip

from cockpit.styles import Palette
from cockpit.widgets.safe_text import styled, styled_line
from cockpit.widgets.transcript.rows import warn_style, wrapped
from engine_adapter.events import answer_text, field_kind_text, field_label, link_text
from engine_adapter.text import plural
from engine_adapter.view import QuestionItem

__all__ = ["question_rows", "question_text"]

FIELDS_SHOWN = 6  # fields listed under a collapsed question


def question_rows(item: QuestionItem, expanded: bool, palette: Palette, console: Console,
                  width: int) -> list[Strip]:
    """The rows of a question item."""
    warn = warn_style(palette)
    body = Text("? the agent asks: ", palette.accent)
    body.append_text(styled(item.message, palette.text, limit=4_000 if expanded else 600,
                            marker_style=warn))
    if item.url is not None:  # a link question: the link marked and cut, never opened here
        body.append("\n  link: ", palette.dim)
        body.append_text(styled_line(link_text(item.url, 2_000 if expanded else 300),
                                     palette.primary, limit=2_100, marker_style=warn))
    # One more field takes the line a "1 more" note would: show it instead.
    whole = expanded or len(item.fields) <= FIELDS_SHOWN + 1
    fields = item.fields if whole else item.fields[:FIELDS_SHOWN]
    for field in fields:
        body.append("\n  · ", palette.dim)
        body.append_text(styled_line(field_label(field), palette.primary, limit=200,
                                     marker_style=warn))
        body.append_text(styled_line(f" ({field_kind_text(field)})", palette.dim, limit=300,
                                     marker_style=warn))
    if len(item.fields) > len(fields):
        more = plural(len(item.fields) - len(fields), "more field", "more fields")
        body.append(f"\n  … {more} (enter to expand)",
                    palette.dim)
    body.append("\n  → ", palette.dim)
    if item.state == "pending":
        body.append("awaiting your answer", palette.status_style("awaiting"))
    else:
        said = answer_text(item.fields, item.state, item.values, via=item.via or "human",
                           reason=item.reason)
        style = palette.success if item.state == "accept" else palette.status_style("denied")
        body.append_text(styled_line(said, style, limit=2_000, marker_style=warn))
    return wrapped(console, body, width)


def question_text(item: QuestionItem) -> str:
    """The whole question and its answer, for the pager."""
    lines = [f"the agent asks: {item.message}", ""]
    if item.url is not None:
        lines += [f"link: {link_text(item.url, 20_000)}", ""]
    lines += [f"- {field_label(f)} ({field_kind_text(f)})" + (f": {f.description}"
                                                              if f.description else "")
              for f in item.fields]
    answer = "awaiting an answer" if item.state == "pending" else answer_text(
        item.fields, item.state, item.values, via=item.via or "human", reason=item.reason)
    return "\n".join([*lines, "", answer])
