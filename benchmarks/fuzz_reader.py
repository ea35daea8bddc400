"""The long fuzz run of the reader: many damaged real TRL logs, read against an independent reference.

    python benchmarks/fuzz_reader.py                 # 20,000 cases on the whole fixtures, seed 1
    python benchmarks/fuzz_reader.py --cases 2000 --seed 7

The cases are those of ``tests/e2e/test_reader_fuzz.py`` (torn records, deletions, insertions, lengths
off by -20..+300 or huge with a valid CRC, zero-filled ranges, bit flips, two damages at once; read
whole or while the file grows, with windows of 1 KB to 4 MB), on the whole fixtures rather than their
first 40 KB. The reference (``tests/helpers/reader_reference.py``) frames with its own loop, checks CRCs with
its own plain-Python CRC32C and decodes with TensorBoard's ``event_pb2``. Printed per kind of damage:
cases, records and points the damage left intact, points rltop read, and the failures (intact
points lost, points invented or reordered, points lost with no problem reported): all must be 0.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))
from helpers.paths import TRL_RUNS, trl_event_file  # noqa: E402
from helpers.reader_reference import (  # noqa: E402
    KINDS,
    apply_edits,
    intact_records,
    make_case,
    read_reference,
    run_case,
)


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    fixtures = {name: read_reference(trl_event_file(name)) for name in TRL_RUNS}
    rng = random.Random(args.seed)
    counts: dict[str, Counter] = defaultdict(Counter)
    failures: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "events.out.tfevents.1.host.1.0"
        for number in range(args.cases):
            case = make_case(fixtures, rng)
            ref = fixtures[case.fixture]
            row = counts[case.kind]
            row["cases"] += 1
            row["growing"] += case.chunks is not None
            row["intact records"] += len(intact_records(ref, case.edits, apply_edits(ref.data, case.edits)))
            try:
                errors, intact, read = run_case(case, fixtures, target)
            except Exception as error:  # a crash is a failure like any other, and is counted
                errors, intact, read = [f"raised {type(error).__name__}: {error}"], 0, 0
            row["intact points"] += intact
            row["points read"] += read
            for error in errors:
                row["lost intact" if error.startswith("lost") else
                    "invented" if "invented" in error else
                    "silent loss" if "without a problem" in error else "other"] += 1  # fmt: skip
            if errors:
                where = f"{case.kind}, {case.fixture}, window {case.window}"
                failures.append(f"case {number} ({where}): {errors}")
    elapsed = time.perf_counter() - started
    columns = ["cases", "growing", "intact records", "intact points", "points read",
               "lost intact", "invented", "silent loss", "other"]  # fmt: skip
    print(f"{args.cases:,} cases, seed {args.seed}, {elapsed:.0f} s")
    print(f"{'damage':<14}" + "".join(f"{c:>16}" for c in columns))
    total: Counter = Counter()
    for kind in KINDS:
        total.update(counts[kind])
        print(f"{kind:<14}" + "".join(f"{counts[kind][c]:>16,}" for c in columns))
    print(f"{'all':<14}" + "".join(f"{total[c]:>16,}" for c in columns))
    for failure in failures[:20]:
        print(failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
