"""Benchmark the recovery store: batched puts, gets, and query retrieval.

Prints figures and ratios measured in one run, so the ratios compare like
with like on the same machine at the same moment:

- batched put of 4 KiB records through ``Store.put_many`` against plain
  ``sqlite3`` inserts of the same rows (target ratio >= 0.5), both against a
  default-settings file and against a WAL + synchronous=FULL file like ours;
- a put of records already stored (each compared with the stored copy, so a
  corrupt copy is healed) against plain ``INSERT OR IGNORE`` of the same rows;
- get throughput (exact bytes, each re-hashed on read);
- query retrieval time on a 1 MiB JSONL original;
- ``ccr repair``'s page-by-page salvage against ``verify`` over the same store.

Figures (protocol in ``_common.py``; ``python benchmarks/run.py --only ccr``), each a
ratio of interleaved runs: ``put_many`` against plain ``sqlite3`` (default
journal, and WAL + synchronous=FULL), plain time over ours: at least 0.5
each; the re-put of stored records against plain ``INSERT OR IGNORE``: at
least 0.25 (ours compares each stored copy, to heal a corrupt one).

Run alone for every figure above and the rates: ``python benchmarks/bench_ccr.py [--records N] [--batch B]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from _common import Figure, timed

from ccr import PutRequest, handle_for, open_store

RECORD_BYTES = 4096


def _rows(count: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(RECORD_BYTES) for _ in range(count)]


def _insert_batches(conn: sqlite3.Connection, rows: list[bytes], batch: int) -> None:
    """Insert ``rows`` under their handles, ``batch`` rows a transaction, as a plain SQLite program would."""
    for i in range(0, len(rows), batch):
        conn.execute("BEGIN")
        conn.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?)", [(handle_for(r), r) for r in rows[i : i + batch]])
        conn.execute("COMMIT")


def bench_plain_sqlite(path: Path, rows: list[bytes], batch: int, *, wal: bool) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE blobs (handle TEXT PRIMARY KEY, data BLOB NOT NULL)")

    elapsed, _ = timed(lambda: _insert_batches(conn, rows, batch))
    conn.close()
    return elapsed


def bench_store_put(path: Path, rows: list[bytes], batch: int) -> tuple[float, list[str]]:
    handles: list[str] = []
    with open_store(path) as store:

        def run() -> None:
            for i in range(0, len(rows), batch):
                handles.extend(store.put_many([PutRequest(data=r) for r in rows[i : i + batch]]))

        return timed(run)[0], handles


def bench_reput_plain(path: Path, rows: list[bytes], batch: int) -> float:
    """Insert the rows again into a plain WAL file that already holds them."""
    conn = sqlite3.connect(path, isolation_level=None)

    elapsed, _ = timed(lambda: _insert_batches(conn, rows, batch))
    conn.close()
    return elapsed


def bench_reput_store(path: Path, rows: list[bytes], batch: int) -> float:
    with open_store(path) as store:
        return timed(
            lambda: [
                store.put_many([PutRequest(data=r) for r in rows[i : i + batch]]) for i in range(0, len(rows), batch)
            ]
        )[0]


def bench_salvage_and_verify(path: Path) -> tuple[float, float]:
    from ccr._salvage import salvage

    with open_store(path) as store:
        verify_time = timed(store.verify)[0]
    salvage_time = timed(lambda: salvage(path))[0]
    return salvage_time, verify_time


def bench_get(path: Path, handles: list[str], rounds: int) -> float:
    rng = random.Random(11)
    picks = [rng.choice(handles) for _ in range(rounds)]
    with open_store(path) as store:
        return timed(lambda: [store.get(h) for h in picks])[0]


def transcript_mib(target: int = 1 << 20) -> bytes:
    rng = random.Random(3)
    words = ["read", "file", "parser", "error", "test", "build", "commit", "diff", "session", "tool", "result", "agent"]
    lines: list[str] = []
    size = 0
    i = 0
    while size < target:
        text = " ".join(rng.choice(words) for _ in range(rng.randint(20, 200)))
        line = json.dumps({"type": "user", "uuid": f"u{i}", "message": {"content": text}})
        lines.append(line)
        size += len(line) + 1
        i += 1
    return ("\n".join(lines) + "\n").encode()


def bench_query(path: Path, repeats: int) -> tuple[float, int, int]:
    data = transcript_mib()
    with open_store(path) as store:
        handle = store.put(data)
        times = []
        result = None
        for _ in range(repeats):
            start = time.perf_counter()
            result = store.retrieve(handle, query="parser error in the build")
            times.append(time.perf_counter() - start)
    assert result is not None
    return statistics.median(times), len(data), len(result.data)


def figures(quick: bool = False) -> list[Figure]:
    """The put figures, one ratio per interleaved round (plain time / ours)."""
    rows = _rows(1000 if quick else 5000)
    batch = 500
    rounds = 3 if quick else 7
    default: list[float] = []
    wal: list[float] = []
    reput: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-ccr-") as tmp:
        root = Path(tmp)
        previous = os.environ.get("COMPACTOR_HOME")
        os.environ["COMPACTOR_HOME"] = str(root / "home")
        try:
            for n in range(rounds + 1):
                ours, _ = bench_store_put(root / f"store{n}" / "ccr.db", rows, batch)
                plain_default = bench_plain_sqlite(root / f"plain{n}.db", rows, batch, wal=False)
                plain_wal = bench_plain_sqlite(root / f"plain-wal{n}.db", rows, batch, wal=True)
                again = bench_reput_store(root / f"store{n}" / "ccr.db", rows, batch)
                plain_again = bench_reput_plain(root / f"plain-wal{n}.db", rows, batch)
                if n:  # the first round warms the page cache and the imports
                    default.append(plain_default / ours)
                    wal.append(plain_wal / ours)
                    reput.append(plain_again / again)
        finally:
            if previous is None:
                os.environ.pop("COMPACTOR_HOME", None)
            else:
                os.environ["COMPACTOR_HOME"] = previous
    detail = f"{len(rows):,} x 4 KiB records in batches of {batch}"
    return [
        Figure("ccr put_many / plain sqlite3 (default journal)", default, 0.5, ">=", detail=detail),
        Figure("ccr put_many / plain sqlite3 (WAL, synchronous=FULL)", wal, 0.5, ">="),
        Figure("ccr put_many of stored records / plain INSERT OR IGNORE", reput, 0.25, ">="),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--gets", type=int, default=20000)
    parser.add_argument("--query-repeats", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3, help="put runs per contender (best kept)")
    args = parser.parse_args()
    rows = _rows(args.records)
    mib = args.records * RECORD_BYTES / (1 << 20)
    plain_default = plain_wal = ours = float("inf")
    with tempfile.TemporaryDirectory(prefix="bench-ccr-") as tmp:
        root = Path(tmp)
        os.environ["COMPACTOR_HOME"] = str(root / "home")
        # Interleaved repeats, best of each: the machine is shared and noisy.
        for n in range(args.repeats):
            plain_default = min(plain_default, bench_plain_sqlite(root / f"plain{n}.db", rows, args.batch, wal=False))
            plain_wal = min(plain_wal, bench_plain_sqlite(root / f"plain-wal{n}.db", rows, args.batch, wal=True))
            elapsed, handles = bench_store_put(root / f"store{n}" / "ccr.db", rows, args.batch)
            ours = min(ours, elapsed)
        reput_plain = reput_ours = float("inf")
        for n in range(args.repeats):
            reput_plain = min(reput_plain, bench_reput_plain(root / f"plain-wal{n}.db", rows, args.batch))
            reput_ours = min(reput_ours, bench_reput_store(root / f"store{n}" / "ccr.db", rows, args.batch))
        salvage_time, verify_time = bench_salvage_and_verify(root / "store0" / "ccr.db")
        get_time = bench_get(root / "store0" / "ccr.db", handles, args.gets)
        query_time, original, returned = bench_query(root / "query" / "ccr.db", args.query_repeats)

    def rate(seconds: float) -> str:
        return f"{args.records / seconds:>10,.0f} records/s  {mib / seconds:>7.1f} MiB/s"

    print(f"batched put, {args.records} x 4 KiB records in batches of {args.batch} (best of {args.repeats})")
    print(f"  plain sqlite3 (default journal)    {rate(plain_default)}")
    print(f"  plain sqlite3 (WAL, sync FULL)     {rate(plain_wal)}")
    print(f"  ccr Store.put_many                 {rate(ours)}")
    print(f"  ratio ccr / plain default          {plain_default / ours:.2f}  (target >= 0.5)")
    print(f"  ratio ccr / plain WAL              {plain_wal / ours:.2f}  (target >= 0.5)")
    print(f"put of the same {args.records} records again (all already stored; best of {args.repeats})")
    print(f"  plain sqlite3 INSERT OR IGNORE     {rate(reput_plain)}")
    print(f"  ccr Store.put_many (heal check)    {rate(reput_ours)}")
    print(f"  ratio ccr / plain                  {reput_plain / reput_ours:.2f}")
    print(f"salvage of the {mib:.1f} MiB store page by page (ccr repair) against verify")
    print(f"  salvage                            {mib / salvage_time:>10.1f} MiB/s")
    print(f"  verify                             {mib / verify_time:>10.1f} MiB/s")
    print(f"  ratio salvage / verify time        {salvage_time / verify_time:.2f}")
    print(f"get, {args.gets} random exact gets of 4 KiB records")
    print(
        f"  ccr Store.get                      {args.gets / get_time:>10,.0f} gets/s"
        f"     {args.gets * RECORD_BYTES / (1 << 20) / get_time:>7.1f} MiB/s"
    )
    print(f"query retrieval on a {original / (1 << 20):.2f} MiB JSONL original")
    print(f"  median of {args.query_repeats}                        {query_time * 1000:>10.1f} ms")
    print(f"  returned                           {returned:>10,} bytes")


if __name__ == "__main__":
    main()
