"""Completions index memory: 1000 parquet files of 16 rows x 2 KB completions (the goal: < 10 MB).

    python benchmarks/bench_completions.py                # 1000 files x 16 rows x 2 KB
    python benchmarks/bench_completions.py --files 200    # a quicker look

Writes TRL-shaped files (``step, prompt, completion, two reward columns, an int log_extra column,
advantage``; every completion different, so nothing compresses away), then, each in a fresh
interpreter, side by side in this one run:

- ``rltop index``: what rltop keeps (`CompletionsFollower.scan` into a `CompletionIndex`): the
  bytes the index still holds once the scan is over (tracemalloc, after a gc), its build time,
  and the time to read one step's rows when the screen asks;
- ``all rows``: the naive viewer that keeps every file's rows as Python values (what the index
  avoids), for the ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MB = 10.0

CHILD = {
    "rltop index": """
import gc, time, tracemalloc
from rltop.ingest.sources.completions import CompletionsFollower, read_step
from rltop.model.completions import CompletionIndex
import pyarrow.parquet  # imported before the baseline, as in "all rows": modules are not the index
tracemalloc.start()
gc.collect()
base = tracemalloc.get_traced_memory()[0]
start = time.perf_counter()
index = CompletionIndex()
follower = CompletionsFollower(FOLDER)
for summary in follower.scan().added:
    index.add(summary)
built = time.perf_counter() - start
del follower  # what it keeps of each file (a version) is the watcher's, not the index's
gc.collect()
held = tracemalloc.get_traced_memory()[0] - base
start = time.perf_counter()
rows = len(read_step(index.at(index.steps[len(index) // 2])).rows)
one = time.perf_counter() - start
result = {"steps": len(index), "held": held, "build": built, "read_one": one, "rows": rows}
""",
    "all rows": """
import gc, glob, time, tracemalloc
import pyarrow.parquet as pq
tracemalloc.start()
gc.collect()
base = tracemalloc.get_traced_memory()[0]
start = time.perf_counter()
kept = {path: pq.read_table(path).to_pylist() for path in sorted(glob.glob(FOLDER + "/*.parquet"))}
built = time.perf_counter() - start
gc.collect()
held = tracemalloc.get_traced_memory()[0] - base
result = {"steps": len(kept), "held": held, "build": built, "read_one": 0.0, "rows": 16}
""",
}

TEMPLATE = """
import json, sys
FOLDER = sys.argv[1]
{body}
print(json.dumps(result))
"""


def write_files(folder: Path, files: int, rows: int, chars: int) -> None:
    """TRL-shaped completions files, every completion a different random text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(0)
    letters = string.ascii_letters + string.digits + " .,;:!?"
    for step in range(1, files + 1):
        completions = ["".join(rng.choices(letters, k=chars)) for _ in range(rows)]
        table = pa.table({
            "step": pa.array([step] * rows, pa.int64()),
            "prompt": [f"prompt {step % 97} {i // 4}" for i in range(rows)],
            "completion": completions,
            "accuracy_reward": [rng.random() for _ in range(rows)],
            "format_reward": [float(rng.random() < 0.5) for _ in range(rows)],
            "n_tokens": pa.array([rng.randrange(100, 512) for _ in range(rows)], pa.int64()),
            "advantage": [rng.gauss(0.0, 1.0) for _ in range(rows)],
        })  # fmt: skip
        pq.write_table(table, folder / f"completions_{step:05d}.parquet")


def measure(name: str, folder: Path) -> dict:
    """Run one variant in a fresh interpreter; return its figures."""
    done = subprocess.run([sys.executable, "-c", TEMPLATE.format(body=CHILD[name]), str(folder)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Write the files, measure both variants, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--chars", type=int, default=2048)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "completions"
        folder.mkdir()
        started = time.perf_counter()
        write_files(folder, args.files, args.rows, args.chars)
        on_disk = sum(p.stat().st_size for p in folder.iterdir())
        print(
            f"{args.files} files x {args.rows} rows x {args.chars} chars: {on_disk / 1e6:.1f} MB on disk "
            f"(written in {time.perf_counter() - started:.1f} s)"
        )
        results = {name: measure(name, folder) for name in CHILD}
    print(f"{'variant':<14}{'steps':>7}{'held MB':>10}{'per step':>11}{'build s':>9}{'read 1 step':>13}")
    for name, r in results.items():
        per_step = r["held"] / max(r["steps"], 1)
        print(
            f"{name:<14}{r['steps']:>7}{r['held'] / 1e6:>10.2f}{per_step:>9.0f} B{r['build']:>9.2f}"
            f"{r['read_one'] * 1000:>10.1f} ms"
        )
    index, naive = results["rltop index"], results["all rows"]
    verdict = "ok" if index["held"] / 1e6 < TARGET_MB else "OVER"
    print(
        f"index: {index['held'] / 1e6:.2f} MB held, target < {TARGET_MB:g} MB: {verdict}; "
        f"{naive['held'] / max(index['held'], 1):.0f}x less than keeping the rows"
    )


if __name__ == "__main__":
    main()
