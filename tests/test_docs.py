"""Documentation enforced by tests, item by item (datasette's test_docs.py style).

Every command, option, exit code, assertion type, sequence rule, `expect` key and input
format that exists is documented, or one parametrized case fails naming it; every
document the code cites exists in docs/ with the cited section; every example suite in
the README and docs/ loads as written, and the docs' shell commands run as written.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tests.test_readme import shell_commands
from tracelab import errors
from tracelab.cli import all_commands, cli
from tracelab.formats import all_formats
from tracelab.suite import lint_suite, load_suite
from tracelab.suite.expect import EXPECT_KEYS
from tracelab.suite.families import FAMILIES
from tracelab.suite.rules import RULE_KEYS

README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"


def doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def section(text: str, number: int | str) -> str:
    """The text of `## N. ...` up to the next `## ` heading (the heading included)."""
    match = re.search(rf"^## {number}\. .*?(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"no section '## {number}.'"
    return match.group(0)


def subsection(text: str, heading: str) -> str:
    """The text under `### heading` up to the next `##`/`###` heading."""
    match = re.search(rf"^### {re.escape(heading)}\n.*?(?=^##|\Z)", text, flags=re.M | re.S)
    assert match, f"no section '### {heading}'"
    return match.group(0)


def table_row(text: str, first_cell: str) -> str:
    """The first table row whose first cell holds `first_cell` (e.g. "`args_valid`")."""
    for line in text.splitlines():
        if line.startswith("| ") and first_cell in line.split(" | ")[0]:
            return line
    raise AssertionError(f"no table row for {first_cell}")


# --- commands and options ----------------------------------------------------------------


COMMANDS = all_commands()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help_and_is_in_the_readme(name):
    command = COMMANDS[name]
    assert command.help and len(command.help.strip()) > 20, f"`tracelab {name}` has no help text"
    assert f"`tracelab {name}" in README, f"`tracelab {name}` is not documented in README.md"
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0
    for param in command.params:
        if param.param_type_name == "option":
            assert param.help, f"`tracelab {name} {param.opts[0]}` has no help text"


def test_every_tracelab_command_the_readme_shows_exists():
    shown = set(re.findall(r"`tracelab ([a-z]+)", README)) | set(re.findall(r"^tracelab ([a-z]+)", README, re.M))
    assert shown - set(COMMANDS) == set()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_and_option_is_in_docs_cli(name):
    text = subsection(section(doc("cli.md"), 2), f"`tracelab {name}`")
    for param in COMMANDS[name].params:
        if param.param_type_name == "option" and param.opts[0] != "--help":
            assert f"`{param.opts[0]}`" in text, f"docs/cli.md: `tracelab {name} {param.opts[0]}`"


EXIT_CODES = sorted({0, 1} | {cls.exit_code for cls in vars(errors).values()
                              if isinstance(cls, type) and issubclass(cls, errors.TracelabError)})


@pytest.mark.parametrize("code", EXIT_CODES)
def test_every_exit_code_is_in_docs_cli(code):
    row = table_row(section(doc("cli.md"), 3), str(code))
    assert row.split(" | ")[0] == f"| {code}" and len(row.split(" | ")[1]) > 10


def test_the_json_output_keys_are_documented():
    text = section(doc("cli.md"), 4)
    for key in ("tracelab_version", "suite_sha256", "run_id", "summary", "cases_passed",
                "runs_passed", "not_exercised", "unknown", "min_pass_rate", "exercised", "reason",
                "permission_failures", "failures", "severity", "failed_runs", "same_write", "examples", "also"):
        assert f'"{key}"' in text, key


# --- the suite vocabulary ------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(FAMILIES))
def test_every_assertion_type_is_documented_with_its_keys_meaning_and_exercised_rule(kind):
    suites = doc("suites.md")
    keys_row = table_row(subsection(section(suites, 3), "Typed assertions (`assertions:`)"),
                         f"`{kind}`")
    for key in FAMILIES[kind].keys:
        assert f"`{key}`" in keys_row, f"docs/suites.md §3: {kind} key {key!r}"
    meaning = [line for line in section(suites, 3).splitlines()
               if line.startswith("| ") and f"`{kind}`" in line.split(" | ")[0]]
    assert len(meaning) >= 2, f"docs/suites.md §3: no 'passes when' row for {kind}"
    exercised = table_row(section(suites, 5), f"`{kind}`")
    assert exercised == f"| `{kind}` | {FAMILIES[kind].exercised} |"


@pytest.mark.parametrize("kind", list(RULE_KEYS))
def test_every_sequence_rule_is_documented_with_its_keys(kind):
    row = table_row(section(doc("suites.md"), 4), f"`{kind}`")
    for key in RULE_KEYS[kind]:
        assert f"`{key}`" in row, f"docs/suites.md §4: rule {kind} key {key!r}"
    assert len(row.split(" | ")[-1]) > 10, f"docs/suites.md §4: what {kind} holds is missing"


@pytest.mark.parametrize("key", EXPECT_KEYS)
def test_every_expect_key_is_documented(key):
    row = table_row(section(doc("suites.md"), 2), f"`{key}`")
    assert len(row.split(" | ")) == 4, f"docs/suites.md §2: {key} needs type, ids and meaning"


@pytest.mark.parametrize("key", ["tool", "tool_glob", "args_match", "status", "any_of"])
def test_every_matcher_key_is_documented(key):
    assert f"`{key}`" in subsection(section(doc("suites.md"), 3), "Tool matchers")
    assert f"`{key}`" in section(doc("suites.md"), 8) or key in ("tool", "status", "args_match")


@pytest.mark.parametrize("name", [module.name for module in all_formats()])
def test_every_input_format_is_documented(name):
    text = doc("formats.md")
    assert f"### `{name}`" in text, f"docs/formats.md has no section for {name}"
    entry = subsection(text, f"`{name}`")
    assert "**Maps**" in entry and "**Cannot know**" in entry


# --- citations ---------------------------------------------------------------------------

CITATION = re.compile(r"(?<![\w/.-])((?:docs/)?[A-Za-z][\w-]*\.md)(?:,? §(\d+))?")


NOT_CITATIONS = frozenset({"AGENTS.md"})
"""File names that formats record (Codex's AGENTS.md instructions), not documents the code cites."""


def citations() -> list[tuple[str, str, str | None]]:
    """(file:line, document, section) of every `*.md` the code in src/ and sql/ cites."""
    found = []
    for root in ("src", "sql"):
        for path in sorted((REPO / root).rglob("*")):
            if path.suffix not in (".py", ".sql") or "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            # a citation may wrap: `docs/suites.md\n§3`
            for match in CITATION.finditer(re.sub(r"\.md\n\s*(?:#|--)?\s*§", ".md §", text)):
                if match.group(1) in NOT_CITATIONS:
                    continue
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{path.relative_to(REPO)}:{line}", match.group(1), match.group(2)))
    return found


def test_the_code_cites_documents():
    assert len(citations()) > 50


@pytest.mark.parametrize(("where", "document", "number"), citations())
def test_every_cited_document_is_in_docs(where, document, number):
    path = REPO / document
    # the repository's top-level documents (BENCHMARKS.md, README.md) are cited as they are
    assert document.startswith("docs/") or path.is_file(), f"{where}: cite {document} as docs/{document}"
    assert path.is_file(), f"{where}: {document} does not exist"
    if number is not None:
        text = path.read_text(encoding="utf-8")
        assert re.search(rf"^(## {number}\. |{number}\. \*\*)", text, flags=re.M), (
            f"{where}: {document} has no section §{number}")


# --- examples are accepted as written ----------------------------------------------------

DOC_FILES = ["README.md", *(f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")))]


def suite_examples() -> list[tuple[str, int, str]]:
    """(file, index, text) of every YAML block that is a whole suite (has a top-level `suite:`)."""
    examples = []
    for name in DOC_FILES:
        blocks = re.findall(r"```yaml\n(.*?)```", (REPO / name).read_text(encoding="utf-8"), re.S)
        examples += [(name, i, b) for i, b in enumerate(blocks) if re.match(r"(suite|agent):", b)]
    return examples


def test_the_readme_and_docs_show_suites():
    assert {name for name, _, _ in suite_examples()} >= {"README.md", "docs/suites.md"}


@pytest.mark.parametrize(("name", "index", "text"), suite_examples(),
                         ids=[f"{n}[{i}]" for n, i, _ in suite_examples()])
def test_every_example_suite_loads_and_passes_the_static_sweep(tmp_path, name, index, text):
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    assert lint_suite(load_suite(path)) == []


def test_docs_shell_commands_run_as_written(tmp_path):
    os.symlink(REPO / "sample_traces", tmp_path / "sample_traces")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("TRACELAB_STORE", None)
    commands = [c for name in DOC_FILES[1:] for c in shell_commands(doc(name.removeprefix("docs/")))]
    assert any(c.startswith("tracelab check") for c in commands)
    for command in commands:
        result = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True,
                                text=True, timeout=300)
        assert result.returncode in (0, 1), f"{command}: exit {result.returncode}\n{result.stderr}"
        assert "Traceback" not in result.stderr
