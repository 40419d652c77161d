"""Programs the tests run as real peers (subprocesses)."""
