"""What the tests share (no tests here): scripted engines and runs, apps driven to a moment,
journals and their strategies, the shell tables, hostile files, and where the checkout is.

The tests import these as `support.<module>` (`tests/` is on pytest's `pythonpath`); the fakes the
tests run as real processes or servers are in `tests/fakes/`."""
