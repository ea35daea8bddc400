"""Remote logs: a cold load from a local S3 server against the same load from disk, and what an idle
remote run costs per poll.

    python benchmarks/bench_remote.py            # the 900k-scalar log (benchmarks/make_logs.py)
    python benchmarks/bench_remote.py --repeat 5

(a) cold load: `rltop.ingest.follow.loader.load` in a fresh interpreter, from disk and from
    ``s3://bench/medium`` on moto's S3 server (``moto[server]``) on 127.0.0.1, alternately, median of
    ``--repeat`` runs. The server runs in this process (its CPU is not the child's); a real store adds
    its network latency and bandwidth to the S3 column, nothing else.
(b) idle polls: a `Watcher` follows the loaded run on S3 (poll 0.2 s); once it has caught up, the
    requests of the next polls are counted: metadata requests (HEAD), listings (LIST) and the bytes
    downloaded. An idle run must download nothing: a poll asks for the size, sees no new byte, stops.
(c) ``--runs N`` instead: N copies of a real TRL run (the ppo_healthy fixture, 150 steps) exported
    with ``rltop export`` from disk and from S3, alternately, wall time of the whole command (median of
    ``--repeat``), and the requests one load of them makes. Goal (issue 26): S3 within 3x the disk.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))
from make_logs import write_log  # noqa: E402

LOAD = """
import json, resource, sys, time
start = time.perf_counter()
from rltop.ingest.follow.loader import load
r = load([sys.argv[1]])
count = sum(run.scalar_count() for run in r.store.runs.values())
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu = usage.ru_utime + usage.ru_stime
print(json.dumps({"count": count, "wall": time.perf_counter() - start, "cpu": cpu}))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int):
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return server


def cold_load(path: str, env: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", LOAD, path], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"load of {path} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class Requests:
    """Counts what the URL backend asks the store for (patched onto its file system)."""

    def __init__(self, fs) -> None:
        self.heads = self.lists = self.gets = self.bytes = 0
        self._lock = threading.Lock()
        info, find, cat = fs.info, fs.find, fs.cat_file

        def counting_info(path, **kwargs):
            with self._lock:
                self.heads += 1
            return info(path, **kwargs)

        def counting_find(path, **kwargs):
            with self._lock:
                self.lists += 1
            return find(path, **kwargs)

        def counting_cat(path, start=None, end=None, **kwargs):
            data = cat(path, start=start, end=end, **kwargs)
            with self._lock:
                self.gets += 1
                self.bytes += len(data)
            return data

        fs.info, fs.find, fs.cat_file = counting_info, counting_find, counting_cat

    def totals(self) -> tuple[int, int, int, int]:
        with self._lock:
            return self.heads, self.lists, self.gets, self.bytes


def idle_polls(url: str, polls: int, interval: float) -> dict:
    from rltop.ingest.follow.watcher import Watcher
    from rltop.ingest.storage.remote import backend

    counter = Requests(backend(url).fs)
    watcher = Watcher([url], lambda batch: None, poll=interval)
    watcher.start()
    if not watcher.caught_up.wait(600):
        raise SystemExit("the watcher did not catch up")
    before = counter.totals()
    started = time.monotonic()
    time.sleep(polls * interval)  # a benchmark measures over a duration (tests never do)
    elapsed = time.monotonic() - started
    after = counter.totals()
    watcher.stop()
    heads, lists, gets, fetched = (b - a for a, b in zip(before, after))
    done = elapsed / interval
    return {"polls": done, "heads": heads / done, "lists": lists / done, "gets": gets / done,
            "bytes": fetched / done}  # fmt: skip


FIXTURE_RUN = ROOT / "tests" / "fixtures" / "trl" / "ppo_healthy" / "runs"


def many_runs(count: int, repeat: int, env: dict, client) -> None:
    """(c): ``count`` runs exported from disk and from S3."""
    import shutil
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    (session,) = FIXTURE_RUN.iterdir()
    (event_file,) = session.iterdir()
    local = Path(tempfile.mkdtemp(prefix="rltop-many-"))
    keys = []
    for number in range(count):
        folder = local / f"run{number:04d}" / "runs" / session.name
        folder.mkdir(parents=True)
        shutil.copy(event_file, folder / event_file.name)
        keys.append((folder / event_file.name, f"many/run{number:04d}/runs/{session.name}/{event_file.name}"))
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda item: client.upload_file(str(item[0]), "bench", item[1]), keys))
    url = "s3://bench/many"
    times: dict[str, list[float]] = {"disk": [], "s3": []}
    for _ in range(repeat):  # alternately, so both see the same machine load
        for name, path in (("disk", str(local)), ("s3", url)):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "rltop", "export", path], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"export of {path} failed:\n{done.stderr}")
            times[name].append(time.perf_counter() - started)
    from rltop.ingest.follow.loader import load
    from rltop.ingest.storage.remote import backend

    counter = Requests(backend(url).fs)
    loaded = load([url])
    heads, lists, gets, fetched = counter.totals()
    disk, s3 = statistics.median(times["disk"]), statistics.median(times["s3"])
    print(
        f"rltop export of {count} runs ({len(loaded.store.runs)} read, "
        f"{sum(r.scalar_count() for r in loaded.store.runs.values()):,} scalars), median of {repeat}:"
    )
    print(f"  disk {disk:.1f} s, S3 (moto, 127.0.0.1) {s3:.1f} s: {s3 / disk:.2f}x")
    print(f"  one load's requests: {heads} HEAD, {lists} LIST, {gets} GET ({fetched / 1e6:.1f} MB)")
    shutil.rmtree(local)


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="cold loads per source (median reported)")
    parser.add_argument("--polls", type=int, default=30, help="idle polls measured")
    parser.add_argument("--runs", type=int, default=0, help="(c) instead: export this many runs")
    args = parser.parse_args()
    if args.runs:
        port = free_port()
        server = start_server(port)
        aws = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "bench",
               "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
        os.environ.update(aws)
        import boto3

        client = boto3.client("s3")
        client.create_bucket(Bucket="bench")
        many_runs(args.runs, args.repeat, {**os.environ, "PYTHONPATH": str(ROOT)}, client)
        server.stop()
        print(f"load average: {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
        return
    log = write_log("medium")
    files = sorted(log.glob("events.out.tfevents.*"))
    size = sum(f.stat().st_size for f in files)
    port = free_port()
    server = start_server(port)
    aws = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "bench",
           "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
    env = {**os.environ, **aws, "PYTHONPATH": str(ROOT)}
    os.environ.update({k: v for k, v in env.items() if k.startswith("AWS_")})
    import boto3

    client = boto3.client("s3")
    client.create_bucket(Bucket="bench")
    for path in files:
        client.upload_file(str(path), "bench", f"medium/{path.name}")
    url = "s3://bench/medium"
    disk, remote = [], []
    for _ in range(args.repeat):  # alternately, so both see the same machine load
        disk.append(cold_load(str(log), env))
        remote.append(cold_load(url, env))
    assert {r["count"] for r in disk + remote} == {disk[0]["count"]}, "counts differ"
    wall_disk = statistics.median(r["wall"] for r in disk)
    wall_s3 = statistics.median(r["wall"] for r in remote)
    cpu_disk = statistics.median(r["cpu"] for r in disk)
    cpu_s3 = statistics.median(r["cpu"] for r in remote)
    print(f"cold load of {disk[0]['count']:,} scalars ({size / 1e6:.1f} MB), median of {args.repeat}:")
    print(f"{'source':<28}{'wall s':>8}{'CPU s':>8}{'scalars/s':>12}")
    print(f"{'disk':<28}{wall_disk:>8.2f}{cpu_disk:>8.2f}{disk[0]['count'] / wall_disk:>12,.0f}")
    print(f"{'S3 (moto, 127.0.0.1)':<28}{wall_s3:>8.2f}{cpu_s3:>8.2f}{disk[0]['count'] / wall_s3:>12,.0f}")
    print(f"S3 / disk: {wall_s3 / wall_disk:.2f}x wall, {cpu_s3 / cpu_disk:.2f}x CPU of the loading process")
    idle = idle_polls(url, args.polls, 0.2)
    print(
        f"\nidle remote run, {idle['polls']:.0f} polls at 0.2 s: per poll {idle['heads']:.2f} HEAD, "
        f"{idle['lists']:.2f} LIST, {idle['gets']:.2f} GET, {idle['bytes']:.0f} bytes downloaded"
    )
    server.stop()
    print(f"\nload average: {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
