"""Spark: `ingest` and `check` with `--engine spark` (local[2]) next to the DuckDB engine, per-run costs.

The corpus is the generated native corpus cut into files (a Spark ingest spreads files over
tasks; one file is one task's work). Each side runs in a fresh subprocess, as a user would: the
Spark figures include starting the JVM and the Python workers, measured alone as `startup`.
Inside the Spark runs, `tracelab.spark.engine.TIMINGS` splits the time between the tasks (work
that adds executors would share) and the driver (work that stays on one machine): the figures
the closing extrapolation to 100M runs is computed from.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from common import WORK, Run, measure, python, tracelab

SUITE = WORK.parent / "suite.yaml"
MASTER = "local[2]"
CORES = 2
EPISODES_PER_FILE = 25_000
TARGET_RUNS = 100_000_000

STARTUP = ("import time\nfrom tracelab.spark import engine\n"
           f"engine.session({MASTER!r}).range(4).collect()\n")
INGEST = ("import json, sys\nfrom tracelab.spark import engine\n"
          f"r = engine.ingest(sys.argv[1], [sys.argv[2]], master={MASTER!r})\n"
          "print(json.dumps({'added': r.added, **engine.TIMINGS}))\n")
DIGEST = ("def digest(frame):\n"
          "    # order-free: the wrapping sum of a fixed-seed hash of every verdict row\n"
          "    return int(frame.hash_rows(seed=42).sum())\n")
CHECK = ("import json, sys\nfrom tracelab.spark import engine\n" + DIGEST +
         f"run = engine.check(sys.argv[1], sys.argv[2], save=False, master={MASTER!r})\n"
         "print(json.dumps({'rows': run.verdicts.height, 'digest': digest(run.verdicts), **engine.TIMINGS}))\n")
DUCK_CHECK = ("import json, sys\nfrom tracelab.results.check import check\n" + DIGEST +
              "run = check(sys.argv[1], sys.argv[2], save=False)\n"
              "print(json.dumps({'rows': run.verdicts.height, 'digest': digest(run.verdicts)}))\n")


def split_corpus(episodes: int) -> tuple[object, int]:
    """The corpus as files of EPISODES_PER_FILE episodes (generated once, cached in benchmarks/work)."""
    folder = WORK / f"spark-corpus-{episodes}"
    files = max(4, -(-episodes // EPISODES_PER_FILE))
    if not folder.is_dir() or len(list(folder.glob("*.jsonl"))) != files:
        shutil.rmtree(folder, ignore_errors=True)
        print(f"generating {episodes:,} episodes in {files} files -> {folder}", flush=True)
        per = -(-episodes // files)
        for i in range(files):
            n = min(per, episodes - i * per)
            subprocess.run(tracelab("generate", str(folder / f"part-{i:04d}.jsonl"), "--episodes", str(n),
                                    "--seed", str(1000 + i)), check=True, stdout=subprocess.DEVNULL)
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
    duck_store = WORK / f"spark-bench-{episodes}.duckdb"
    spark_store = WORK / f"spark-bench-{episodes}.delta"
    for path in (duck_store, spark_store):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    startup = measure(python(STARTUP))
    duck_ingest = measure(tracelab("ingest", str(folder), "--store", str(duck_store), "-q"))
    spark_ingest, ingest_t = _timed_json(python(INGEST) + [str(spark_store), str(folder)])
    duck_check, duck_t = _timed_json(python(DUCK_CHECK) + [str(duck_store), str(SUITE)])
    spark_check, check_t = _timed_json(python(CHECK) + [str(spark_store), str(SUITE)])
    assert ingest_t["added"] == episodes, ingest_t
    # the same verdicts, row for row (the tests compare them field by field on small corpora)
    assert (duck_t["rows"], duck_t["digest"]) == (check_t["rows"], check_t["digest"]), (duck_t, check_t)
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
    """What the limits of the closing note rest on, read from the Delta store at its head: its
    committed data files per table (small files) and how evenly its `ep_bucket` partitions hold
    the runs (skew)."""
    import duckdb
    import pyarrow as pa
    from deltalake import DeltaTable

    from tracelab.store import PARTITIONED
    from tracelab.store.delta import read_head, table_datasets

    head = read_head(store)
    parts = {table: pa.table(DeltaTable(f"{head.url}/{table}", version=head.versions[table])
                             .get_add_actions(flatten=True)).num_rows for table in PARTITIONED}
    con = duckdb.connect()
    con.register("episodes", table_datasets(store)["episodes"])
    sizes = [n for (n,) in con.execute("SELECT count(*) FROM episodes GROUP BY ep_bucket").fetchall()]
    mean = sum(sizes) / len(sizes)
    return {"part_files": parts, "buckets": len(sizes), "bucket_runs_max_over_mean": round(max(sizes) / mean, 3),
            "load": Path("/proc/loadavg").read_text().split()[:3]}


def _costs(episodes: int, ingest_t: dict, check_t: dict) -> dict[str, object]:
    """Per-run costs (core-microseconds in tasks, microseconds on the driver) and the 100M estimate."""
    ingest_task_us = ingest_t["ingest_spark_s"] * CORES / episodes * 1e6
    ingest_driver_us = ingest_t["ingest_commit_s"] / episodes * 1e6
    check_task_us = check_t["check_spark_s"] * CORES / episodes * 1e6
    check_driver_us = check_t["check_driver_s"] / episodes * 1e6
    rows_per_run = check_t["check_rows"] / episodes
    estimate = {}
    for executors, cores in ((10, 8), (100, 8)):
        slots = executors * cores
        estimate[f"{executors}x{cores}"] = {
            "ingest_tasks_h": round(ingest_task_us * TARGET_RUNS / slots / 1e6 / 3600, 2),
            "ingest_driver_h": round(ingest_driver_us * TARGET_RUNS / 1e6 / 3600, 2),
            "check_tasks_h": round(check_task_us * TARGET_RUNS / slots / 1e6 / 3600, 2),
            "check_driver_h": round(check_driver_us * TARGET_RUNS / 1e6 / 3600, 2),
        }
    return {"ingest_task_core_us_per_run": round(ingest_task_us, 1),
            "ingest_driver_us_per_run": round(ingest_driver_us, 2),
            "check_task_core_us_per_run": round(check_task_us, 1),
            "check_driver_us_per_run": round(check_driver_us, 2),
            "verdict_rows_per_run": round(rows_per_run, 1),
            "verdict_rows_at_100m": round(rows_per_run * TARGET_RUNS),
            "estimate_100m": estimate}


def _parts(f: dict) -> str:
    parts = f["check_timings"].get("part_files")
    if not parts:
        return "not measured"
    from tracelab.spark.engine import CHUNK_BYTES

    chunks = f["corpus_mb"] * 1e6 * TARGET_RUNS / f["episodes"] / CHUNK_BYTES
    return (f"{parts['episodes']:,} episode part files for {f['episodes']:,} runs, chunks x buckets; 100M runs "
            f"in {CHUNK_BYTES >> 20} MB chunks over 80 buckets would write about {round(chunks * 80, -3):,.0f} "
            "per table")


def _skew(f: dict) -> str:
    t = f["check_timings"]
    if "bucket_runs_max_over_mean" not in t:
        return "not measured"
    return (f"the largest of the {t['buckets']} buckets holds {t['bucket_runs_max_over_mean']}x the mean number "
            f"of runs, with DuckDB's hash of the episode id; check ran {t['check_tasks']} tasks")


def summary(f: dict) -> str:
    return (f"spark ({f['master']}, {f['episodes']:,} runs in {f['files']} files): "
            f"ingest {f['spark_ingest'].seconds} s "
            f"vs DuckDB {f['duckdb_ingest'].seconds} s, check {f['spark_check'].seconds} s vs DuckDB "
            f"{f['duckdb_check'].seconds} s (Spark startup {f['startup'].seconds} s); per run: ingest "
            f"{f['ingest_task_core_us_per_run']} core-us in tasks + {f['ingest_driver_us_per_run']} us on the "
            f"driver, check {f['check_task_core_us_per_run']} core-us + {f['check_driver_us_per_run']} us; "
            f"100M runs on 10x8 cores: {f['estimate_100m']['10x8']}")


def rows(f: dict) -> list[str]:
    """BENCHMARKS.md rows and the closing note."""
    e = f["estimate_100m"]
    return [
        f"| `ingest --engine spark` ({f['master']}) vs DuckDB engine | {f['episodes']:,} runs, {f['files']} files, "
        f"{f['corpus_mb']} MB | {f['spark_ingest'].seconds} s ({f['ingest_task_core_us_per_run']} core-us/run in "
        f"tasks, {f['ingest_driver_us_per_run']} us/run committing on the driver) | {f['duckdb_ingest'].seconds} s "
        f"| {round(f['spark_ingest'].seconds / f['duckdb_ingest'].seconds, 2)}x the time | scale-out, not speed |",
        f"| `check --engine spark` ({f['master']}) vs DuckDB engine, identical verdicts | {f['episodes']:,} runs "
        f"| {f['spark_check'].seconds} s ({f['check_task_core_us_per_run']} core-us/run in tasks, "
        f"{f['check_driver_us_per_run']} us/run aggregating on the driver; Spark startup {f['startup'].seconds} s) "
        f"| {f['duckdb_check'].seconds} s | {round(f['spark_check'].seconds / f['duckdb_check'].seconds, 2)}x "
        f"the time | scale-out, not speed |",
        "",
        f"Spark at 100M runs (extrapolated from the per-run costs above, linear in runs, with at least as many "
        f"`ep_bucket` partitions as task slots, `--buckets`): on 10 executors "
        f"x 8 cores the tasks of ingest take about {e['10x8']['ingest_tasks_h']} h and of check "
        f"{e['10x8']['check_tasks_h']} h; on 100 x 8, {e['100x8']['ingest_tasks_h']} h and "
        f"{e['100x8']['check_tasks_h']} h. What does not shrink with executors: the driver's commit "
        f"({e['10x8']['ingest_driver_h']} h, one journal and one collision lookup per chunk, the lookup reading "
        f"the store's episode ids, so it grows with the store) and the driver's aggregation of every verdict row "
        f"({f['verdict_rows_per_run']} rows per run: {f['verdict_rows_at_100m']:,} rows at 100M, "
        f"{e['10x8']['check_driver_h']} h and far more memory than one driver has). Those two, then small files "
        f"(one part per bucket per chunk: {_parts(f)}) and skew (a bucket is one task's work: {_skew(f)}), "
        f"are the limits.",
    ]


if __name__ == "__main__":
    print(summary(run(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)))
