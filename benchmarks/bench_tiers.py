"""What each speed tier of the event-file reader buys: a full load with one tier switched off.

    python benchmarks/bench_tiers.py                          # the 900k-scalar log, every variant
    python benchmarks/bench_tiers.py --sizes large --variants all no_cycles --repeat 9

Each variant loads the log (`rltop.ingest.follow.loader.load`, as ``snapshot`` and ``export`` do) in a
fresh interpreter with one tier off, patched in before the load; the variants run in alternating
rounds, so that each sees the machine the others saw, and the median of each is shown with the
gain of its tier: its CPU minus the CPU with every tier on. "load CPU" is user+sys of the load
alone, imports excluded. The load average is printed before and after.

The variants (``docs/internals/performance.md`` lists what each tier serves):

- ``all``: every tier on (what rltop runs);
- ``plain``: the whole vectorised tier off (``RLTOP_PLAIN_READER=1``): frames walked one by one,
  every record through the general wire decoder;
- ``plain_framing``, ``plain_decode``: either half of it alone off;
- ``no_cycles``: the cycle tier off (`rltop.ingest.sources.tfevents.tfrecord.fast.cycles`);
- ``no_tag_cache``: each window groups its tags anew, with tag ids of its own
  (`rltop.ingest.sources.tfevents.tfrecord.fast.tags.TagCache`);
- ``no_columns``: each read split by tag at once instead of one split per file's packs;
- ``no_adopt``: a new series copies the load's columns instead of keeping them;

``--export`` measures ``rltop export`` (CSV of every point, the whole process's CPU, imports
included, as ``bench_export.py`` does) with and without the decimal columns
(`rltop.model.decimal_columns`: without them, every value goes through numpy's per-value text).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_logs import EXTRA_SIZES, SIZES, write_log  # noqa: E402

# Patches that turn one tier off, run in the child before the load.
VARIANTS = {
    "all": "",
    "plain": "from rltop.ingest.sources.tfevents.tfrecord import fast; fast.ENABLED = False",
    "plain_framing": """
import numpy as np
from rltop.ingest.sources.tfevents.tfrecord.fast import framing
framing.record_candidates = lambda *args: (np.empty(0, np.int64), np.empty(0, np.int64))
""",
    "plain_decode": """
from rltop.ingest.sources.tfevents.tfrecord import records
from rltop.ingest.sources.tfevents.tfrecord.fast import onevalue
records.decode_cycles = lambda data, buf, starts, *rest: onevalue.no_rows(starts.size)
""",
    "no_cycles": """
from rltop.ingest.sources.tfevents.tfrecord import records
from rltop.ingest.sources.tfevents.tfrecord.fast import onevalue
records.decode_cycles = onevalue.decode_one_value
""",
    "no_tag_cache": """
from rltop.ingest.sources.tfevents.tfrecord import reader
_decode = reader.decode_records
reader.decode_records = lambda data, starts, lengths, plugins, tags=None: _decode(
    data, starts, lengths, plugins)
""",
    "no_columns": """
from rltop.ingest.reading import Decoded
Decoded.take_columns = lambda self: None
""",
    "no_adopt": """
from rltop.model.series import Series
_append = Series.append
Series.append = lambda self, *args, adopt=False: _append(self, *args, adopt=False)
""",
}

TIMER = """
import json, resource, sys, time
PATH = sys.argv[1]
from rltop.ingest.follow.loader import load
{patch}
cpu0 = time.process_time()
r = load([PATH])
cpu = time.process_time() - cpu0
runs = list(r.store.runs.values())
count = sum(run.scalar_count() for run in runs)
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(json.dumps({{"count": count, "load_cpu": cpu, "rss_mb": int(hwm[0].split()[1]) / 1024}}))
"""


EXPORT = """
import sys
import numpy as np
if sys.argv[2] == "off":
    import rltop.report.csv_bytes as csv_bytes
    def none_done(values):
        zeros = np.zeros(values.size, np.int64)
        return np.zeros(values.size, bool), zeros, zeros, zeros
    csv_bytes.shortest_fixed = none_done
from rltop.cli import main
sys.argv = ["rltop", "export", sys.argv[1]]
main()
"""


def export_cpu(path: Path, decimals: bool) -> float:
    """CPU seconds of one ``rltop export`` of ``path`` (to /dev/null) in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "wb") as out:
        command = [sys.executable, "-c", EXPORT, str(path), "on" if decimals else "off"]
        subprocess.run(command, stdout=out, check=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def report_export(size: str, repeat: int) -> None:
    """``rltop export`` with and without the decimal columns, alternately; medians."""
    path = write_log(size)
    print(f"\nexport of {size} ({path.name})   load average before: {os.getloadavg()[0]:.2f}")
    runs: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(repeat):
        for decimals in runs:
            runs[decimals].append(export_cpu(path, decimals))
    for decimals, cpus in runs.items():
        cpus.sort()
        label = "decimal columns" if decimals else "numpy per value"
        print(f"{label:<16} process CPU s: median {cpus[len(cpus) // 2]:.2f} ({cpus[0]:.2f}-{cpus[-1]:.2f})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


AGAINST: dict[str, str] = {}  # variant name -> another checkout to load with (``--against``)


def measure(variant: str, path: Path) -> dict:
    """One load of ``path`` with ``variant``'s tier off, in a fresh interpreter."""
    code = TIMER.format(patch=VARIANTS.get(variant, ""))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if variant in AGAINST:
        env["PYTHONPATH"] = AGAINST[variant]
    # Not run from a checkout: ``python -c`` puts its folder first on sys.path.
    command = [sys.executable, "-c", code, str(path)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(size: str, variants: list[str], repeat: int) -> None:
    """Measure every variant on one log, in alternating rounds, and print the medians."""
    path = write_log(size)
    print(f"\n{size} ({path.name})   load average before: {os.getloadavg()[0]:.2f}")
    runs: dict[str, list[dict]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name in variants:
            if name.startswith("plain") and len(runs[name]) >= max(1, repeat // 3):
                continue  # (tens of seconds: a third of the rounds is enough)
            runs[name].append(measure(name, path))
    base = sorted(r["load_cpu"] for r in runs.get("all", []))
    base_median = base[len(base) // 2] if base else None
    heads = ("load CPU s", 11), ("min", 7), ("max", 7), ("gain s", 8), ("gain %", 8), ("peak RSS MB", 12)
    print(f"{'variant':<14}" + "".join(f"{head:>{width}}" for head, width in heads) + f"{'runs':>6}")
    counts = set()
    for name, results in runs.items():
        cpus = sorted(r["load_cpu"] for r in results)
        median = cpus[len(cpus) // 2]
        rss = sorted(r["rss_mb"] for r in results)[len(results) // 2]
        counts |= {r["count"] for r in results}
        gain = (
            f"{median - base_median:>8.2f}{100 * (median - base_median) / base_median:>7.0f}%"
            if base_median
            else ""
        )
        print(f"{name:<14}{median:>11.2f}{cpus[0]:>7.2f}{cpus[-1]:>7.2f}{gain}{rss:>12.0f}{len(cpus):>6}")
    print("counts agree" if len(counts) == 1 else f"COUNTS DIFFER: {counts}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", nargs="+", default=["medium"], choices=[*SIZES, *EXTRA_SIZES])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--repeat", type=int, default=7, help="rounds (the median is shown; default 7)")
    parser.add_argument("--export", action="store_true", help="rltop export with and without decimal columns")
    parser.add_argument("--against", metavar="DIR", help="also load with another checkout's rltop")
    args = parser.parse_args()
    variants = list(args.variants)
    if args.against:
        AGAINST["against"] = str(Path(args.against).resolve())
        variants.append("against")
    for size in args.sizes:
        if args.export:
            report_export(size, args.repeat)
        else:
            report(size, variants, args.repeat)


if __name__ == "__main__":
    main()
