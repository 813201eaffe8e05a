"""`cockpit export`: a run's report from its journal, as Markdown or HTML. No Textual.

- `contents`: what a report says whatever its format (status and error first, usage, each
  call's input, diff, verdict and timing, each capped saying how much it dropped).
- `markdown`: the report as Markdown, and `export_journal` (a journal in, a report out);
  `html`: the report as one standalone HTML page.
- `beside`: `export_beside`, the Markdown report written next to its journal (`/export`).
"""

from cockpit.export.beside import export_beside
from cockpit.export.markdown import FORMATS, export_journal

__all__ = ["FORMATS", "export_beside", "export_journal"]
