"""Spark: `ingest` and `check` with `--engine spark` (local[2]) next to the DuckDB engine, per-run costs.

The corpus is `make bench`'s generated native corpus (benchmarks/work/corpus-N-7.jsonl, one run
per line) cut into files of EPISODES_PER_FILE runs (a Spark ingest spreads files over tasks).
Each side runs in a fresh subprocess, as a user would; the Spark processes start their session
first (`startup`, the JVM and the Python workers), then time the engine call alone. Inside it,
`tracelab.spark.engine.TIMINGS` gives the time in Spark jobs (the tasks: work that adds executors
would share); the rest of the call is the driver's (work that stays on one machine). The check is
the CLI's text report, saved (`rows="none"`: the driver reads the tasks' summaries, no verdict
row); its verdicts are compared with the DuckDB engine's afterwards, from the saved
`check_results`. These are the figures the closing extrapolation to 100M runs is computed from.
The DuckDB engine's store is `make bench`'s (benchmarks/work/check-corpus-N-7.duckdb, the same
corpus) when it exists, else ingested here (then its ingest is timed).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from common import WORK, Run, corpus, measure, python, tracelab

SUITE = WORK.parent / "suite.yaml"
MASTER = "local[2]"
CORES = 2
EPISODES_PER_FILE = 25_000
TARGET_RUNS = 100_000_000

STARTUP = ("import time\nfrom tracelab.spark import engine\n"
           f"engine.session({MASTER!r}).range(4).collect()\n")
TIMED = ("import json, resource, sys, time\nfrom tracelab.spark import engine\n"
         f"engine.session({MASTER!r}).range(4).collect()\n"
         "cpu = resource.getrusage(resource.RUSAGE_SELF)\n"
         "clock = time.perf_counter()\n")
CALL_DONE = ("wall = time.perf_counter() - clock\n"
             "used = resource.getrusage(resource.RUSAGE_SELF)\n"
             "driver_cpu = used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime\n")
INGEST = (TIMED + f"r = engine.ingest(sys.argv[1], [sys.argv[2]], master={MASTER!r})\n" + CALL_DONE +
          "print(json.dumps({'added': r.added, 'wall_s': wall, 'driver_cpu_s': driver_cpu, **engine.TIMINGS}))\n")
DIGEST = ("def digest(frame):\n"
          "    # order-free: the wrapping sum of a fixed-seed hash of every verdict row\n"
          "    import polars as pl\n"
          "    from tracelab.results.saved import RESULT_COLUMNS\n"
          "    frame = frame.select(RESULT_COLUMNS).cast({'step_idx': pl.Int32, 'passed': pl.Boolean})\n"
          "    return int(frame.hash_rows(seed=42).sum())\n")
CHECK = (TIMED + DIGEST +
         f"run = engine.check(sys.argv[1], sys.argv[2], master={MASTER!r}, rows='none', allow_ineffective=True)\n"
         + CALL_DONE +
         "from tracelab.store import open_store\n"
         "with open_store(sys.argv[1]) as store:\n"
         "    saved = store.sql('SELECT * FROM check_results WHERE run_id = ?', [run.run_id])\n"
         "print(json.dumps({'rows': saved.height, 'digest': digest(saved), 'wall_s': wall, "
         "'driver_cpu_s': driver_cpu, 'passed': run.passed, **engine.TIMINGS}))\n")
DUCK_CHECK = ("import json, sys\nfrom tracelab.results.check import check\n" + DIGEST +
              "run = check(sys.argv[1], sys.argv[2], save=False, allow_ineffective=True)\n"
              "print(json.dumps({'rows': run.verdicts.height, 'digest': digest(run.verdicts), "
              "'passed': run.passed}))\n")


def split_corpus(episodes: int) -> tuple[Path, int]:
    """`make bench`'s corpus as files of EPISODES_PER_FILE runs (cut once, cached in benchmarks/work)."""
    folder = WORK / f"spark-corpus-{episodes}-7"
    files = max(4, -(-episodes // EPISODES_PER_FILE))
    if not folder.is_dir() or len(list(folder.glob("*.jsonl"))) != files:
        source = corpus(episodes)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        per = -(-episodes // files)
        print(f"cutting {source} into {files} files -> {folder}", flush=True)
        with open(source, "rb") as lines:
            for i in range(files):
                with open(folder / f"part-{i:04d}.jsonl", "wb") as out:
                    for _ in range(per):
                        line = lines.readline()
                        if not line:
                            break
                        out.write(line)
    size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    return folder, size


def _timed_json(argv: list[str], ok_exit: tuple[int, ...] = (0,)) -> tuple[Run, dict]:
    """Run a snippet that prints one JSON line last; its Run and that JSON."""
    import os
    import time

    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=os.environ.copy())
    seconds = time.perf_counter() - start
    if proc.returncode not in ok_exit:
        raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr[-2000:]}")
    return Run(round(seconds, 3), 0.0), json.loads(proc.stdout.strip().splitlines()[-1])


def run(episodes: int) -> dict[str, object]:
    folder, size = split_corpus(episodes)
    duck_store = WORK / f"check-corpus-{episodes}-7.duckdb"
    spark_store = WORK / f"spark-bench-{episodes}.delta"
    shutil.rmtree(spark_store, ignore_errors=True)
    startup = measure(python(STARTUP))
    duck_ingest = None
    if not duck_store.exists():
        duck_ingest = measure(tracelab("ingest", str(corpus(episodes)), "--store", str(duck_store), "-q"))
    spark_ingest, ingest_t = _timed_json(python(INGEST) + [str(spark_store), str(folder)])
    duck_check, duck_t = _timed_json(python(DUCK_CHECK) + [str(duck_store), str(SUITE)])
    spark_check, check_t = _timed_json(python(CHECK) + [str(spark_store), str(SUITE)], ok_exit=(0,))
    assert ingest_t["added"] == episodes, ingest_t
    # the same verdicts, row for row (the tests compare them field by field on small corpora)
    assert (duck_t["rows"], duck_t["digest"], duck_t["passed"]) == (
        check_t["rows"], check_t["digest"], check_t["passed"]), (duck_t, check_t)
    check_t.update(evidence(spark_store))
    return {
        "episodes": episodes, "files": len(list(folder.glob("*.jsonl"))), "corpus_mb": round(size / 1e6, 1),
        "master": MASTER, "startup": startup,
        "duckdb_ingest": duck_ingest, "spark_ingest": spark_ingest, "ingest_timings": ingest_t,
        "duckdb_check": duck_check, "spark_check": spark_check, "check_timings": check_t,
        "identical_verdicts": True,
        **_costs(episodes, ingest_t, check_t),
    }


def evidence(store: Path) -> dict[str, object]:
    """What the limits of the closing note rest on, read from the Delta store at its head: the
    committed data files and megabytes of each table (file sizes) and how evenly its `ep_bucket`
    partitions hold the runs (skew)."""
    import duckdb
    import pyarrow as pa
    from deltalake import DeltaTable

    from tracelab.store.delta import read_head, table_datasets

    head = read_head(store)
    files, mb = {}, {}
    for table, version in sorted(head.versions.items()):
        actions = pa.table(DeltaTable(f"{head.url}/{table}", version=version).get_add_actions(flatten=True))
        files[table] = actions.num_rows
        mb[table] = round(sum(actions.column("size_bytes").to_pylist()) / 1e6, 1)
    con = duckdb.connect()
    con.register("episodes", table_datasets(store)["episodes"])
    sizes = [n for (n,) in con.execute("SELECT count(*) FROM episodes GROUP BY ep_bucket").fetchall()]
    mean = sum(sizes) / len(sizes)
    return {"table_files": files, "table_mb": mb, "buckets": len(sizes),
            "bucket_runs_max_over_mean": round(max(sizes) / mean, 3),
            "load": Path("/proc/loadavg").read_text().split()[:3]}


def _costs(episodes: int, ingest_t: dict, check_t: dict) -> dict[str, object]:
    """Per-run costs: core-microseconds in the tasks, microseconds on the driver (the engine call's
    wall time outside Spark jobs, and the driver process's CPU)."""
    ingest_driver_s = ingest_t["wall_s"] - ingest_t["ingest_spark_s"]
    check_driver_s = check_t["wall_s"] - check_t["check_spark_s"]
    return {"ingest_task_core_us_per_run": round(ingest_t["ingest_spark_s"] * CORES / episodes * 1e6, 1),
            "ingest_driver_s": round(ingest_driver_s, 3),
            "ingest_driver_us_per_run": round(ingest_driver_s / episodes * 1e6, 2),
            "ingest_driver_cpu_s": round(ingest_t["driver_cpu_s"], 3),
            "check_task_core_us_per_run": round(check_t["check_spark_s"] * CORES / episodes * 1e6, 1),
            "check_driver_s": round(check_driver_s, 3),
            "check_driver_us_per_run": round(check_driver_s / episodes * 1e6, 2),
            "check_driver_cpu_s": round(check_t["driver_cpu_s"], 3),
            "verdict_rows_per_run": round(check_t["rows"] / episodes, 2)}


def estimate(small: dict, large: dict) -> dict[str, object]:
    """100M runs from two sizes: the tasks' core time per run (the larger run's) over the slots;
    the driver's time as the larger run's plus its growth per run between the two (zero or less:
    none), times the runs added."""
    out: dict[str, object] = {}
    runs = large["episodes"] - small["episodes"]
    for side in ("ingest", "check"):
        growth = max(0.0, (large[f"{side}_driver_s"] - small[f"{side}_driver_s"]) / runs)
        out[f"{side}_driver_growth_us_per_run"] = round((large[f"{side}_driver_s"] - small[f"{side}_driver_s"])
                                                        / runs * 1e6, 3)
        out[f"{side}_driver_h"] = round((large[f"{side}_driver_s"] + growth * (TARGET_RUNS - large["episodes"]))
                                        / 3600, 4)
        for executors, cores in ((10, 8), (100, 8)):
            out[f"{side}_tasks_h_{executors}x{cores}"] = round(
                large[f"{side}_task_core_us_per_run"] * TARGET_RUNS / (executors * cores) / 1e6 / 3600, 2)
    t = large["check_timings"]
    target_mb = 128
    out["files_at_100m"] = {table: round(mb * TARGET_RUNS / large["episodes"] / target_mb) + 80
                            for table, mb in t["table_mb"].items()
                            if table in ("episodes", "steps", "tool_calls", "check_results")}
    return out


def summary(f: dict) -> str:
    duck_ingest = f["duckdb_ingest"].seconds if f["duckdb_ingest"] else "not re-measured"
    return (f"spark ({f['master']}, {f['episodes']:,} runs in {f['files']} files, {f['corpus_mb']} MB): "
            f"ingest {round(f['ingest_timings']['wall_s'], 1)} s (DuckDB {duck_ingest}), check "
            f"{round(f['check_timings']['wall_s'], 1)} s (DuckDB {f['duckdb_check'].seconds} s), Spark startup "
            f"{f['startup'].seconds} s; per run: ingest {f['ingest_task_core_us_per_run']} core-us in tasks + "
            f"{f['ingest_driver_us_per_run']} us on the driver ({f['ingest_driver_s']} s, CPU "
            f"{f['ingest_driver_cpu_s']} s), check {f['check_task_core_us_per_run']} core-us + "
            f"{f['check_driver_us_per_run']} us ({f['check_driver_s']} s, CPU {f['check_driver_cpu_s']} s); "
            f"files per table {f['check_timings']['table_files']}, MB {f['check_timings']['table_mb']}; "
            f"largest bucket {f['check_timings']['bucket_runs_max_over_mean']}x the mean; "
            f"load {f['check_timings']['load']}")


def _ratio(ours: float, theirs: object) -> str:
    seconds = theirs if isinstance(theirs, (int, float)) else float(str(theirs).split()[0])
    return f"{round(ours / seconds, 2)}x the time"


def rows(small: dict, large: dict, duckdb_ingest: str) -> list[str]:
    """BENCHMARKS.md's two Spark rows (the larger size) and the closing note (100M runs);
    `duckdb_ingest`: the DuckDB engine's ingest of the same corpus, when this run did not time it."""
    e = estimate(small, large)
    it, ct = large["ingest_timings"], large["check_timings"]
    duck = f"{large['duckdb_ingest'].seconds} s" if large["duckdb_ingest"] else duckdb_ingest
    files = ", ".join(f"{t} {n}" for t, n in ct["table_files"].items() if n)
    return [
        f"| `ingest --engine spark` ({large['master']}) vs DuckDB engine | {large['episodes']:,} runs, "
        f"{large['files']} files, {large['corpus_mb']} MB | {round(it['wall_s'], 1)} s "
        f"({large['ingest_task_core_us_per_run']} core-us/run in tasks, {large['ingest_driver_us_per_run']} us/run "
        f"on the driver: {large['ingest_driver_s']} s, {large['ingest_driver_cpu_s']} CPU s; at "
        f"{small['episodes']:,} runs {small['ingest_driver_s']} s) | {duck} | {_ratio(it['wall_s'], duck)} | "
        "driver <= 1 us/run (issue 28); scale-out, not speed |",
        f"| `check --engine spark` ({large['master']}), saved, text report, vs DuckDB engine (not saved), "
        f"identical verdicts | {large['episodes']:,} runs, {ct['rows']:,} verdicts | {round(ct['wall_s'], 1)} s "
        f"({large['check_task_core_us_per_run']} core-us/run in tasks, {large['check_driver_us_per_run']} us/run "
        f"on the driver: {large['check_driver_s']} s, {large['check_driver_cpu_s']} CPU s; at "
        f"{small['episodes']:,} runs {small['check_driver_s']} s; Spark startup {large['startup'].seconds} s) | "
        f"{large['duckdb_check'].seconds} s | {_ratio(ct['wall_s'], large['duckdb_check'].seconds)} | "
        "driver <= 1 us/run (issue 28); scale-out, not speed |",
        "",
        f"Spark at 100M runs (issue 28; extrapolated from the two sizes above, {small['episodes']:,} and "
        f"{large['episodes']:,} runs): the tasks' time is linear in runs: on 10 executors x 8 cores ingest "
        f"{e['ingest_tasks_h_10x8']} h and check {e['check_tasks_h_10x8']} h, on 100 x 8 {e['ingest_tasks_h_100x8']} h "
        f"and {e['check_tasks_h_100x8']} h (with at least as many `ep_bucket` partitions as task slots). The driver's "
        f"time barely grows: {small['ingest_driver_s']} s -> {large['ingest_driver_s']} s for ingest "
        f"({e['ingest_driver_growth_us_per_run']} us per added run) and {small['check_driver_s']} s -> "
        f"{large['check_driver_s']} s for check ({e['check_driver_growth_us_per_run']} us), so at 100M about "
        f"{round(e['ingest_driver_h'] * 3600)} s and {round(e['check_driver_h'] * 3600)} s even if that growth "
        f"were linear in runs. Committed files per table at {large['episodes']:,} runs: {files}; at 100M "
        f"(128 MB files over 80 buckets, each bucket's last file partly full) about "
        + ", ".join(f"{t} {n:,}" for t, n in e["files_at_100m"].items()) + ".",
    ]


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [100_000]
    found = [run(n) for n in sizes]
    for f in found:
        print(summary(f), flush=True)
    print(json.dumps(found, default=lambda o: o.__dict__, indent=1))
    if len(found) > 1:
        print(json.dumps(estimate(found[0], found[-1]), indent=1))
        print("\n".join(rows(found[0], found[-1], "not re-measured")))
