"""Results: check runs, saved checks, text/JSON/JUnit reports, baselines, coverage, summaries.

May import: `tracelab.engine`, `tracelab.suite`, `tracelab.store` and the foundation modules.
"""
