"""The terminal: its width and whether to colour, for every command that draws with rich."""
from __future__ import annotations

import os
import shutil
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

PIPE_WIDTH = 200
"""Columns for output that goes to no terminal (a pipe, a file), unless $COLUMNS says otherwise."""


def wants_color(stream: IO[str] | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    from tracelab.cli.options import no_color

    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not no_color()


def terminal_width(stream: IO[str] | None = None, fallback: int = PIPE_WIDTH) -> int:
    """The terminal's columns ($COLUMNS first); `fallback` when the output is not a terminal."""
    stream = stream or sys.stdout
    if os.environ.get("COLUMNS", "").isdigit():
        return max(int(os.environ["COLUMNS"]), 20)
    if stream.isatty():
        return max(shutil.get_terminal_size((fallback, 24)).columns, 20)
    return fallback


def console(stream: IO[str] | None = None, *, color: bool | None = None, width: int | None = None) -> Console:
    """A rich console writing to `stream` (standard output) at the terminal's width."""
    from rich.console import Console

    stream = stream or sys.stdout
    color = wants_color(stream) if color is None else color
    return Console(file=stream, width=width or terminal_width(stream), force_terminal=color,
                   no_color=not color, color_system="auto" if color else None, highlight=False,
                   soft_wrap=False, emoji=False, markup=False)  # stored text is never markup


def plain(value: object, *, lines: bool = False, style: str = "") -> Text:
    """A stored string as rich text to print: every control character and bidi override escaped
    visibly (`results.report.printable`, as every text report prints them) and never read as
    markup (`[bold]`, `[link=...]` stay text). Every command that draws stored strings with
    rich (show, sql and effects tables) passes them through this. `lines`: keep newlines."""
    from rich.text import Text

    from tracelab.results.report import printable

    return Text(printable(str(value), lines=lines), style=style)
