"""Snapshot benchmark: ``rltop snapshot`` of the 30 tags x 30k steps tensorboardX log, end to end.

    python benchmarks/bench_snapshot.py                  # goal: <= 1 s per snapshot, fresh process
    python benchmarks/bench_snapshot.py --repeat 5       # more runs for the median
    python benchmarks/bench_snapshot.py --large          # also 60 x 100k (6M scalars; no goal)

"End to end" is what a user waits for: a fresh ``python -m rltop snapshot LOG`` process, from
exec to exit, output to /dev/null (imports, discovery, load, health engine, statistics and
rendering). The second table splits one in-process snapshot into its phases, per format. The log is
written once by ``make_logs.py`` (the lead's generator, real tensorboardX writer) and cached.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_logs import SIZES, write_log  # noqa: E402

GOAL_SECONDS = 1.0
FORMATS = ("text", "json", "markdown", "csv", "svg", "html")

PHASES = """
import json, sys, time
start = time.perf_counter()
from rltop.health.engine import assess_store
from rltop.health.settings import load_rules
from rltop.ingest.follow.loader import load
from rltop.report.render import render
from rltop.report.snapshot import build_snapshot
t = {"import": time.perf_counter() - start}
mark = time.perf_counter()
rules = load_rules()
result = load([sys.argv[1]])
t["load"] = time.perf_counter() - mark
mark = time.perf_counter()
health = assess_store(result.store, rules, now=time.time())
t["health"] = time.perf_counter() - mark
mark = time.perf_counter()
snap = build_snapshot(result.store, health, None, result.discovery.roots, result.problems)
t["stats"] = time.perf_counter() - mark
for fmt in sys.argv[2].split(","):
    mark = time.perf_counter()
    render(snap, fmt, width=100)
    t["render " + fmt] = time.perf_counter() - mark
t["scalars"] = sum(run.scalar_count() for run in result.store.runs.values())
print(json.dumps(t))
"""


def end_to_end(path: Path, fmt: str, repeat: int) -> list[float]:
    """Wall seconds of ``repeat`` fresh ``rltop snapshot`` processes."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "rltop", "snapshot", str(path), "--format", fmt, "--output", "/dev/null"],
            capture_output=True,
            text=True,
        )
        times.append(time.perf_counter() - started)
        if done.returncode not in (0, 1):
            raise SystemExit(f"rltop snapshot failed ({done.returncode}):\n{done.stderr}")
    return times


def phases(path: Path) -> dict[str, float]:
    """One in-process snapshot split into phases (fresh interpreter)."""
    done = subprocess.run(
        [sys.executable, "-c", PHASES, str(path), ",".join(FORMATS)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"phase run failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def python_startup(repeat: int) -> float:
    """Median wall time of ``python -c pass``: the floor under any fresh process."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def report(size: str, path: Path, repeat: int, with_goal: bool) -> None:
    """Print both tables for one log."""
    tags, steps = SIZES[size]
    mb = sum(f.stat().st_size for f in path.glob("events.out.tfevents.*")) / 1e6
    print(f"\n{size}: {tags} tags x {steps} steps = {tags * steps:,} scalars, {mb:.1f} MB (tensorboardX)")
    print(f"{'format':<10}{'median s':>9}{'min s':>7}{'max s':>7}{'x goal':>8}")
    for fmt in ("text", "json"):
        times = end_to_end(path, fmt, repeat)
        median = statistics.median(times)
        ratio = f"{median / GOAL_SECONDS:.2f}" if with_goal else "-"
        print(f"{fmt:<10}{median:>9.2f}{min(times):>7.2f}{max(times):>7.2f}{ratio:>8}")
    figures = phases(path)
    scalars = int(figures.pop("scalars"))
    total = sum(v for k, v in figures.items() if not k.startswith("render ") or k == "render text")
    print(f"phases of one snapshot (in-process, {scalars:,} scalars; total with text: {total:.2f} s)")
    for name, seconds in figures.items():
        print(f"  {name:<16}{seconds:>7.3f} s")
    if with_goal:
        print(f"goal: <= {GOAL_SECONDS:.1f} s end to end; x goal < 1 meets it")


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per format (median)")
    parser.add_argument("--large", action="store_true", help="also the 60 x 100k log (no goal)")
    args = parser.parse_args()
    print(f"python -c pass: {python_startup(args.repeat):.3f} s (floor of every fresh process)")
    for size in ("medium", "large") if args.large else ("medium",):
        report(size, write_log(size), args.repeat, with_goal=size == "medium")


if __name__ == "__main__":
    main()
