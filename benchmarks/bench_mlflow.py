"""A tracking server with many runs: the time to the first complete picture, and the requests a poll costs.

    python benchmarks/bench_mlflow.py                          # 100 runs x 30 metrics x 1,000 steps
    python benchmarks/bench_mlflow.py --runs 10 --steps 200    # smaller, faster

A real ``mlflow server`` (``python -m mlflow server``, SQLite backend in a temporary folder, on
127.0.0.1) holds ``--runs`` runs of one experiment, each with ``--metrics`` metrics of ``--steps``
points (the experiment and runs created through MLflow's REST API, the points written into its
database directly: logging 3 M points through the API would take the server an hour). Measured:

(a) the first complete picture: the server listed and every run read to its end, as the watcher
    and ``rltop snapshot URL`` read them: wall time and requests, against the points the server holds;
(b) a poll with nothing new: every run's reader read once more: requests (one ``runs/search`` for
    every run, shared, while the naive way asks each history again: runs x metrics requests);
(c) a poll after every run logged one more step of every metric: requests and wall time (one
    ``runs/search`` plus one ``metrics/get-history`` per metric that moved, from its offset).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from mlflow_helpers import MlflowServer  # noqa: E402

from rltop.ingest.follow.discovery import discover  # noqa: E402
from rltop.ingest.sources.mlflow import server as mlflow_server  # noqa: E402
from rltop.ingest.sources.mlflow.server_reader import MlflowServerReader  # noqa: E402


def api(url: str, endpoint: str, body: dict) -> dict:
    """One POST to MLflow's REST API (to set the benchmark up: rltop itself never writes)."""
    request = urllib.request.Request(
        f"{url}/api/2.0/mlflow/{endpoint}", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read() or b"{}")


def populate(url: str, database: Path, runs: int, metrics: int, steps: int) -> list[str]:
    """Create the runs through the API (one point each, so MLflow's latest_metrics rows exist), then
    write the rest of every history into the database directly; the run ids."""
    experiment = api(url, "experiments/create", {"name": "bench"})["experiment_id"]
    keys = [f"train_metric_{index:02d}" for index in range(metrics)]
    start = int(time.time() * 1000) - steps * 1000
    ids = []
    for number in range(runs):
        run = api(
            url,
            "runs/create",
            {"experiment_id": experiment, "run_name": f"seed-{number}", "start_time": start},
        )
        run_id = run["run"]["info"]["run_id"]
        ids.append(run_id)
        batch = [{"key": key, "value": 0.0, "timestamp": start, "step": 0} for key in keys]
        api(
            url,
            "runs/log-batch",
            {"run_id": run_id, "metrics": batch, "params": [{"key": "beta", "value": "0.0"}]},
        )
    rng = random.Random(0)
    connection = sqlite3.connect(database, timeout=60)
    rows = (
        (key, rng.random(), start + step * 1000, run_id, step, 0)
        for run_id in ids
        for key in keys
        for step in range(1, steps)
    )
    connection.executemany(
        "INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan) VALUES (?, ?, ?, ?, ?, ?)", rows
    )
    connection.execute(
        "UPDATE latest_metrics SET step = ?, timestamp = ?, value = 0.5",
        (steps - 1, start + (steps - 1) * 1000),
    )
    connection.commit()
    connection.close()
    return ids


def one_more_step(database: Path, ids: list[str], metrics: int, step: int) -> None:
    """Every run logs one more step of every metric (rows and latest_metrics, as MLflow writes them)."""
    now = int(time.time() * 1000)
    connection = sqlite3.connect(database, timeout=60)
    keys = [f"train_metric_{index:02d}" for index in range(metrics)]
    connection.executemany(
        "INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan) VALUES (?, 0.25, ?, ?, ?, 0)",
        [(key, now, run_id, step) for run_id in ids for key in keys],
    )
    connection.execute("UPDATE latest_metrics SET step = ?, timestamp = ?, value = 0.25", (step, now))
    connection.commit()
    connection.close()


def main() -> None:
    """Run the three measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--metrics", type=int, default=30)
    parser.add_argument("--steps", type=int, default=1000)
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rltop-bench-mlflow-"))
    database = folder / "mlflow.db"
    server = MlflowServer(database)
    try:
        began = time.monotonic()
        server.start()
        ids = populate(server.url, database, options.runs, options.metrics, options.steps)
        points = options.runs * options.metrics * options.steps
        shape = f"{options.runs} runs x {options.metrics} metrics x {options.steps} steps"
        setup = time.monotonic() - began
        print(f"server {server.url}: {shape} = {points:,} points (set up in {setup:.0f} s)")

        mlflow_server.forget_servers()
        started = time.monotonic()
        backend = mlflow_server.backend(server.url)
        runs = discover([server.url]).runs
        readers = [MlflowServerReader(run.files[0]) for run in runs]
        read = 0
        for reader in readers:  # as the watcher's first read: run by run, every window
            while True:
                result = reader.read()
                read += sum(len(points) for points in result.decoded.scalars.values())
                if not result.more:
                    break
        elapsed = time.monotonic() - started
        print(f"(a) first complete picture: {elapsed:.1f} s, {backend.client.requests:,} requests, "
              f"{read:,} points ({read / elapsed:,.0f} points/s); complete: {read == points}")  # fmt: skip
        time.sleep(mlflow_server.FRESH)  # the next poll asks the server again (a poll, not a cache hit)
        before = backend.client.requests
        new = sum(len(points) for reader in readers for points in reader.read().decoded.scalars.values())
        idle = backend.client.requests - before
        print(f"(b) a poll with nothing new: {idle} request(s) for {len(readers)} runs, {new} points "
              f"(asking every history again: {options.runs * options.metrics:,} requests)")  # fmt: skip

        one_more_step(database, ids, options.metrics, options.steps)
        time.sleep(mlflow_server.FRESH)
        before, started = backend.client.requests, time.monotonic()
        new = sum(len(points) for reader in readers for points in reader.read().decoded.scalars.values())
        asked = backend.client.requests - before
        print(f"(c) a poll after one more step of every metric: {asked:,} requests, {new:,} new points, "
              f"{time.monotonic() - started:.1f} s")  # fmt: skip
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
