"""stats: tiny descriptive statistics (the sample project of `cockpit demo`)."""

from .core import mean, median

__all__ = ["mean", "median"]
