"""Moved to `engine_adapter.input_fields` (event descriptions need it below the views); this
name stays so `from cockpit.input_fields import …` keeps working."""

from engine_adapter.diff_summary import diff_stats
from engine_adapter.input_fields import Field, input_fields, input_line, input_text, one_row

__all__ = ["Field", "diff_stats", "input_fields", "input_line", "input_text", "one_row"]
