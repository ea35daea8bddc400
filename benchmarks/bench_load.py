"""Full-load benchmark: rltop's reader against tbparse and TensorBoard's EventAccumulator.

    python benchmarks/bench_load.py            # 30 tags x 30k steps (900k scalars)
    python benchmarks/bench_load.py --large    # also 60 x 100k (6M scalars; tbparse takes minutes)
    python benchmarks/bench_load.py --skip-baselines   # rltop only

Each reader runs in a fresh interpreter, one after the other in this one run, so the figures are
side by side on the same machine state. CPU = user+sys of the child, RSS = its peak resident set.
rltop's "held" column is the bytes its series keep per scalar (the goal is <= 32).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_logs import SIZES, write_log  # noqa: E402

# (imports, load): timed separately so the load itself and the whole process are both visible.
READERS = {
    "rltop": (
        "from rltop.ingest.loader import load",
        """
r = load([PATH])
runs = list(r.store.runs.values())
count = sum(run.scalar_count() for run in runs)
held = sum(s.nbytes() for run in runs for s in run.series.values())
""",
    ),
    "tbparse": (
        "from tbparse import SummaryReader",
        """
df = SummaryReader(PATH).scalars
count = len(df)
held = None
""",
    ),
    "EventAccumulator": (
        "from tensorboard.backend.event_processing.event_accumulator import EventAccumulator",
        """
ea = EventAccumulator(PATH, size_guidance={"scalars": 0})
ea.Reload()
count = sum(len(ea.Scalars(t)) for t in ea.Tags()["scalars"])
held = None
""",
    ),
}

TIMER = """
import json, resource, sys, time
PATH = sys.argv[1]
start = time.perf_counter()
{imports}
loaded = time.perf_counter()
{body}
end = time.perf_counter()
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"count": count, "import": loaded - start, "load": end - loaded,
                  "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, "held": held}}))
"""


def measure(name: str, path: Path) -> dict:
    """Run one reader in a fresh interpreter; return its figures."""
    imports, body = READERS[name]
    code = TIMER.format(imports=imports, body=body)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["process_wall"] = time.perf_counter() - started
    return figures


def report(size: str, path: Path, names: list[str]) -> None:
    """Measure every reader on one log and print the table."""
    tags, steps = SIZES[size]
    mb = sum(f.stat().st_size for f in path.glob("events.out.tfevents.*")) / 1e6
    print(f"\n{size}: {tags} tags x {steps} steps = {tags * steps:,} scalars, {mb:.1f} MB (tensorboardX)")
    print(f"{'reader':<18}{'import s':>9}{'load s':>8}{'process s':>10}{'CPU s':>7}{'scalars/s':>12}"
          f"{'peak RSS MB':>12}{'held B/pt':>10}{'x tbparse load':>15}{'x process':>10}")
    results = {name: measure(name, path) for name in names}
    base = results.get("tbparse")
    for name, r in results.items():
        rate = r["count"] / r["load"]
        held = f"{r['held'] / r['count']:.1f}" if r["held"] else "-"
        ratio = f"{base['load'] / r['load']:.0f}x" if base else "-"
        whole = f"{base['process_wall'] / r['process_wall']:.0f}x" if base else "-"
        print(f"{name:<18}{r['import']:>9.2f}{r['load']:>8.2f}{r['process_wall']:>10.2f}{r['cpu']:>7.2f}"
              f"{rate:>12,.0f}{r['rss_mb']:>12.0f}{held:>10}{ratio:>15}{whole:>10}")
    counts = {r["count"] for r in results.values()}
    print("counts agree" if len(counts) == 1 else f"COUNTS DIFFER: {counts}")


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--large", action="store_true", help="also the 60 x 100k log")
    parser.add_argument("--skip-baselines", action="store_true", help="time rltop only")
    args = parser.parse_args()
    names = ["rltop"] if args.skip_baselines else list(READERS)
    for size in ("medium", "large") if args.large else ("medium",):
        report(size, write_log(size), names)
    print(f"\nmachine: {resource.getpagesize()} B pages, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
