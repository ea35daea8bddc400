"""The same run logged by three loggers, loaded by rltop from each: event file, W&B run file, trackio.

    python benchmarks/bench_loggers.py                 # 2,000 steps x 30 keys (60k scalars)
    python benchmarks/bench_loggers.py --steps 5000 --repeat 5

Each logger writes the same rows with its real package, in a child process, the way transformers'
callbacks do (``train/<key>`` plus ``train/global_step``): tensorboardX's ``SummaryWriter``, the
wandb SDK offline (``define_metric("*", step_metric="train/global_step")``), ``trackio.log``. Then
`rltop.ingest.follow.loader.load` reads each in a fresh interpreter, alternately, median of ``--repeat``:
the import of the reader's packages (wandb's protobuf classes for W&B) is timed apart from the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WRITE = r"""
import os, sys
logger, root, steps, keys = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
names = [f"train/metric_{k:02d}" for k in range(keys)]
rows = ({name: step * 0.001 + k for k, name in enumerate(names)} for step in range(1, steps + 1))
if logger == "tfevents":
    from tensorboardX import SummaryWriter
    writer = SummaryWriter(os.path.join(root, "tb"))
    for step, row in enumerate(rows, start=1):
        for name, value in row.items():
            writer.add_scalar(name, value, step)
    writer.close()
elif logger == "wandb":
    import wandb
    run = wandb.init(project="bench", mode="offline", dir=root)
    run.define_metric("train/global_step")
    run.define_metric("*", step_metric="train/global_step", step_sync=True)
    for step, row in enumerate(rows, start=1):
        run.log({**row, "train/global_step": step})
    run.finish()
else:
    import trackio
    trackio.init(project="bench", name="bench-run")
    for step, row in enumerate(rows, start=1):
        trackio.log({**row, "train/global_step": step})
    trackio.finish()
"""

LOAD = r"""
import json, sys, time
start = time.perf_counter()
from rltop.ingest.follow.loader import load
if sys.argv[2] == "wandb":
    from rltop.ingest.sources.wandb.kind import record_class
    record_class()  # wandb's protobuf classes: imported once, timed apart
imported = time.perf_counter()
result = load([sys.argv[1]])
done = time.perf_counter()
count = sum(run.scalar_count() for run in result.store.runs.values())
print(json.dumps({"count": count, "import": imported - start, "load": done - imported}))
"""


def write(logger: str, root: Path, steps: int, keys: int) -> Path:
    """Log the rows with ``logger``'s real package; the path rltop reads."""
    env = {
        **os.environ,
        "WANDB_MODE": "offline",
        "WANDB_SILENT": "true",
        "TRACKIO_DIR": str(root / "trackio"),
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
    }
    subprocess.run(
        [sys.executable, "-c", WRITE, logger, str(root), str(steps), str(keys)],
        check=True,
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return {"tfevents": root / "tb", "wandb": root / "wandb", "trackio": root / "trackio"}[logger]


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--keys", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    loggers = ("tfevents", "wandb", "trackio")
    with tempfile.TemporaryDirectory(prefix="rltop-bench-loggers-") as temp:
        paths = {logger: write(logger, Path(temp), args.steps, args.keys) for logger in loggers}
        sizes = {logger: size_of(path) for logger, path in paths.items()}
        runs: dict[str, list[dict]] = {logger: [] for logger in loggers}
        for _ in range(args.repeat):
            for logger in loggers:
                done = subprocess.run(
                    [sys.executable, "-c", LOAD, str(paths[logger]), logger],
                    check=True,
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                )
                runs[logger].append(json.loads(done.stdout))
    print(
        f"{args.steps} steps x {args.keys} keys; median of {args.repeat} fresh-interpreter loads; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print("| source | file MB | scalars | import s | load s | scalars/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for logger in loggers:
        load = statistics.median(r["load"] for r in runs[logger])
        imported = statistics.median(r["import"] for r in runs[logger])
        count = runs[logger][0]["count"]
        print(
            f"| {logger} | {sizes[logger] / 1e6:.2f} | {count} | {imported:.2f} | {load:.3f} | "
            f"{count / load / 1e3:.0f} k |"
        )


if __name__ == "__main__":
    main()
