"""Full-load benchmark: rltop's reader against tbparse, EventAccumulator, rustboard and two floors.

    python benchmarks/bench_load.py                 # the 900k-scalar log, every reader
    python benchmarks/bench_load.py --all           # every row of the README table (see below)
    python benchmarks/bench_load.py --sizes large tensor --readers rltop rustboard raw frames

Logs (benchmarks/make_logs.py, cached under $RLTOP_BENCH_OUT or benchmarks/out/): ``medium`` 30 tags
x 30k steps (900k scalars, tensorboardX), ``large`` 60 x 100k (6M), ``tensor`` 30 x 30k written by
torch's ``add_scalar(new_style=True)`` (tensor scalars), ``tags`` 3000 tags x 333 steps (1M).

Every reader runs in a fresh interpreter, one after the other in this one run, so the figures are
side by side on the same machine state; the load average is printed with each table. "load CPU" is
user+sys of the load alone (imports excluded), "process CPU" of the whole child, peak RSS its
VmHWM; rustboard's is the server's own CPU (from /proc) until every scalar could be read back over
gRPC. Floors: "raw" reads
the file's bytes, "frames" walks its TFRecord frames in Python (no decoding, no checksums). rltop
checks every payload's CRC; rustboard by default only checks records that fail to parse.

A reader that loads in under 5 CPU-s runs ``--repeat`` times (default 7): half the rounds before
tbparse's and EventAccumulator's single runs, half after, and the median of its runs is shown
("runs" says how many). On this shared machine one run of a 0.2 s load reads anywhere from 0.21
to 0.29 s a minute apart.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bytecode import compile_rltop  # noqa: E402
from make_logs import EXTRA_SIZES, SIZES, write_log  # noqa: E402
from rustboard import rustboard_load  # noqa: E402

# The floors' common part: read every event file's bytes (``data``), counting nothing yet.
READ_FILES = """
count = 0
for name in glob.glob(PATH + "/events.out.tfevents.*"):
    with open(name, "rb") as f:
        data = f.read()"""

# (imports, load): timed separately so the load itself and the whole process are both visible.
READERS = {
    "rltop": (
        "from rltop.ingest.follow.loader import load",
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
reader = SummaryReader(PATH)
count = len(reader.scalars) + len(reader.tensors)  # torch new_style / TF2 scalars are tensors
""",
    ),
    "EventAccumulator": (
        "from tensorboard.backend.event_processing.event_accumulator import EventAccumulator",
        """
ea = EventAccumulator(PATH, size_guidance={"scalars": 0, "tensors": 0})
ea.Reload()
count = sum(len(ea.Scalars(t)) for t in ea.Tags()["scalars"])
count += sum(len(ea.Tensors(t)) for t in ea.Tags()["tensors"])
""",
    ),
    "raw": ("import glob", READ_FILES),
    "frames": (
        "import glob, struct",
        READ_FILES
        + """
    unpack, pos, n = struct.Struct("<Q").unpack_from, 0, len(data)
    while pos + 12 <= n:
        length = unpack(data, pos)[0]
        pos += 16 + length
        count += 1
    count -= 1  # the file_version record
""",
    ),
}
SLOW = ("tbparse", "EventAccumulator")  # minutes on the 6M log
ROWS = {  # --all: which readers run on which log
    "medium": list(READERS) + ["rustboard"],
    "large": ["rltop", "rustboard", "raw", "frames"],
    "tensor": ["rltop", "tbparse", "rustboard", "raw", "frames"],
    "tags": ["rltop", "rustboard", "raw", "frames"],
}

TIMER = """
import json, resource, sys, time
PATH = sys.argv[1]
held = None
start = time.perf_counter()
{imports}
loaded = time.perf_counter()
cpu0 = time.process_time()
{body}
cpu = time.process_time() - cpu0
end = time.perf_counter()
usage = resource.getrusage(resource.RUSAGE_SELF)
# VmHWM is this process's own peak (ru_maxrss would carry the benchmark's own peak over exec).
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
rss = int(hwm[0].split()[1]) / 1024 if hwm else usage.ru_maxrss / 1024
print(json.dumps({{"count": count, "import": loaded - start, "load": end - loaded, "load_cpu": cpu,
                  "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": rss, "held": held}}))
"""


def measure(name: str, path: Path, expected: int | None) -> dict:
    """Run one reader in a fresh process; return its figures."""
    if name == "rustboard":
        return rustboard_load(path, expected)
    imports, body = READERS[name]
    code = TIMER.format(imports=imports, body=body)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["process_wall"] = time.perf_counter() - started
    return figures


def describe(size: str) -> str:
    """One line: what the log holds."""
    tags, steps = SIZES[size] if size in SIZES else EXTRA_SIZES[size][:2]
    path = write_log(size)
    mb = sum(f.stat().st_size for f in path.glob("events.out.tfevents.*")) / 1e6
    writer = "torch add_scalar(new_style=True)" if size == "tensor" else "tensorboardX"
    return f"{size}: {tags} tags x {steps} steps = {tags * steps:,} scalars, {mb:.1f} MB ({writer})"


QUICK = 5.0  # CPU seconds: a reader this fast is measured `--repeat` times, its median shown


def report(size: str, names: list[str], repeat: int) -> dict[str, dict]:
    """Measure every reader on one log and print the table; return the figures."""
    path = write_log(size)
    print(f"\n{describe(size)}   load average before: {os.getloadavg()[0]:.2f}")
    runs: dict[str, list[dict]] = {name: [] for name in names}
    expected = None
    # Readers under QUICK CPU-s run `repeat` times, half the rounds before the slow readers' single
    # runs and half after, so that their median sees the machine the slow readers saw.
    quick = [name for name in names if name not in SLOW]

    def quick_round() -> None:
        nonlocal expected
        for name in quick:
            if runs[name] and runs[name][0]["load_cpu"] >= QUICK:
                continue  # (rustboard on the 6M log: once is enough)
            runs[name].append(measure(name, path, expected))
            if name == "rltop":  # first: rustboard is read back until it holds as many points
                expected = runs[name][0]["count"]

    for _ in range(max(1, repeat // 2)):
        quick_round()
    for name in names:
        if name in SLOW:
            runs[name].append(measure(name, path, expected))
    for _ in range(repeat - max(1, repeat // 2)):
        quick_round()
    results: dict[str, dict] = {}
    for name in names:
        ordered = sorted(runs[name], key=lambda r: r["load_cpu"])
        results[name] = {**ordered[len(ordered) // 2], "runs": len(ordered)}  # the median run
    print(
        f"{'reader':<18}{'load CPU s':>11}{'process CPU s':>14}{'wall s':>8}{'scalars/s':>12}"
        f"{'peak RSS MB':>12}{'held B/pt':>10}{'rltop is x faster':>18}{'runs':>6}"
    )
    ours = results.get("rltop")
    for name, r in results.items():
        rate = f"{r['count'] / r['load_cpu']:,.0f}" if r["count"] and r["load_cpu"] else "-"
        held = f"{r['held'] / r['count']:.1f}" if r.get("held") else "-"
        ratio = f"{r['load_cpu'] / ours['load_cpu']:.1f}x" if ours and name != "rltop" else "-"
        print(
            f"{name:<18}{r['load_cpu']:>11.2f}{r['cpu']:>14.2f}{r['load']:>8.2f}{rate:>12}"
            f"{r['rss_mb']:>12.0f}{held:>10}{ratio:>18}{r['runs']:>6}"
        )
    counts = {r["count"] for n, r in results.items() if n not in ("raw",)}
    print("counts agree" if len(counts) == 1 else f"COUNTS DIFFER: {counts}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return results


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--all", action="store_true", help="every README row (tbparse is skipped at 6M)")
    parser.add_argument("--sizes", nargs="+", default=["medium"], choices=[*SIZES, *EXTRA_SIZES])
    parser.add_argument("--readers", nargs="+", choices=[*READERS, "rustboard"])
    parser.add_argument("--skip-slow", action="store_true", help="no tbparse / EventAccumulator")
    parser.add_argument(
        "--repeat",
        type=int,
        default=7,
        help=f"runs of each reader under {QUICK:g} CPU-s; the median is shown (default 7)",
    )
    args = parser.parse_args()
    compile_rltop()
    plan = dict(ROWS) if args.all else {size: args.readers or ROWS[size] for size in args.sizes}
    figures = {}
    for size, names in plan.items():
        names = [n for n in names if not (args.skip_slow and n in SLOW)]
        figures[size] = report(size, names, args.repeat)
    if "medium" in figures and {"tensor", "tags"} & set(figures):
        base = figures["medium"]["rltop"]
        print("\nper-scalar load CPU against the 900k simple-value log (goal <= 1.5x):")
        for size in ("tensor", "tags"):
            if size in figures:
                other = figures[size]["rltop"]
                ratio = (other["load_cpu"] / other["count"]) / (base["load_cpu"] / base["count"])
                print(f"  {size:<8}{ratio:.2f}x")
    print(
        f"\nmachine: {os.cpu_count()} cores, python {sys.version.split()[0]}, "
        f"{resource.getpagesize()} B pages"
    )


if __name__ == "__main__":
    main()
