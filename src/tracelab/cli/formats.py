"""`tracelab formats`: the input formats, what each maps and what it cannot know."""
from __future__ import annotations

import click


@click.command()
def formats() -> None:
    """List the input formats, what each maps, and what it cannot know."""
    from tracelab.formats import all_formats

    for module in all_formats():
        click.secho(module.name, bold=True)
        click.echo(f"  {module.summary}")
        click.echo(f"  maps: {module.maps}")
        click.echo(f"  cannot know: {module.unknown}")


COMMANDS = [formats]
