"""Minimal stdio servers the end-to-end benchmarks run as subprocesses."""
