"""`tracelab generate`: a synthetic corpus in one of the input formats."""
from __future__ import annotations

import click


@click.command()
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--episodes", "-n", type=click.IntRange(min=0), default=1000, show_default=True,
              help="How many episodes to write.")
@click.option("--seed", "-s", type=int, default=0, show_default=True,
              help="Random seed: the same seed writes the same file.")
@click.option("--as", "as_format", type=click.Choice(["native", "openai-chat", "anthropic", "otlp"]),
              default="native", show_default=True, help="Write the corpus in this input format.")
def generate(out: str, episodes: int, seed: int, as_format: str) -> None:
    """Write a realistic synthetic corpus (.jsonl, .jsonl.gz or .jsonl.zst), deterministic for a seed."""
    from tracelab.generate import generate as write_corpus

    stats = write_corpus(out, episodes, seed, as_format)
    click.echo(f"wrote {stats.episodes:,} episodes ({stats.steps:,} steps, {stats.bytes:,} bytes) to {out}")


COMMANDS = [generate]
