"""Write benchmark logs with real SummaryWriters (cached under $RLTOP_BENCH_OUT, else benchmarks/out/).

    python benchmarks/make_logs.py            # 30 tags x 30k steps (900k scalars)
    python benchmarks/make_logs.py --large    # 60 tags x 100k steps (6M scalars), ~10 min
    python benchmarks/make_logs.py --tags     # 3000 tags x 333 steps (1M scalars), ~3 min
    python benchmarks/make_logs.py --tensor --torch-python /work/gen/venv/bin/python
        # 30 x 30k tensor scalars: torch's SummaryWriter.add_scalar(new_style=True)

tensorboardX writes the simple_value logs; torch (in its own venv, since tensorboardX imports torch
whenever it is installed) writes the tensor-scalar log. Values follow noisy random walks so they
are not compressible trivia; tag names follow TRL's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(os.environ.get("RLTOP_BENCH_OUT", Path(__file__).parent / "out"))
SIZES = {"medium": (30, 30_000), "large": (60, 100_000)}
# Logs other than tensorboardX simple values: (tags, steps, writer).
EXTRA_SIZES = {"tags": (3000, 333, "tbx"), "tensor": (30, 30_000, "torch")}
TORCH_PYTHON = os.environ.get("RLTOP_TORCH_PYTHON", "/work/gen/venv/bin/python")
TRL_TAGS = (
    "train/val/ratio",
    "train/policy/entropy_avg",
    "train/loss/value_avg",
    "train/objective/kl",
    "train/objective/scores",
    "train/objective/rlhf_reward",
    "train/policy/approxkl_avg",
    "train/policy/clipfrac_avg",
    "train/val/clipfrac_avg",
    "train/lr",
)


def tag_names(count: int) -> list[str]:
    """TRL-like tag names, padded with numbered extras."""
    return [TRL_TAGS[i] if i < len(TRL_TAGS) else f"train/extra/metric_{i:02d}" for i in range(count)]


def _shape(size: str) -> tuple[int, int, str]:
    if size in SIZES:
        return (*SIZES[size], "tbx")
    return EXTRA_SIZES[size]


def log_dir(size: str) -> Path:
    """Directory of the cached log of a size ("medium", "large", "tags" or "tensor")."""
    tags, steps, writer = _shape(size)
    return OUT / f"{writer}_{tags}x{steps}"


# The writing loop, run in this interpreter (tensorboardX) or in the torch venv (tensor scalars).
_WRITE = """
import math, random, sys
tags, steps, directory, writer_kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
names = sys.argv[5:]
if writer_kind == "torch":
    from torch.utils.tensorboard import SummaryWriter
    extra = {"new_style": True}
else:
    from tensorboardX import SummaryWriter
    extra = {}
rng = random.Random(0)
levels = [1.0] * tags
writer = SummaryWriter(directory, flush_secs=600, max_queue=1000)
for step in range(1, steps + 1):
    for i, name in enumerate(names):
        levels[i] = levels[i] * 0.999 + rng.gauss(0, 0.05)
        writer.add_scalar(name, levels[i] + math.sin(step / 500), step, **extra)
writer.close()
"""


def write_log(size: str) -> Path:
    """Write the log of that size unless it is already complete; return its run directory."""
    directory = log_dir(size)
    done = directory / "COMPLETE"
    if done.exists():
        return directory
    for old in directory.glob("events.out.tfevents.*"):
        old.unlink()
    tags, steps, writer = _shape(size)
    python = TORCH_PYTHON if writer == "torch" else sys.executable
    started = time.time()
    subprocess.run(
        [python, "-c", _WRITE, str(tags), str(steps), str(directory), writer, *tag_names(tags)],
        check=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    done.write_text(f"{tags * steps} scalars written in {time.time() - started:.0f} s\n")
    return directory


def main() -> None:
    """Command line: which size to write."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", action="store_true", help="also write the 60 x 100k log")
    parser.add_argument("--tags", action="store_true", help="also write the 3000-tag log")
    parser.add_argument("--tensor", action="store_true", help="also write the tensor-scalar log (torch)")
    args = parser.parse_args()
    sizes = ["medium"] + ["large"] * args.large + ["tags"] * args.tags + ["tensor"] * args.tensor
    for size in sizes:
        path = write_log(size)
        print(path, (path / "COMPLETE").read_text().strip())


if __name__ == "__main__":
    main()
