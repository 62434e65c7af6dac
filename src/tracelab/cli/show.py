"""`tracelab show`: one run in the terminal (rendering only; `tracelab.view.show` reads it)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tracelab.cli.console import plain
from tracelab.cli.options import store_option

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from tracelab.view.show import Run, Step

STATUS_STYLE = {"ok": "green", "error": "red", "denied": "yellow", "missing": "dim"}
EFFECT_STYLE = {"write": "magenta", "read": "cyan"}


@click.command()
@click.argument("episode_id")
@click.option("--check", "check_run", metavar="RUN_ID", default=None,
              help="Mark the steps that failed assertions of this saved check ('latest': the newest).")
@click.option("--full", is_flag=True, help="Show args and results whole instead of clipped to the terminal width.")
@store_option
def show(episode_id: str, check_run: str | None, full: bool, store_path: str | None) -> None:
    """Show one stored run: its header, then every step in order.

    Each step: index, kind, tool name, status, effect, and its args or text (clipped to the
    terminal width; --full for all of it). With --check RUN_ID, the steps where results of that
    saved check failed are marked, with the failing assertions under them, and any text holding
    a string the check found leaked is withheld.
    """
    from rich.text import Text

    from tracelab.cli.console import console
    from tracelab.results.saved import resolve_run
    from tracelab.store import open_store
    from tracelab.view.show import show_run

    with open_store(store_path, read_only=True, create=False) as store:
        if check_run == "latest":
            check_run = resolve_run(store.con, None)[0]
        run = show_run(store, episode_id, check_run)
    out = console()
    for part in render_run(run, full=full):
        # text too large to lay out (LAYOUT_LIMIT) is printed as it is, wrapped by the terminal
        out.print(part, soft_wrap=isinstance(part, Text) and len(part) > LAYOUT_LIMIT)


LAYOUT_LIMIT = 20_000
"""Characters of a step's args or text beyond which `--full` prints it below the table, as it
is: laying out a cell costs time that grows faster than its length (minutes for 50 MB)."""


def render_run(run: Run, *, full: bool = False) -> list[RenderableType]:
    """The header, the run-level failures and the table of steps, as rich renderables."""
    from rich.table import Table
    from rich.text import Text

    parts: list[RenderableType] = [_header(run)]
    if run.check_run_id is not None:
        if not run.checked:
            parts.append(plain(f"check {run.check_run_id} has no result for this run", style="yellow"))
        elif not run.failures:
            parts.append(plain(f"check {run.check_run_id}: every result of this run passed", style="green"))
        else:
            at_steps = len(run.failures) - len(run.run_failures)
            parts.append(plain(f"check {run.check_run_id}: {len(run.failures)} failed results, "
                               f"{at_steps} at a step (marked ✗)", style="bold red"))
        for failure in run.run_failures:
            parts.append(plain(f"  ✗ whole run  {failure.assertion_id}  {failure.reason or ''}", style="red"))
    table = Table(box=None, expand=True, pad_edge=False, show_edge=False, header_style="bold")
    table.add_column("", width=1, no_wrap=True)
    table.add_column("idx", justify="right", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("tool", no_wrap=True, max_width=28, overflow="ellipsis")
    table.add_column("status", no_wrap=True)
    table.add_column("effect", no_wrap=True)
    # time and tokens only when the source recorded them (most formats record neither)
    timed = any(step.offset_ms is not None or step.duration_ms is not None for step in run.steps)
    counted = any(step.tokens is not None for step in run.steps)
    if timed:
        table.add_column("at", justify="right", no_wrap=True)
        table.add_column("took", justify="right", no_wrap=True)
    if counted:
        table.add_column("tokens", justify="right", no_wrap=True)
    table.add_column("args / text", ratio=1, no_wrap=not full, overflow="fold" if full else "ellipsis")
    below: list[tuple[Step, Text]] = []
    blank = [""] * (6 + 2 * timed + counted)
    for step in run.steps:
        failed = bool(step.failures)
        timing = [seconds(step.offset_ms, plus=True), seconds(step.duration_ms)] if timed else []
        tokens = ["" if step.tokens is None else f"{step.tokens:,}"] if counted else []
        content = _content(step, full)
        if full and len(content) > LAYOUT_LIMIT:
            below.append((step, content))
            content = Text(f"({len(content):,} characters: printed below the table)", style="dim")
        table.add_row(Text("✗", style="bold red") if failed else "", str(step.idx), plain(step.kind),
                      _withheld_or(step, "name", step.name or ""), _badge(step.status, STATUS_STYLE),
                      _effect(step), *timing, *tokens, content,
                      style="on grey19" if failed and run.check_run_id else None)
        for failure in step.failures:
            line = plain(f"✗ {failure.assertion_id}  {failure.reason or ''}", style="bold red")
            line.no_wrap, line.overflow = False, "fold"
            table.add_row(*blank, line)
    parts.append(table)
    for step, content in below:
        parts += [Text(f"step {step.idx} ({step.kind}), {len(content):,} characters:", style="bold"), content]
    for name in ("output", "error"):
        value = getattr(run, name)
        if name in run.withheld:
            parts.append(Text(f"{name}: ").append(_notice(run.withheld[name], name)))
        elif value:
            parts.append(Text(f"{name}: ", style="bold").append(_shown(value, full)))
    return parts


def _header(run: Run) -> Text:

    head = plain(run.episode_id, style="bold")
    fields = (("agent", "agent", run.agent), ("", "agent_version", run.agent_version),
              ("model", "model", run.model), ("case", "case_id", run.case_id),
              ("termination", "termination", run.termination),
              ("reward", "", None if run.reward is None else f"{run.reward:g}"), ("steps", "", str(run.n_steps)))
    for label, name, value in fields:
        if not label and name not in run.withheld and (value is None or run.agent is None):
            continue  # the agent's version follows its name, when both are known
        head.append(f"  {label} " if label else " ", style="dim")
        head.append(_notice(run.withheld[name], name) if name in run.withheld
                    else plain(value) if value is not None else "-")
    return head


def _badge(value: str | None, styles: dict[str, str]) -> Text:
    from rich.text import Text

    if value is None:
        return Text("")
    return plain(value, style=styles.get(value, ""))


def _effect(step: Step) -> Text:
    """The step's effect as resolved, with where it comes from: `write · registry`."""
    text = _badge(step.effect, EFFECT_STYLE)
    if step.effect is not None and step.effect_source is not None:
        text.append(f" · {step.effect_source}", style="dim")
    return text


def seconds(ms: float | None, *, plus: bool = False) -> str:
    """A time in milliseconds as a person reads it: `+1.25 s`, `340 ms` (empty: none)."""
    if ms is None:
        return ""
    sign = "+" if plus else ""
    return f"{sign}{ms / 1000:.2f} s" if abs(ms) >= 1000 else f"{sign}{ms:.0f} ms"


def _content(step: Step, full: bool) -> Text:
    from rich.text import Text

    # a withheld notice is shown whole (it says what is missing), whatever the width
    text = Text(no_wrap=False, overflow="fold") if step.withheld else Text()
    pieces: list[Text | str] = [_notice(step.withheld[name], name) for name in ("data", "text", "error")
                                if name in step.withheld]
    shown = (step.args, step.text) if step.kind in ("tool_call", "confirmation") else (step.body,)
    pieces += [_shown(value, full) for value in shown if value]
    if step.error:
        pieces.append(Text("error: ", style="red").append(_shown(step.error, full)))
    for piece in pieces:
        if text:
            text.append("  ")
        text.append(piece)
    return text


def _withheld_or(step: Step, name: str, value: str) -> Text:
    return _notice(step.withheld[name], name) if name in step.withheld else plain(value)


def _notice(strings: tuple[str, ...], field: str) -> Text:

    from tracelab.view.show import withheld_notice

    return plain(withheld_notice(strings, field), style="bold yellow")


def _shown(value: str, full: bool) -> Text:
    """Stored text as printed: whole on its lines with --full; else whitespace runs (newlines
    too) as one space, so a clipped cell shows as much as it can (of its first LAYOUT_LIMIT
    characters: no terminal is wider)."""
    return plain(value, lines=True) if full else plain(" ".join(value[:LAYOUT_LIMIT].split()))


COMMANDS = [show]
