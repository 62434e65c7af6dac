"""README "Guarantees" names, for each guarantee, the tests that prove it: each must exist."""
from __future__ import annotations

import re

from tests.conftest import REPO


def _named_tests() -> list[tuple[str, str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Guarantees\n", 1)[1].split("\n## ", 1)[0]
    named = []
    for row in section.splitlines():
        path = None
        for ref in re.findall(r"`((?:tests/[\w/]+\.py)?::\w+)`", row):
            file, name = ref.split("::")
            path = file or path  # `::name` continues the file named before it in the row
            named.append((path, name))
    return named


def test_every_test_the_guarantees_name_exists():
    named = _named_tests()
    assert len(named) >= 30
    missing = [(path, name) for path, name in named
               if not re.search(rf"^def {name}\(", (REPO / path).read_text(encoding="utf-8"), re.MULTILINE)]
    assert missing == []
