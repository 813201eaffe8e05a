"""`python -m cockpit`: the same command line as the `cockpit` script."""

from .cli import main

main()
