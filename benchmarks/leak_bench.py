"""Leak search: 1,000 forbidden strings over a corpus's transcript, one algorithm against another.

The engine's `must_not_leak` / `must_mention` find which runs contain which needles,
case-insensitively (DuckDB `lower()` on both sides), as a literal substring of one
transcript fragment. The transcript of the store is lower-cased once into a table
(untimed, shared by every candidate), so the figures compare matching alone:

- loop: one `SELECT DISTINCT episode_id ... WHERE contains(ltext, ?)` per needle;
- join: one DuckDB join of needles x fragments on `contains` (the engine before this
  benchmark);
- re2_prefilter: one RE2 pass with the alternation of every needle keeps only the
  fragments that contain some needle, then the exact `contains` join on those (the
  engine now: tracelab.engine.needles);
- aho_corasick: pyahocorasick over the fragments streamed from DuckDB in Arrow batches.

Every candidate must return the same (needle, episode_id) pairs, overlapping needles
included, or the benchmark fails before any figure is reported.

    python benchmarks/leak_bench.py [--episodes 100000]
"""
from __future__ import annotations

import argparse
import bisect
import itertools
import random
import string
import subprocess
import sys
import time
from collections.abc import Callable

import ahocorasick
import duckdb
from common import WORK, corpus, tracelab

from tracelab.engine.needles import prefilter_re2
from tracelab.generate import LEAK_STRINGS
from tracelab.store import open_store

TARGET = 10.0
"""The winner should be at least this many times faster than the loop."""
NEEDLES = 1_000
Pairs = set[tuple[int, str]]
"""(needle position, episode_id)."""

_FIRST = ("Anna", "Jonas", "Søren", "Zoë", "José", "Łucja", "İbrahim", "Ξανθή", "Дмитрий", "Aoife",
          "Thảo", "Émile", "Gülşen", "Björk", "Nnamdi", "Saanvi", "Mateus", "Ingrid", "Kenji",
          "Fatima", "Ólafur", "Σταύρος", "Małgorzata", "Hyun-woo", "Renée")
_LAST = ("Haugland", "Ødegaard", "Muñoz", "Kowalczyk", "Öztürk", "Παπαδάκης", "Смирнов", "Ó Briain",
         "Trần", "Dubois", "Şahin", "Eriksdóttir", "Adeyemi", "Iyer", "Carvalho", "Lindqvist",
         "Yamamoto", "El-Amin", "Gudmundsson", "D'Arcy", "Van der Berg", "Schröder", "Nakamura")
_IBAN_COUNTRIES = ("DE", "FR", "TR", "GB", "NL", "ES", "IT", "PL", "SE", "NO")
_KEY_PREFIXES = ("sk-live-", "sk-test-", "AKIA", "ghp_", "xoxb-", "AIza", "pk_live_", "rk_live_")
_ALNUM = string.ascii_letters + string.digits
# strings the corpus carries (tracelab.generate.catalog): real hits besides the planted secrets,
# and needles that overlap one another ("Mia Becker" and "Becker")
_PRESENT = ("Mia Becker", "Becker", "Σοφία Παπαδοπούλου", "İpek Yılmaz", "Tomás Ortega",
            "DE02 1203 0000 0000 2020 51", "GB29 NWBK 6016 1331 9268 19", "sw-204", "as-5512")


def needles(count: int = NEEDLES, seed: int = 11) -> list[str]:
    """`count` realistic forbidden strings, deterministic for a seed, distinct after lower().

    The planted secrets (tracelab.generate.LEAK_STRINGS) and a few strings the corpus
    carries come first; the rest are names (many non-ASCII), IBANs, account numbers,
    API-key-like tokens and e-mail addresses that mostly occur nowhere.
    """
    rnd = random.Random(seed)
    makers: tuple[Callable[[random.Random], str], ...] = (_name, _iban, _account, _api_key, _email)
    out = dict.fromkeys([*LEAK_STRINGS, *_PRESENT])
    while len(out) < count:
        out.setdefault(rnd.choice(makers)(rnd))
    return list(out)[:count]


def _name(rnd: random.Random) -> str:
    return f"{rnd.choice(_FIRST)} {rnd.choice(_LAST)}"


def _iban(rnd: random.Random) -> str:
    digits = "".join(rnd.choice(string.digits) for _ in range(18))
    groups = [digits[i:i + 4] for i in range(0, len(digits), 4)]
    text = f"{rnd.choice(_IBAN_COUNTRIES)}{rnd.randint(10, 99)} " + " ".join(groups)
    return text if rnd.random() < 0.5 else text.replace(" ", "")


def _account(rnd: random.Random) -> str:
    return f"{rnd.choice(('ACCT-', 'acct-', 'AC/'))}{rnd.randint(10_000_000, 99_999_999)}"


def _api_key(rnd: random.Random) -> str:
    return rnd.choice(_KEY_PREFIXES) + "".join(rnd.choice(_ALNUM) for _ in range(rnd.randint(16, 32)))


def _email(rnd: random.Random) -> str:
    first, last = rnd.choice(_FIRST), rnd.choice(_LAST)
    return f"{first}.{last}@{rnd.choice(('acme', 'globex', 'initech'))}.test".replace(" ", "").lower()


# --------------------------------------------------------------------------- the candidates


def loop(con: duckdb.DuckDBPyConnection, lowered: list[str]) -> Pairs:
    """One `contains` query per needle."""
    pairs: Pairs = set()
    for i, needle in enumerate(lowered):
        rows = con.execute("SELECT DISTINCT episode_id FROM frags WHERE contains(ltext, ?)",
                           [needle]).fetchall()
        pairs.update((i, episode_id) for (episode_id,) in rows)
    return pairs


def join(con: duckdb.DuckDBPyConnection, lowered: list[str]) -> Pairs:
    """One join of needles x fragments on `contains`."""
    return _pairs(con.execute(
        "SELECT DISTINCT n.i, f.episode_id FROM leak_needles n JOIN frags f ON contains(f.ltext, n.lneedle)"
    ).fetchall())


def re2_prefilter(con: duckdb.DuckDBPyConnection, lowered: list[str]) -> Pairs:
    """One RE2 pass keeps the fragments that hold some needle; `contains` once per distinct
    text and needle among those (as sql/engine/assertions/must_not_leak.sql does)."""
    return _pairs(con.execute("""
        WITH hits AS (SELECT episode_id, ltext FROM frags WHERE regexp_matches(ltext, $pattern)),
        matched AS (
            SELECT n.i, t.ltext
            FROM leak_needles n JOIN (SELECT DISTINCT ltext FROM hits) t ON contains(t.ltext, n.lneedle)
        )
        SELECT DISTINCT m.i, h.episode_id FROM matched m JOIN hits h USING (ltext)
    """, {"pattern": prefilter_re2(lowered)}).fetchall())


def aho_corasick(con: duckdb.DuckDBPyConnection, lowered: list[str]) -> Pairs:
    """pyahocorasick over each Arrow batch of fragments, joined by NUL into one text."""
    automaton = ahocorasick.Automaton()
    for i, needle in enumerate(lowered):
        automaton.add_word(needle, (i, len(needle)))
    automaton.make_automaton()
    pairs: Pairs = set()
    reader = con.sql("SELECT episode_id, ltext FROM frags").to_arrow_reader(1 << 20)
    for batch in reader:
        ids = batch.column(0).to_pylist()
        texts = batch.column(1).to_pylist()
        starts = list(itertools.accumulate((len(t) + 1 for t in texts), initial=0))
        for end, (i, length) in automaton.iter("\0".join(texts)):
            row = bisect.bisect_right(starts, end) - 1
            if end - length + 1 >= starts[row]:  # a match never spans two fragments
                pairs.add((i, ids[row]))
    return pairs


def _pairs(rows: list[tuple[int, str]]) -> Pairs:
    return set(rows)


CANDIDATES: dict[str, Callable[[duckdb.DuckDBPyConnection, list[str]], Pairs]] = {
    "loop": loop, "join": join, "re2_prefilter": re2_prefilter, "aho_corasick": aho_corasick,
}


# --------------------------------------------------------------------------- the benchmark


def run(episodes: int) -> dict[str, object]:
    """Time every candidate over the corpus of that size; all must find the same pairs."""
    path = corpus(episodes)
    store_path = WORK / f"leak-{path.stem}.duckdb"
    # ingesting a file whose content hash the store already records adds nothing: a cached store
    subprocess.run(tracelab("ingest", str(path), "--store", str(store_path), "--quiet"), check=True,
                   stdout=subprocess.DEVNULL)
    forbidden = needles()
    with open_store(store_path, read_only=True) as store:
        con = store.con
        clock = time.perf_counter()
        con.execute("CREATE TEMP TABLE frags AS SELECT episode_id, lower(text) AS ltext FROM transcript")
        materialise = time.perf_counter() - clock
        con.execute("CREATE TEMP TABLE leak_needles AS "
                    "SELECT i - 1 AS i, lower(n) AS lneedle FROM unnest($n) WITH ORDINALITY t(n, i)",
                    {"n": forbidden})
        lowered = [n for (n,) in con.execute("SELECT lneedle FROM leak_needles ORDER BY i").fetchall()]
        [(fragments, megabytes)] = con.execute(
            "SELECT count(*), round(sum(strlen(ltext)) / 1e6, 1) FROM frags").fetchall()
        seconds: dict[str, float] = {}
        found: dict[str, Pairs] = {}
        for name, candidate in CANDIDATES.items():
            seconds[name], found[name] = _timed(candidate, con, lowered)
            print(f"leak search: {name} {seconds[name]} s, {len(found[name]):,} pairs", flush=True)
    _same(found, forbidden)
    winner = min(seconds, key=seconds.__getitem__)
    pairs = found["loop"]
    return {
        "episodes": episodes,
        "fragments": fragments,
        "fragment_mb": megabytes,
        "needles": len(forbidden),
        "pairs": len(pairs),
        "needles_found": len({i for i, _ in pairs}),
        "runs_with_a_needle": len({e for _, e in pairs}),
        "materialise_seconds": round(materialise, 3),
        "seconds": seconds,
        "winner": winner,
        "engine": "re2_prefilter",
        "ratio": round(seconds["loop"] / seconds[winner], 1),
        "engine_ratio": round(seconds["loop"] / seconds["re2_prefilter"], 1),
        "target": TARGET,
    }


def _timed(candidate: Callable[[duckdb.DuckDBPyConnection, list[str]], Pairs],
           con: duckdb.DuckDBPyConnection, lowered: list[str]) -> tuple[float, Pairs]:
    """Seconds of one run; a run under 10 s is repeated twice more and the fastest kept."""
    best, pairs = float("inf"), set()
    for attempt in range(3):
        clock = time.perf_counter()
        pairs = candidate(con, lowered)
        best = min(best, time.perf_counter() - clock)
        if attempt == 0 and best >= 10:
            break
    return round(best, 3), pairs


def _same(found: dict[str, Pairs], forbidden: list[str]) -> None:
    """Exit non-zero, naming a differing pair, unless every candidate found the same pairs."""
    reference = found["loop"]
    for name, pairs in found.items():
        if pairs != reference:
            extra, missing = sorted(pairs - reference)[:3], sorted(reference - pairs)[:3]
            print(f"leak search: {name} disagrees with the loop: extra "
                  f"{[(forbidden[i], e) for i, e in extra]}, missing "
                  f"{[(forbidden[i], e) for i, e in missing]}", file=sys.stderr)
            raise SystemExit(1)


def summary(leak: dict) -> str:
    """One line for the console."""
    return (f"leak search: {leak['winner']} is {leak['ratio']}x the loop's speed (target >= "
            f"{leak['target']:g}x); {leak['pairs']:,} identical (needle, run) pairs")


def markdown_row(leak: dict) -> str:
    """The BENCHMARKS.md row of the leak search (benchmarks/run.py)."""
    s = leak["seconds"]
    others = ", ".join(f"{name} {s[name]} s" for name in s if name not in ("loop", leak["winner"]))
    return (f"| leak search: {leak['needles']:,} forbidden strings, {leak['winner']} (the engine: "
            f"{leak['engine']}) vs one `contains` query per string | {leak['episodes']:,} episodes, "
            f"{leak['fragments']:,} transcript fragments ({leak['fragment_mb']} MB), {leak['pairs']:,} "
            f"identical (string, run) pairs | {s[leak['winner']]} s | {s['loop']} s (also: {others}) "
            f"| {leak['ratio']}x speed-up | >= {leak['target']:g}x speed-up |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000, help="corpus size (default 100k)")
    print(summary(run(parser.parse_args().episodes)))


if __name__ == "__main__":
    main()
