"""`tracelab check`."""
from __future__ import annotations

import sys

import click

from tracelab.cli.console import wants_color
from tracelab.cli.engine import engine_options, spark_only, spark_store, target_file_size_option
from tracelab.cli.options import check_writable, echo_document, require_suite_file, store_option, write_output


@click.command()
@click.argument("suite", type=click.Path(dir_okay=False))
@click.option("--category", "categories", multiple=True, help="Check only cases of this category (repeatable).")
@click.option("--case", "cases", multiple=True, help="Check only this case id (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit"]), default="text", show_default=True,
              help="Report format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file instead of standard output.")
@click.option("--all-results", is_flag=True, help="List every result, not only failures and not-exercised passes.")
@click.option("--strict", is_flag=True, help="Count a run with a not-exercised result as failed.")
@click.option("--allow-ineffective", is_flag=True,
              help="Check a suite even when the static sweep finds ineffective or contradictory assertions.")
@click.option("--no-save", is_flag=True, help="Do not write check_runs / check_results to the store.")
@click.option("--since", "since", metavar="RUN_ID", default=None,
              help="Incremental: evaluate only runs ingested after saved check RUN_ID, keep its other verdicts.")
@click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False), default=None,
              help="Compare with this baseline: a significant pass-rate drop fails the check, "
                   "lost coverage warns.")
@click.option("--export-baseline", "export_file", type=click.Path(dir_okay=False), default=None,
              help="Write this check's pass and exercised counts per case and assertion to FILE.")
@target_file_size_option
@store_option
@engine_options
def check(suite: str, categories: tuple[str, ...], cases: tuple[str, ...], fmt: str, output: str | None,
          all_results: bool, strict: bool, allow_ineffective: bool, no_save: bool, since: str | None,
          baseline_file: str | None, export_file: str | None, target_file_size: int | None, store_path: str | None,
          engine: str, spark_master: str | None) -> None:
    """Evaluate SUITE over the stored runs.

    Exit 0 when every checked case passed, 1 when one failed (or, with --baseline, a pass
    rate dropped significantly), 2 for a suite or usage error, 3 for a store error.
    """
    from tracelab.results.baseline import compare, export_baseline, load_baseline
    from tracelab.results.check import check as run_check
    from tracelab.results.report import render_json, render_junit, render_text
    from tracelab.store import open_store

    require_suite_file(suite)
    check_writable(output)
    check_writable(export_file)
    baseline = load_baseline(baseline_file) if baseline_file else None
    spark_only(engine, **{"--target-file-size": target_file_size})
    # the verdict rows the output lists: the text report's examples come with the summaries; JSON
    # and JUnit list failures and not-exercised rows; --all-results and baselines (coverage of every
    # row) need them all. Spark's driver reads only those; `--since` continues from the earlier
    # check's summaries when the output needs none of its rows
    rows = ("all" if all_results or baseline_file or export_file else
            "none" if fmt == "text" else "reported")
    if engine == "spark":
        from tracelab import spark
        from tracelab.spark.layout import TARGET_FILE_SIZE

        run = spark.check(spark_store(store_path), suite, cases=list(cases) or None,
                          categories=list(categories) or None, strict=strict,
                          allow_ineffective=allow_ineffective, save=not no_save, since=since,
                          master=spark_master, rows=rows, target_file_size=target_file_size or TARGET_FILE_SIZE)
    else:
        with open_store(store_path, read_only=no_save, create=False) as store:
            run = run_check(store, suite, cases=list(cases) or None, categories=list(categories) or None,
                            strict=strict, allow_ineffective=allow_ineffective, save=not no_save, since=since,
                            rows="none" if rows == "none" else "all")
    comparison = compare(baseline, run, baseline_file) if baseline is not None and baseline_file else None
    if export_file:
        export_baseline(run, export_file)
    text: str | bytes
    if fmt == "json":
        text = render_json(run, suite, all_results=all_results,
                           baseline=comparison.to_json_dict() if comparison else None)
    elif fmt == "junit":
        text = render_junit(run)
    else:
        text = render_text(run, color=output is None and wants_color(), all_results=all_results)
        if comparison:
            text += comparison.render_text()
    if output is None:
        echo_document(text)
    else:
        write_output(output, text)
    if not run.passed or (comparison and comparison.regressed):
        sys.exit(1)


COMMANDS = [check]
