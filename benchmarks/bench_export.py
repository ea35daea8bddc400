"""Export benchmark: ``rltop export`` (CSV) against tbparse + pandas ``to_csv``, fresh processes.

    python benchmarks/bench_export.py            # the 900k-scalar log (benchmarks/make_logs.py)
    python benchmarks/bench_export.py --size large

Each side runs in a fresh process writing the CSV of every scalar to a file; the figure is the
child's CPU time (user+sys, imports included), measured one after the other in this run, with
the load average. Goal (issue 17): rltop at least 25x faster. The script also checks that
rltop's values are exact: every value read back as float32 equals tbparse's.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_logs import write_log  # noqa: E402

RLTOP = [sys.executable, "-m", "rltop", "export"]
TBPARSE = """
import sys
from tbparse import SummaryReader
SummaryReader(sys.argv[1]).scalars.to_csv(sys.argv[2], index=False)
"""


def child_cpu(command: list[str], output: Path | None = None) -> float:
    """CPU seconds (user+sys) of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(output, "wb") if output else open(os.devnull, "wb") as out:
        subprocess.run(command, stdout=out, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def exact(ours: Path, theirs: Path) -> bool:
    """Every (tag, step) value of ours reads back to the float32 tbparse read."""
    import numpy as np

    def values(path: Path, tag: str, step: str, value: str) -> dict[tuple[str, int], np.float32]:
        with open(path, newline="") as f:
            return {(row[tag], int(row[step])): np.float32(row[value]) for row in csv.DictReader(f)}

    mine, reference = values(ours, "tag", "step", "value"), values(theirs, "tag", "step", "value")
    return mine.keys() == reference.keys() and all(
        mine[key] == reference[key] or (mine[key] != mine[key] and reference[key] != reference[key])
        for key in reference
    )


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="medium")
    args = parser.parse_args()
    log = write_log(args.size)
    scratch = Path(tempfile.mkdtemp())
    print(f"{args.size} log {log}; load average {os.getloadavg()[0]:.2f}")
    rltop = child_cpu([*RLTOP, str(log)], scratch / "rltop.csv")
    tbparse = child_cpu([sys.executable, "-c", TBPARSE, str(log), str(scratch / "tbparse.csv")])
    mb = (scratch / "rltop.csv").stat().st_size / 1e6
    print(f"{'exporter':<24}{'CPU s':>8}{'CSV MB':>8}")
    print(f"{'rltop export':<24}{rltop:>8.2f}{mb:>8.1f}")
    print(f"{'tbparse + to_csv':<24}{tbparse:>8.2f}{(scratch / 'tbparse.csv').stat().st_size / 1e6:>8.1f}")
    print(
        f"rltop is {tbparse / rltop:.1f}x faster (goal >= 25x); values exact: "
        f"{exact(scratch / 'rltop.csv', scratch / 'tbparse.csv')}"
    )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
