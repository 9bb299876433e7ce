"""Offline tooling shared by tests, benchmarks, the demo and diagnostics: never used by the hooks."""
