"""The `tracelab` command: thin click commands over the library, one error boundary.

Each command parses options, calls one library function and formats the result.
`main` maps every `TracelabError` to its exit code with a one-line message.
"""
from __future__ import annotations

import sys

import click

from tracelab import __version__
from tracelab.errors import TracelabError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracelab")
def cli() -> None:
    """Offline replay and analytics of recorded LLM-agent traces.

    Ingest traces into a store, query them with SQL, and check assertion suites
    across every stored run.
    """


def _register() -> None:
    from tracelab.cli import check, cover, data, demo, ingest, query

    for module in (ingest, query, check, cover, data, demo):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI; user errors become a red line and an exit code, never a traceback."""
    try:
        cli.main(args=argv, prog_name="tracelab", standalone_mode=False)
    except TracelabError as exc:
        click.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(0)
