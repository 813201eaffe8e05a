"""The transcript: every item of a run, as one virtualised widget on Textual's Line API.

- `transcript`: `Transcript`, the widget, its rows laid out and its keys.
- `items`: how one item looks (`render_item`), and its text for the pager and raw events;
  `rows`: the pieces every row is built with; `tool_rows`, `code_rows` (diffs and file
  contents), `stream_rows` (a reply still streaming), `question_rows`, `history_rows`.
"""

from cockpit.widgets.transcript.items import item_text, raw_events_text
from cockpit.widgets.transcript.rows import warn_style
from cockpit.widgets.transcript.transcript import Transcript

__all__ = ["Transcript", "item_text", "raw_events_text", "warn_style"]
