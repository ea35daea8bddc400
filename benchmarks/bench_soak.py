"""Soak benchmark: the real dashboard (and ``rltop tail`` beside it) under a live writer for N minutes.

    python benchmarks/bench_soak.py                  # 10 minutes, 60 tags at 1 step/s
    python benchmarks/bench_soak.py --minutes 3 --rate 2

A writer process appends ``--tags`` scalars every 1/``--rate`` seconds to one event file (rltop's
own writer, flushed after every step, like torch's SummaryWriter). The installed ``rltop`` dashboard
runs in a detached tmux pane (100 x 30) and ``rltop tail`` in the background, both on that
directory. Every 10 s the benchmark samples each process's resident memory (``/proc/PID/status``)
and CPU time (``/proc/PID/stat``). After a warm-up it fits a line to the RSS samples and prints:

- the RSS slope in MB per minute and in bytes per point written (the whole run after the warm-up,
  and its second half), against the goal of issue 26: the dashboard's memory grows by at most 32 B
  per point held, plus a constant (bounded caches filling in the first minutes are part of it; a
  point takes 16 B in a series, `rltop.model.series.Series`: int32 step, float64 wall time, float32
  value; 24 B with ``RLTOP_WIDE_SERIES=1``);
- the share of a core each process used (goal for the dashboard: <= 3 % at 60 points/s).

``rltop tail`` keeps nothing, so its slope is the baseline for "flat".

``--trace`` answers where the bytes go instead: the same writer, the dashboard run in this process
(headless, Textual's test driver, 100 x 30) under ``tracemalloc`` from its start, and snapshots after
the warm-up, halfway and at the end. It prints the growth per point by owner (the series' columns,
the rest of rltop, Textual, Rich, other) in each half, and what the series really hold per point
(their capacity included). Rich and Textual grow in the first half only: their caches are bounded
(Rich's cell lengths of 4,096 strings, twice; Textual's LRU caches) and fill with the numbers the
cards show; so the memory goal is judged on the second half's slope (the first half's is printed).
Tracing from the start counts what the warm-up allocated and later freed (the first read's columns,
a series' old arrays once it grew) against the growth; traced from the warm-up on, each series'
whole new arrays counted as growth (the figure was 30 B a point of a 24-B point).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RLTOP = shutil.which("rltop", path=str(Path(sys.executable).parent)) or shutil.which("rltop")
TMUX = shutil.which("tmux")
TICKS = os.sysconf("SC_CLK_TCK")
WIDE = os.environ.get("RLTOP_WIDE_SERIES", "") not in ("", "0")  # (the dashboards inherit it)
SERIES_BYTES = 24 if WIDE else 16  # int32 (int64 wide) step + float64 wall time + float32 (float64) value
GOAL_BYTES = 32
"""Issue 26: the dashboard's memory grows by at most 32 B per point held, plus a constant."""
SAMPLE_EVERY = 10.0

LIVE_WRITER = Path(__file__).parent / "live_writer.py"  # (the run of bench_live.py --cpu, other values)


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys over xs."""
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    den = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / den if den else 0.0


def start_writer(args: argparse.Namespace, prefix: str) -> tuple[Path, subprocess.Popen]:
    """A fresh ``<work>/logs/soak_run`` and the writer process appending to it, once its first step
    is on disk; the caller kills the writer and removes ``work``."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    run_dir = work / "logs" / "soak_run"
    run_dir.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen(
        [sys.executable, str(LIVE_WRITER), str(run_dir), "--tags", str(args.tags), "--rate", str(args.rate)]
        + ["--values", "wave"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    first = writer.stdout.readline()
    assert first.strip() == "ready", first
    return work, writer


class Tmux:
    """The dashboard in its own tmux server (private socket)."""

    def __init__(self, command: str) -> None:
        self.socket = f"rltop-soak-{uuid.uuid4().hex[:8]}"
        self._run(
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "100",
            "-y",
            "30",
            f"exec env -u COLUMNS -u LINES TERM=xterm-256color {command}",
        )
        self.pid = int(self._run("display-message", "-p", "-t", "s", "#{pane_pid}").strip())

    def _run(self, *args: str) -> str:
        return subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        ).stdout

    def screen(self) -> str:
        """What the pane shows."""
        return self._run("capture-pane", "-p", "-t", "s")

    def close(self) -> None:
        """Quit the dashboard and the tmux server."""
        self._run("send-keys", "-t", "s", "q")
        time.sleep(0.5)
        self._run("kill-server")


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--tags", type=int, default=60)
    parser.add_argument("--rate", type=float, default=1.0, help="steps per second")
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds left out of the fit")
    parser.add_argument("--trace", action="store_true", help="in process, tracemalloc: who holds the bytes")
    args = parser.parse_args()
    if args.trace:
        asyncio.run(trace(args))
        return
    if TMUX is None or RLTOP is None:
        sys.exit("needs tmux and the installed rltop")
    work, writer = start_writer(args, "rltop-soak-")
    tail = subprocess.Popen(
        [RLTOP, "tail", str(work / "logs")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    dashboard = Tmux(f"{RLTOP} {work / 'logs'}")
    samples: dict[str, list[tuple[float, int, float]]] = {"dashboard": [], "tail": []}
    pids = {"dashboard": dashboard.pid, "tail": tail.pid}
    started = time.monotonic()
    try:
        deadline = started + args.minutes * 60
        while time.monotonic() < deadline:
            now = time.monotonic()
            for name, pid in pids.items():
                samples[name].append((now - started, rss_bytes(pid), cpu_seconds(pid)))
            time.sleep(SAMPLE_EVERY)
        screen = dashboard.screen()
    finally:
        dashboard.close()
        tail.send_signal(signal.SIGINT)
        writer.kill()
        for process in (tail, writer):
            process.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    points_per_s = args.tags * args.rate
    print(
        f"soak: {args.minutes:g} min, {args.tags} tags at {args.rate:g} step/s = {points_per_s:g} "
        "points/s, "
        f"warm-up {args.warmup:g} s left out of the fit; the dashboard showed step "
        f"{_shown_step(screen)} at the end"
    )
    print_minutes(samples, points_per_s)
    for name, rows in samples.items():
        kept = [row for row in rows if row[0] >= args.warmup] or rows
        times = [row[0] for row in kept]
        rss = [row[1] for row in kept]
        per_s = slope(times, rss)
        # The second half's slope is what a point costs once the bounded caches are full: Rich's two
        # cell-length caches (4,096 strings each) and Textual's LRU caches fill for minutes with the
        # new numbers a card shows (--trace: their growth per point in each half), a constant.
        late = [row for row in kept if row[0] >= (times[0] + times[-1]) / 2] or kept
        late_per_s = slope([row[0] for row in late], [row[1] for row in late])
        cpu = (kept[-1][2] - kept[0][2]) / max(times[-1] - times[0], 1e-9) * 100
        per_point, late_per_point = per_s / points_per_s, late_per_s / points_per_s
        goal = (
            ""
            if name != "dashboard"
            else (
                f"; goal <= {GOAL_BYTES} B/point (second half): "
                f"{'OK' if late_per_point <= GOAL_BYTES else 'OVER'}, "
                f"CPU goal <= 3 %: {'OK' if cpu <= 3 else 'OVER'}"
            )
        )
        print(
            f"  {name:9s}: RSS {rss[0] / 1e6:.1f} -> {rss[-1] / 1e6:.1f} MB, "
            f"slope {per_s * 60 / 1e6:.3f} MB/min = "
            f"{per_point:.0f} B/point ({per_point / SERIES_BYTES:.1f}x the series' {SERIES_BYTES} B), "
            f"second half {late_per_point:.0f} B/point, CPU {cpu:.2f} % of a core{goal}"
        )


def print_minutes(samples: dict[str, list[tuple[float, int, float]]], points_per_s: float) -> None:
    """Per minute: each process's RSS at the minute's end and the CPU seconds it used in that minute.

    Flat means the same CPU per minute at minute 30 as at minute 5 (the work per repaint does not
    grow with the history), and an RSS that grows by about what the series hold (16 B a point).
    """
    names = list(samples)
    print("minute " + "".join(f"{name + ' RSS MB':>18}{name + ' CPU s':>16}" for name in names)
          + f"{'series MB':>11}")  # fmt: skip
    minutes = int(max(row[0] for rows in samples.values() for row in rows) // 60)
    for minute in range(1, minutes + 1):
        cells = []
        for name in names:
            rows = samples[name]
            end = max((row for row in rows if row[0] <= minute * 60), key=lambda row: row[0])
            start = max(
                (row for row in rows if row[0] <= (minute - 1) * 60), key=lambda row: row[0], default=rows[0]
            )
            cells.append(f"{end[1] / 1e6:>18.1f}{end[2] - start[2]:>16.2f}")
        series = minute * 60 * points_per_s * SERIES_BYTES / 1e6
        print(f"{minute:>6} " + "".join(cells) + f"{series:>11.1f}")


OWNERS = (
    ("series", "rltop/model/series.py"),
    ("rltop", "/rltop/"),
    ("textual", "/textual/"),
    ("rich", "/rich/"),
)
"""Owner -> a part of the allocating file's path (first match wins; the rest is "other")."""


async def trace(args: argparse.Namespace) -> None:
    """The dashboard in this process under the writer; tracemalloc's growth by owner, per point."""
    import tracemalloc

    sys.path.insert(0, str(ROOT))
    from rltop.ui.app import RltopApp

    work, writer = start_writer(args, "rltop-soak-trace-")
    tracemalloc.start(1)
    app = RltopApp([str(work / "logs")])
    try:
        async with app.run_test(size=(100, 30)):
            await asyncio.sleep(args.warmup)
            snapshots = [(tracemalloc.take_snapshot(), _points(app))]
            for _ in range(2):  # two halves: what still grows once the bounded caches are full
                await asyncio.sleep(args.minutes * 30)
                snapshots.append((tracemalloc.take_snapshot(), _points(app)))
            held = sum(
                series.nbytes() for run in app.session.store.runs.values() for series in run.series.values()
            )
            tracemalloc.stop()
    finally:
        writer.kill()
        writer.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    points = snapshots[-1][1]
    print(
        f"trace: {args.minutes:g} min after a {args.warmup:g} s warm-up ({points:,} points held); "
        "growth per added point by owner, in each half:"
    )
    halves = []
    for (before, count_before), (after, count_after) in zip(snapshots, snapshots[1:]):
        added = max(count_after - count_before, 1)
        growth: dict[str, int] = {}
        for stat in after.compare_to(before, "filename"):
            path = stat.traceback[0].filename
            owner = next((name for name, part in OWNERS if part in path), "other")
            growth[owner] = growth.get(owner, 0) + stat.size_diff
        halves.append({owner: size / added for owner, size in growth.items()})
    for owner in [name for name, _ in OWNERS] + ["other", "total"]:
        cells = [half.get(owner, 0) if owner != "total" else sum(half.values()) for half in halves]
        print(f"  {owner:8s} " + "".join(f"{cell:9.1f} B/point" for cell in cells))
    print(f"  the series hold {held / points:.1f} B a point (capacity included; {SERIES_BYTES} B of data)")


def _points(app) -> int:
    return sum(run.scalar_count() for run in app.session.store.runs.values())


def _shown_step(screen: str) -> str:
    found = re.search(r"step (\d+)", screen)
    return found.group(1) if found else "?"


if __name__ == "__main__":
    main()
