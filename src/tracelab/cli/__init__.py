"""The `tracelab` command: thin click commands over the library, one error boundary.

Each command parses options, calls one library function and formats the result.
The group itself is the error boundary: every `TracelabError` becomes its exit code
and a one-line message, never a traceback.
"""
from __future__ import annotations

import sys

import click

from tracelab import __version__
from tracelab.errors import StoreError, TracelabError


class UserFacingError(click.ClickException):
    """A `TracelabError` on its way out: a red one-line message and the error's exit code."""

    def __init__(self, error: TracelabError) -> None:
        super().__init__(str(error))
        # click declares exit_code a ClassVar, yet reads it from the instance: one class, any code
        self.exit_code = error.exit_code  # type: ignore[misc]

    def show(self, file: object = None) -> None:
        click.secho(f"error: {self.message}", fg="red", err=True)


class _ErrorBoundary(click.Group):
    """The one place where domain errors become exit codes (so CliRunner sees what users see)."""

    def invoke(self, ctx: click.Context) -> object:
        import duckdb

        try:
            return super().invoke(ctx)
        except TracelabError as exc:
            raise UserFacingError(exc) from None
        except duckdb.IOException as exc:
            # disk full, a file vanished, a lock taken mid-way: the store, not the user's input
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserFacingError(StoreError(f"store I/O failed: {first}")) from None


@click.group(cls=_ErrorBoundary, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracelab")
def cli() -> None:
    """Offline replay and analytics of recorded LLM-agent traces.

    Ingest traces into a store, query them with SQL, and check assertion suites
    across every stored run.
    """


def _register() -> None:
    from tracelab.cli import check, cover, data, demo, effects, ingest, query

    for module in (ingest, query, check, cover, effects, data, demo):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `tracelab` command."""
    try:
        cli.main(args=argv, prog_name="tracelab")
    except BrokenPipeError:
        sys.exit(0)
