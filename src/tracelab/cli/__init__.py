"""The `tracelab` command: thin click commands over the library, one error boundary.

Each command parses options, calls one library function and formats the result.
The group itself is the error boundary: every `TracelabError` becomes its exit code
and a one-line message, never a traceback; a damaged store is exit 3 and Ctrl-C or
SIGTERM exit 130 (docs/cli.md), each on one line.

The top of the stack: may import every package (and `click`, which nothing else imports).
"""
from __future__ import annotations

import atexit
import errno
import gc
import importlib
import signal
import sys
import threading
from pathlib import Path

import click

from tracelab.cli.options import STORE_KEY, no_color
from tracelab.errors import Interrupted, TracelabError, interrupt_queries, is_interrupt, out_of_file_handles
from tracelab.version import __version__

_signal_received: list[str] = []
"""The name of the signal that stopped the command (SIGTERM arrives as a KeyboardInterrupt)."""


class UserFacingError(click.ClickException):
    """A `TracelabError` on its way out: a red one-line message and the error's exit code."""

    def __init__(self, error: TracelabError) -> None:
        super().__init__(str(error))
        # click declares exit_code a ClassVar, yet reads it from the instance: one class, any code
        self.exit_code = error.exit_code  # type: ignore[misc]

    def show(self, file: object = None) -> None:
        click.secho(f"error: {self.message}", fg="red", err=True, color=False if no_color() else None)


def _interrupted(ctx: click.Context) -> Interrupted:
    """The one line an interrupt that no library code summarised ends with."""
    how = _signal_received[0] if _signal_received else "SIGINT"
    return Interrupted(f"interrupted ({how}): `tracelab {ctx.invoked_subcommand}` stopped before it finished; "
                       "the store holds only what was committed before it")


COMMAND_MODULES = {"ingest": "ingest", "sql": "query", "info": "query", "export": "query", "check": "check",
                   "cover": "cover", "lint": "cover", "effects": "effects", "generate": "generate",
                   "formats": "formats", "demo": "demo", "show": "show", "view": "view"}
"""Each command's module (`tracelab.cli.<module>`, whose COMMANDS hold it): a command imports its
own module only, not every command's (their imports would slow every short command's start)."""


class _ErrorBoundary(click.Group):
    """The one place where domain errors become exit codes (so CliRunner sees what users see).

    Its commands are loaded when first looked up (`COMMAND_MODULES`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.commands.keys() | COMMAND_MODULES.keys())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            module = importlib.import_module(f"tracelab.cli.{COMMAND_MODULES[cmd_name]}")
            for command in module.COMMANDS:
                self.add_command(command)
        return self.commands.get(cmd_name)

    def make_context(self, info_name, args, parent=None, **extra):  # type: ignore[no-untyped-def]
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except KeyboardInterrupt:
            raise UserFacingError(Interrupted("interrupted before the command started; nothing was done")) from None

    def invoke(self, ctx: click.Context) -> object:
        import duckdb

        from tracelab.store import damaged_store_error, default_store_path

        try:
            return super().invoke(ctx)
        except TracelabError as exc:
            raise UserFacingError(exc) from None
        except (KeyboardInterrupt, RuntimeError, duckdb.InterruptException) as exc:
            if not is_interrupt(exc):
                raise
            raise UserFacingError(_interrupted(ctx)) from None
        except OSError as exc:
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            raise UserFacingError(out_of_file_handles(ctx.invoked_subcommand)) from None
        except duckdb.Error as exc:
            # disk full, a damaged block, a file vanished, a lock taken mid-way: the store, not
            # the user's input. The message never quotes stored values (damaged_store_error).
            store = Path(ctx.meta[STORE_KEY] or default_store_path()) if STORE_KEY in ctx.meta else None
            raise UserFacingError(damaged_store_error(exc, store)) from None


@click.group(cls=_ErrorBoundary, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracelab")
def cli() -> None:
    """Offline replay and analytics of recorded LLM-agent traces.

    Ingest traces into a store, query them with SQL, and check assertion suites
    across every stored run.
    """


def all_commands() -> dict[str, click.Command]:
    """Every command of `tracelab`, by name (each module loaded)."""
    return {name: command for name in cli.list_commands(click.Context(cli))
            if (command := cli.get_command(click.Context(cli), name)) is not None}


# At exit, the collector would walk every object of Polars' and DuckDB's modules (most of a
# short command's teardown) only to find no garbage worth
# collecting in a process that is ending: frozen, they are left to the process's end. Objects
# still close through their reference counts as before.
atexit.register(gc.freeze)


def _on_signal(signum: int, frame: object) -> None:
    """Ctrl-C and SIGTERM: the same rollbacks, the same one line, exit 130.

    Running DuckDB queries are interrupted first (`interrupt_queries`): the KeyboardInterrupt
    raised here alone does not always stop one.
    """
    if signum == signal.SIGTERM:
        _signal_received[:] = ["SIGTERM"]
    interrupt_queries()
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `tracelab` command."""
    _signal_received.clear()
    handle = threading.current_thread() is threading.main_thread()  # only it may set handlers
    signals = (signal.SIGTERM, signal.SIGINT) if handle else ()
    previous = {signum: signal.signal(signum, _on_signal) for signum in signals}
    try:
        # NO_COLOR: every click.echo and secho of the command, through its context
        cli.main(args=argv, prog_name="tracelab", color=False if no_color() else None)
    except BrokenPipeError:
        sys.exit(0)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
