"""trackio reading costs on a large database: the first read, a live poll, and the private copy.

    python benchmarks/bench_trackio.py              # a 200 MB database (about 1.2 M rows, 2 runs)
    python benchmarks/bench_trackio.py --mb 20      # smaller, faster

The database is trackio's own schema (the copied fixture) filled with the fixture's 141 rows again
and again (TRL's GRPO rows and profiling timers, 173 bytes of JSON on average), two runs
interleaved, as two trainings logging into one project do. Measured, each the median of 15:

(a) ``list_runs`` and the whole history of one run read (every window of `BATCH_ROWS` rows);
(b) a live poll after a writer added 10 rows as trackio does (a connection opened, the rows
    committed, the connection closed: SQLite checkpoints and removes the ``-wal``): the reader's
    ``read()`` and ``list_runs``;
(c) the same while the writer keeps its connection open (the rows sit in the ``-wal``, read
    through the writer's ``-shm``);
(d) a crashed writer's leftover: a ``-wal`` holding rows and no ``-shm``, which SQLite cannot
    read without creating one: read from a private copy of the database and its ``-wal``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rltop.ingest.sources.trackio import kind as trackio_db  # noqa: E402
from rltop.ingest.sources.trackio.reader import TrackioRunReader  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "trackio" / "trackio_grpo" / "trackio" / "huggingface.db"
REPEATS = 15


def build(path: Path, megabytes: int) -> int:
    """Fill a copy of the fixture with its own rows until the file holds ``megabytes``; rows in all."""
    shutil.copy(FIXTURE, path)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = WAL")
    templates = connection.execute(
        "SELECT run_id, run_name, step, metrics FROM metrics ORDER BY id"
    ).fetchall()
    connection.execute(
        "INSERT INTO configs (run_id, run_name, config, created_at) SELECT 'second', 'second-run', config,"
        " created_at FROM configs LIMIT 1"
    )
    rows, step = 0, 0
    while path.stat().st_size < megabytes << 20:
        batch = []
        for run_id, run_name, _, metrics in templates * 20:
            step += 1
            for ident, name in ((run_id, run_name), ("second", "second-run")):
                logged = json.loads(metrics)
                if "train/global_step" in logged:
                    logged["train/global_step"] = step
                batch.append(
                    ("2026-12-01T12:44:31.661741+00:00", ident, name, step, json.dumps(logged).encode())
                )
        connection.executemany(
            "INSERT INTO metrics (timestamp, run_id, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)", batch
        )
        connection.commit()
        rows += len(batch)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return rows + len(templates)


def add_rows(connection: sqlite3.Connection, count: int = 10) -> None:
    """``count`` rows of the first run, committed (as trackio's bulk_log does)."""
    run_id, name = connection.execute("SELECT run_id, run_name FROM configs ORDER BY id LIMIT 1").fetchone()
    (step,) = connection.execute("SELECT max(step) FROM metrics").fetchone()
    connection.executemany(
        "INSERT INTO metrics (timestamp, run_id, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
        [("2026-12-01T13:00:00+00:00", run_id, name, step + i,
          json.dumps({"train/loss": 0.5, "train/global_step": step + i}).encode())
         for i in range(1, count + 1)],
    )  # fmt: skip
    connection.commit()


def trackio_write(path: Path) -> None:
    """One write as trackio makes it: open, WAL, insert, commit, close (the close checkpoints)."""
    connection = sqlite3.connect(path, timeout=30)
    connection.execute("PRAGMA journal_mode = WAL")
    add_rows(connection)
    connection.close()


def median_ms(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:.2f} ms"


def read_all(reader: TrackioRunReader) -> int:
    points = 0
    while True:
        result = reader.read()
        points += sum(len(p) for p in result.decoded.scalars.values())
        if not result.more:
            return points


def live_polls(reader: TrackioRunReader, database: str, write) -> tuple[str, str]:
    """The median time of a poll's read and listing after ``write()`` added 10 rows."""
    reads, listings = [], []
    for _ in range(REPEATS):
        write()
        start = time.perf_counter()
        assert read_all(reader) == 10  # 10 rows of one point (train/loss)
        reads.append(time.perf_counter() - start)
        start = time.perf_counter()
        trackio_db.list_runs(database)
        listings.append(time.perf_counter() - start)
    return median_ms(reads), median_ms(listings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="database size in MB (default 200)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rltop-bench-trackio-"))
    try:
        path = folder / "huggingface.db"
        start = time.perf_counter()
        rows = build(path, args.mb)
        database = str(path)
        print(f"database: {path.stat().st_size / 1e6:.0f} MB, {rows:,} rows, built in "
              f"{time.perf_counter() - start:.0f} s")  # fmt: skip

        start = time.perf_counter()
        members = trackio_db.list_runs(database)
        listed = time.perf_counter() - start
        member = next(m for m, _ in members if not m.endswith("::second"))
        reader = TrackioRunReader(member)
        start = time.perf_counter()
        points = read_all(reader)
        print(f"(a) list_runs {listed * 1000:.0f} ms; one run's history: {points:,} points in "
              f"{time.perf_counter() - start:.2f} s")  # fmt: skip

        reads, listings = live_polls(reader, database, lambda: trackio_write(path))
        print(
            f"(b) live poll, 10 rows added by a trackio-like write: read {reads}, "
            f"list_runs {listings}; files beside it: {sorted(os.listdir(folder))}"
        )

        writer = sqlite3.connect(path, timeout=30)
        writer.execute("PRAGMA journal_mode = WAL")
        reads, listings = live_polls(reader, database, lambda: add_rows(writer))
        print(f"(c) live poll, writer connection open (rows in the -wal): read {reads}, list_runs {listings}")

        add_rows(writer)
        stale = folder / "stale"
        stale.mkdir()
        for name in ("huggingface.db", "huggingface.db-wal"):  # a crash: no -shm, rows in the -wal
            shutil.copy(folder / name, stale / name)
        writer.close()
        an_hour_ago = time.time() - 3600
        os.utime(stale / "huggingface.db-wal", (an_hour_ago, an_hour_ago))  # not a writer opening it
        copy_member = str(stale / "huggingface.db") + member[len(database) :]
        start = time.perf_counter()
        try:
            members = trackio_db.list_runs(str(stale / "huggingface.db"))
            listed = time.perf_counter() - start
            start = time.perf_counter()
            points = read_all(TrackioRunReader(copy_member))
            print(
                f"(d) a -wal without -shm (crash leftover): list_runs {listed:.2f} s ({len(members)} runs), "
                f"the run's history {points:,} points in {time.perf_counter() - start:.2f} s; "
                f"files beside it: {sorted(os.listdir(stale))}"
            )
        except Exception as error:  # the code before the private copy
            print(f"(d) a -wal without -shm: {type(error).__name__}: {error}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
