"""`make test` and `make soak` say why a test was skipped (issue 26): a skip without its reason
(a real-trace folder absent, Chromium missing) reads as a pass."""
from __future__ import annotations

import re

from tests.conftest import REPO


def recipe(target: str) -> list[str]:
    """The recipe lines of `target` in the Makefile."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    body = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, flags=re.M)
    assert body, f"Makefile: no target {target}"
    return [line.strip() for line in body.group(1).splitlines()]


def test_make_test_and_soak_print_skip_reasons():
    for target in ("test", "soak"):
        runs = [line for line in recipe(target) if " -m pytest " in line]
        assert runs, f"make {target} runs no pytest"
        assert all(re.search(r"\s-r\w*s", line) for line in runs), f"make {target}: pytest without -rs"
