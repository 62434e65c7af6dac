"""Which assertion types guard a permission, and how severe a failure of each type is.

Kept apart from `verdicts` (which needs Polars) so that `tracelab view` names the failed
permission types without importing it."""
from __future__ import annotations

PERMISSION_TYPES = ("must_not_leak", "must_not_write", "undeclared_writes")
"""A failed result of these types fails its case whatever min_pass_rate says; also the report's
severity order: a leak first, then a forbidden write, then an undeclared one (docs/cli.md)."""
SEVERITY = {kind: rank for rank, kind in enumerate(PERMISSION_TYPES, start=1)}
"""Severity rank of an assertion type: 1 leak, 2 forbidden write, 3 undeclared write, 4 any other
(`OTHER_SEVERITY`). Reports list a case's failing assertions by rank, then most failing runs first."""
OTHER_SEVERITY = len(PERMISSION_TYPES) + 1
