"""stats: tiny descriptive statistics (the sample project of `cockpit demo`)."""

from stats.core import mean, median

__all__ = ["mean", "median"]
