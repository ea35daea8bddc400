"""Write benchmark logs with tensorboardX's real SummaryWriter (cached under benchmarks/out/).

    python benchmarks/make_logs.py            # 30 tags x 30k steps (900k scalars)
    python benchmarks/make_logs.py --large    # 60 tags x 100k steps (6M scalars), ~10 min

Values follow noisy random walks so they are not compressible trivia; tag names follow TRL's.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path

OUT = Path(__file__).parent / "out"
SIZES = {"medium": (30, 30_000), "large": (60, 100_000)}
TRL_TAGS = (
    "train/val/ratio", "train/policy/entropy_avg", "train/loss/value_avg", "train/objective/kl",
    "train/objective/scores", "train/objective/rlhf_reward", "train/policy/approxkl_avg",
    "train/policy/clipfrac_avg", "train/val/clipfrac_avg", "train/lr",
)


def tag_names(count: int) -> list[str]:
    """TRL-like tag names, padded with numbered extras."""
    return [TRL_TAGS[i] if i < len(TRL_TAGS) else f"train/extra/metric_{i:02d}" for i in range(count)]


def log_dir(size: str) -> Path:
    """Directory of the cached log of a size ("medium" or "large")."""
    tags, steps = SIZES[size]
    return OUT / f"tbx_{tags}x{steps}"


def write_log(size: str) -> Path:
    """Write the log of that size unless it is already complete; return its run directory."""
    from tensorboardX import SummaryWriter

    directory = log_dir(size)
    done = directory / "COMPLETE"
    if done.exists():
        return directory
    for old in directory.glob("events.out.tfevents.*"):
        old.unlink()
    tags, steps = SIZES[size]
    names = tag_names(tags)
    rng = random.Random(0)
    levels = [1.0] * tags
    writer = SummaryWriter(logdir=str(directory), flush_secs=600, max_queue=1000)
    started = time.time()
    for step in range(1, steps + 1):
        for i, name in enumerate(names):
            levels[i] = levels[i] * 0.999 + rng.gauss(0, 0.05)
            writer.add_scalar(name, levels[i] + math.sin(step / 500), step)
    writer.close()
    done.write_text(f"{tags * steps} scalars written in {time.time() - started:.0f} s\n")
    return directory


def main() -> None:
    """Command line: which size to write."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--large", action="store_true", help="also write the 60 x 100k log")
    args = parser.parse_args()
    for size in ("medium", "large") if args.large else ("medium",):
        path = write_log(size)
        print(path, (path / "COMPLETE").read_text().strip())


if __name__ == "__main__":
    main()
