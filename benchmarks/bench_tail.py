"""Live tailing benchmarks: flush->store latency, CPU while tailing, cost per point vs history size.

    python benchmarks/bench_tail.py            # full: 300 latency steps per mode, 60 s CPU phases
    python benchmarks/bench_tail.py --quick    # 200 steps, 15 s phases (about 2 min in all)

(a) latency: a real tensorboardX SummaryWriter in a subprocess logs a step, flushes until every
    byte of it is in the file (tensorboardX queues events to a thread, so one flush() can miss
    them) and reports that moment; rltop's Watcher feeds a consumer thread that applies each batch to its
    own Store and notes when the step became available there. p50/p90/max, native and polling.
(b) CPU of `python -m rltop tail DIR > /dev/null` (user+sys from /proc/<pid>/stat after a
    warm-up), while a writer logs 50 tags/s, flushed after each step (5 tags every 0.1 s, the
    harsh case; and 50 tags once a second, as TRL logs a step), and while the run is quiet.
    Native and polling (1 s) tails run side by side on the same files.
(c) the dashboard's path (Watcher + apply_batch into a Store) with a 1k- and a 1M-point history
    in the same series: CPU per new point and memory growth must not depend on the history.
(d) time from Ctrl-C (SIGINT) or SIGTERM to the exit of a streaming `rltop tail` (goal < 1 s).
"""

from __future__ import annotations

import argparse
import os
import queue
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rltop.ingest.feed import apply_batch  # noqa: E402
from rltop.ingest.follow.watcher import Watcher  # noqa: E402
from rltop.ingest.sources.tfevents.tfrecord.crc import masked_crc32c, masked_crc32c_rows  # noqa: E402
from rltop.model.run import Store  # noqa: E402

TAGS = [f"train/metric_{i:02d}" for i in range(50)]  # equal lengths: fixed-size history records
HISTORY_FIRST_STEP = 20_000  # 3-byte varints from here to 2**21
LIVE_FIRST_STEP = 1_000_000

WRITER = r"""
import glob, os, sys, time
from tensorboardX import SummaryWriter

logdir, interval = sys.argv[1], float(sys.argv[3])
steps, per_step, first = int(sys.argv[2]), int(sys.argv[4]), int(sys.argv[5])
report = sys.argv[6] == "1"
tags = [f"train/metric_{i:02d}" for i in range(50)]

def vlen(n):
    return max(1, (n.bit_length() + 6) // 7)

def record_size(tag, step):
    # TFRecord framing (16 bytes) around Event{wall_time, step, summary{value{tag, simple_value}}}
    value = 1 + vlen(len(tag)) + len(tag) + 5
    summary = 1 + vlen(value) + value
    return 16 + 9 + 1 + vlen(step) + 1 + vlen(summary) + summary

writer = SummaryWriter(logdir, flush_secs=120)
path = max(glob.glob(os.path.join(logdir, "events.out.tfevents.*")), key=os.path.getmtime)
while not os.path.getsize(path):  # the file_version record waits in the buffer until a flush
    writer.flush()
    time.sleep(0.001)
size = os.path.getsize(path)
print("ready", flush=True)
sys.stdin.readline()
start = time.monotonic()
for k in range(steps):
    step = first + k
    for i in range(per_step):
        tag = tags[(k * per_step + i) % len(tags)]
        writer.add_scalar(tag, (k % 97) * 0.25, step)
        size += record_size(tag, step)
    # tensorboardX hands events to a logger thread, so one flush() may run before they reached the
    # file: flush until every byte of this step is there, and report that moment.
    give_up = time.monotonic() + 2
    while True:
        writer.flush()
        if os.path.getsize(path) >= size or time.monotonic() > give_up:
            break
        time.sleep(0.0002)
    if report:
        print(step, time.time(), flush=True)
    time.sleep(max(0.0, start + (k + 1) * interval - time.monotonic()))
writer.close()
if os.path.getsize(path) != size:
    print(f"record size formula off: {os.path.getsize(path)} != {size}", file=sys.stderr)
print("done", flush=True)
"""


def start_writer(logdir: Path, steps: int, interval: float, per_step: int, first: int, report: bool):
    """A tensorboardX writer subprocess, started and waiting for a line on stdin to begin."""
    logdir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(logdir), str(steps), str(interval), str(per_step), str(first),
         "1" if report else "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout.readline().strip() == "ready"
    return process


def go(process) -> None:
    process.stdin.write("go\n")
    process.stdin.flush()


# -- (a) latency ----------------------------------------------------------------------------------


def latency(mode: str, steps: int, poll: float) -> dict:
    """flush->store latency over ``steps`` steps of one tag-set, in seconds."""
    work = Path(tempfile.mkdtemp(prefix=f"rltop-lat-{mode}-"))
    writer = start_writer(work / "run", steps, 0.05, 5, 1, report=True)
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    arrived: dict[int, float] = {}
    store = Store()

    def consume() -> None:
        while True:
            batch = inbox.get()
            if batch is None:
                return
            apply_batch(store, batch)
            now = time.time()
            for points in batch.points:
                for step in points.points.steps.tolist():
                    arrived.setdefault(step, now)

    consumer = threading.Thread(target=consume)
    consumer.start()
    watcher = Watcher([str(work)], inbox.put, poll=poll if mode == "polling" else None)
    watcher.start()
    watcher.caught_up.wait(10)
    go(writer)
    landed = {}
    for line in writer.stdout:
        if line.strip() == "done":
            break
        step, when = line.split()
        landed[int(step)] = float(when)
    deadline = time.monotonic() + poll + 5
    while len(arrived) < len(landed) and time.monotonic() < deadline:
        time.sleep(0.05)
    watcher.stop()
    inbox.put(None)
    consumer.join()
    writer.wait()
    shutil.rmtree(work, ignore_errors=True)
    lags = np.array([arrived[s] - t for s, t in landed.items() if s in arrived])
    return {
        "mode": watcher.mode,
        "steps": len(landed),
        "missing": len(landed) - lags.size,
        "p50": float(np.percentile(lags, 50)),
        "p90": float(np.percentile(lags, 90)),
        "max": float(lags.max()),
    }


# -- (b) CPU of `rltop tail` ----------------------------------------------------------------------


def proc_cpu(pid: int) -> float:
    """user+sys seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def tail_cpu(seconds: float, busy: bool, interval: float = 0.1, per_step: int = 5) -> list[dict]:
    """CPU share of a native and a polling `rltop tail` over ``seconds``, busy or quiet run."""
    work = Path(tempfile.mkdtemp(prefix="rltop-cpu-"))
    steps = int(seconds / interval) + 40
    writer = start_writer(work / "run", steps if busy else 1, interval, per_step, 1, report=False)
    if not busy:
        go(writer)
        writer.wait()
    command = [sys.executable, "-m", "rltop", "tail", str(work)]
    tails = {
        mode: subprocess.Popen(
            command + (["--poll", "1"] if mode == "polling" else []),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for mode in ("native", "polling")
    }
    if busy:
        go(writer)
    time.sleep(3)  # start-up and first read are not part of the steady state
    before = {mode: (proc_cpu(p.pid), proc_rss_mb(p.pid)) for mode, p in tails.items()}
    started = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - started
    results = []
    for mode, process in tails.items():
        cpu, rss = proc_cpu(process.pid), proc_rss_mb(process.pid)
        results.append(
            {
                "mode": mode,
                "run": f"{per_step} tags every {interval:g} s" if busy else "quiet",
                "cpu_pct": 100 * (cpu - before[mode][0]) / elapsed,
                "rss_start": before[mode][1],
                "rss_end": rss,
            }
        )
        process.terminate()
        process.wait(5)
    if busy:
        writer.kill()
        writer.wait()
    shutil.rmtree(work, ignore_errors=True)
    return results


# -- (c) cost per new point vs history size -------------------------------------------------------


def write_history(path: Path, points: int) -> None:
    """An event file of ``points`` scalars over the 50 TAGS, built column-wise (seconds, not minutes)."""
    steps = max(1, points // len(TAGS))
    step = np.repeat(np.arange(HISTORY_FIRST_STEP, HISTORY_FIRST_STEP + steps, dtype=np.int64), len(TAGS))
    tag = np.tile(np.arange(len(TAGS)), steps)
    n = step.size
    tag_len = len(TAGS[0])
    entry_len = 2 + tag_len + 5
    summary_len = 2 + entry_len
    payload_len = 9 + 1 + 3 + 2 + summary_len
    rec = np.zeros((n, 12 + payload_len + 4), dtype=np.uint8)
    rec[:, 0:8] = np.frombuffer(struct.pack("<Q", payload_len), np.uint8)
    rec[:, 8:12] = np.frombuffer(struct.pack("<I", masked_crc32c(struct.pack("<Q", payload_len))), np.uint8)
    p = 12
    rec[:, p] = 0x09
    rec[:, p + 1 : p + 9] = (1.7e9 + step.astype(np.float64)).view(np.uint8).reshape(n, 8)
    rec[:, p + 9] = 0x10
    rec[:, p + 10] = (step & 0x7F) | 0x80
    rec[:, p + 11] = ((step >> 7) & 0x7F) | 0x80
    rec[:, p + 12] = step >> 14
    q = p + 13
    rec[:, q : q + 4] = [0x2A, summary_len, 0x0A, entry_len]
    rec[:, q + 4 : q + 6] = [0x0A, tag_len]
    names = np.array([np.frombuffer(t.encode(), np.uint8) for t in TAGS])
    rec[:, q + 6 : q + 6 + tag_len] = names[tag]
    rec[:, q + 6 + tag_len] = 0x15
    values = ((step % 97) * 0.25).astype(np.float32)
    rec[:, q + 7 + tag_len : q + 11 + tag_len] = values.view(np.uint8).reshape(n, 4)
    flat = rec.reshape(-1)
    starts = np.arange(n, dtype=np.int64) * rec.shape[1] + 12
    crcs = masked_crc32c_rows(flat, starts, np.full(n, payload_len, dtype=np.int64))
    rec[:, 12 + payload_len :] = crcs.astype("<u4").view(np.uint8).reshape(n, 4)
    version = b"\x09" + struct.pack("<d", 1.7e9) + b"\x1a\x0dbrain.Event:2"
    head = struct.pack("<Q", len(version))
    crcs = struct.pack("<I", masked_crc32c(head)), struct.pack("<I", masked_crc32c(version))
    first = head + crcs[0] + version + crcs[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(first + rec.tobytes())


def self_rss_mb() -> float:
    return proc_rss_mb(os.getpid())


def history_cost(points: int, seconds: float) -> dict:
    """CPU per new point and memory growth of Watcher + Store with ``points`` already in the series."""
    work = Path(tempfile.mkdtemp(prefix="rltop-hist-"))
    write_history(work / "run" / "events.out.tfevents.1000000000.history", points)
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    store = Store()
    counted = [0]

    def consume() -> None:
        while (batch := inbox.get()) is not None:
            apply_batch(store, batch)
            if not batch.initial:
                counted[0] += batch.point_count()

    consumer = threading.Thread(target=consume)
    consumer.start()
    loaded = time.perf_counter()
    watcher = Watcher([str(work)], inbox.put)
    watcher.start()
    watcher.caught_up.wait(120)
    while store.runs.get("run") is None or store.runs["run"].scalar_count() < points:
        time.sleep(0.01)
    loaded = time.perf_counter() - loaded
    writer = start_writer(work / "run", int(seconds / 0.1) + 40, 0.1, 5, LIVE_FIRST_STEP, report=False)
    go(writer)
    time.sleep(2)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, rss0, n0 = usage.ru_utime + usage.ru_stime, self_rss_mb(), counted[0]
    time.sleep(seconds)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu1, rss1, n1 = usage.ru_utime + usage.ru_stime, self_rss_mb(), counted[0]
    writer.kill()
    writer.wait()
    watcher.stop()
    inbox.put(None)
    consumer.join()
    shutil.rmtree(work, ignore_errors=True)
    return {
        "history": store.runs["run"].scalar_count() - counted[0],
        "first_read_s": loaded,
        "new_points": n1 - n0,
        "us_per_point": 1e6 * (cpu1 - cpu0) / max(1, n1 - n0),
        "cpu_pct": 100 * (cpu1 - cpu0) / seconds,
        "rss_growth_mb": rss1 - rss0,
    }


def exit_times(trials: int) -> dict[str, list[float]]:
    """Seconds from SIGINT / SIGTERM to the exit of a `rltop tail` that is streaming."""
    work = Path(tempfile.mkdtemp(prefix="rltop-exit-"))
    writer = start_writer(work / "run", 100_000, 0.1, 5, 1, report=False)
    go(writer)
    times: dict[str, list[float]] = {"SIGINT": [], "SIGTERM": []}
    for _ in range(trials):
        for name, sig in (("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM)):
            tail = subprocess.Popen(
                [sys.executable, "-m", "rltop", "tail", str(work)], cwd=ROOT,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            time.sleep(1.5)
            sent = time.monotonic()
            tail.send_signal(sig)
            code = tail.wait(10)
            times[name].append(time.monotonic() - sent)
            stderr = tail.stderr.read()
            if code != 0 or "Traceback" in stderr:
                print(f"  {name}: exit code {code}, stderr {stderr!r}")
    writer.kill()
    writer.wait()
    shutil.rmtree(work, ignore_errors=True)
    return times


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main() -> None:
    """Run the three benchmarks and print the figures next to the goals."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="200 latency steps, 15 s CPU phases")
    parser.add_argument("--poll", type=float, default=1.0, help="polling interval measured (default 1)")
    args = parser.parse_args()
    steps, seconds = (200, 15.0) if args.quick else (300, 60.0)

    print(f"(a) flush -> store latency, {steps} steps, tensorboardX writer, 5 tags per step")
    for mode in ("native", "polling"):
        r = latency(mode, steps, args.poll)
        goal = 0.1 if mode == "native" else args.poll + 0.1
        print(
            f"  {mode:8} p50 {r['p50'] * 1000:6.1f} ms  p90 {r['p90'] * 1000:6.1f} ms"
            f"  max {r['max'] * 1000:6.1f} ms"
            f"  missing {r['missing']}  goal p50 <= {goal * 1000:.0f} ms: {verdict(r['p50'] <= goal)}"
            f" (p90/goal {r['p90'] / goal:.2f})"
        )

    print(f"(b) CPU of `rltop tail` over {seconds:.0f} s (one core = 100 %)")
    for busy, interval, per_step in ((True, 0.1, 5), (True, 1.0, 50), (False, 1.0, 0)):
        for r in tail_cpu(seconds, busy, interval, per_step):
            goal = 2.0 if busy else 0.5
            print(
                f"  {r['mode']:8} {r['run']:20} cpu {r['cpu_pct']:5.2f} %  rss {r['rss_start']:.0f} -> "
                f"{r['rss_end']:.0f} MB  goal <= {goal} %: {verdict(r['cpu_pct'] <= goal)} "
                f"(ratio {r['cpu_pct'] / goal:.2f})"
            )

    live = seconds / 3
    print(f"(c) Watcher + Store, 50 tags/s for {live:.0f} s on top of a history in the same series")
    results = [history_cost(n, live) for n in (1_000, 1_000_000)]
    for r in results:
        print(
            f"  history {r['history']:>9,} points (first read {r['first_read_s']:.2f} s): "
            f"{r['new_points']} new, {r['us_per_point']:.0f} us CPU per point ({r['cpu_pct']:.2f} %), "
            f"rss +{r['rss_growth_mb']:.1f} MB"
        )
    ratio = results[1]["us_per_point"] / max(results[0]["us_per_point"], 1e-9)
    print(f"  cost per point, 1M vs 1k history: x{ratio:.2f} (goal: flat, ~1)")

    trials = 3 if args.quick else 10
    print(f"(d) signal -> exit of a streaming `rltop tail`, {trials} trials each")
    for name, values in exit_times(trials).items():
        print(
            f"  {name:8} max {max(values) * 1000:.0f} ms, median {np.median(values) * 1000:.0f} ms"
            f"  goal <= 1000 ms: {verdict(max(values) <= 1.0)}"
        )


if __name__ == "__main__":
    main()
