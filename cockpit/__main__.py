"""`python -m cockpit`: the same command line as the `cockpit` script."""

from cockpit.cli import entry

entry()
