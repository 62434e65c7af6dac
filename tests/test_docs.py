"""Documentation enforced by tests: every command has help and a line in the README."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tracelab.cli import cli

README = (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_command_has_help_and_is_in_the_readme(name):
    command = cli.commands[name]
    assert command.help and len(command.help.strip()) > 20, f"`tracelab {name}` has no help text"
    assert f"`tracelab {name}" in README, f"`tracelab {name}` is not documented in README.md"
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0
    for param in command.params:
        if param.param_type_name == "option":
            assert param.help, f"`tracelab {name} {param.opts[0]}` has no help text"


def test_every_tracelab_command_the_readme_shows_exists():
    shown = set(re.findall(r"`tracelab ([a-z]+)", README)) | set(re.findall(r"^tracelab ([a-z]+)", README, re.M))
    assert shown - set(cli.commands) == set()
