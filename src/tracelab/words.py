"""Counts as a person reads them: a number and its noun, agreeing (``1 run``, ``2 runs``)."""
from __future__ import annotations


def plural(n: int, noun: str, plural_form: str | None = None) -> str:
    """``1 run``, ``2 runs``, ``0 runs``: `n` and `noun`, in the plural unless `n` is 1
    (`plural_form`, else `noun` + "s")."""
    return f"{n} {noun if n == 1 else plural_form or noun + 's'}"


__all__ = ["plural"]
