"""The live run the dashboard benchmarks share: one run logging numbered metrics and five judged TRL tags.

    python benchmarks/live_writer.py DIR --tags 50 --history 20000 --seconds 70   # bench_live.py --cpu
    python benchmarks/live_writer.py DIR --tags 60 --rate 1 --values wave        # bench_soak.py

``--tags`` N is N - 5 numbered tags (``train/metric_00``...) plus reward, kl, entropy, grad_norm and
loss, the five of them the health rules judge (`live_tags`; ``bench_health.py --live-case`` judges
the same run in process). The writer logs ``--history`` steps at once (one second apart, ending
now), prints ``ready`` once they, or the first live step when there is no history, are flushed to
the event file, then one step every 1/``--rate`` seconds, flushed as a whole (rltop's own writer,
like torch's SummaryWriter after ``flush()``), for ``--seconds`` (until killed when not given).

Values: ``trend`` (``bench_live --cpu``): a reward rising, a KL growing, an entropy falling, the
numbered tags slow waves, with a little seeded noise; ``wave`` (``bench_soak``): every tag a
noiseless wave around 1.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

JUDGED_TAGS = ["train/reward", "train/kl", "train/entropy", "train/grad_norm", "train/loss"]


def live_tags(count: int) -> list[str]:
    """The run's ``count`` tags: the numbered ones, then the five the health rules judge."""
    return [f"train/metric_{i:02d}" for i in range(count - len(JUDGED_TAGS))] + JUDGED_TAGS


class TrendValues:
    """``trend``: TRL-like curves for the judged tags, slow waves for the numbered ones, seeded noise."""

    BASES = {
        "train/reward": lambda step: 0.2 + 0.6 * (1 - math.exp(-step / 2000)),
        "train/kl": lambda step: 0.01 + 0.02 * (1 - math.exp(-step / 3000)),
        "train/entropy": lambda step: 2.0 - 0.5 * (1 - math.exp(-step / 4000)),
        "train/grad_norm": lambda step: 0.5,
        "train/loss": lambda step: 0.1,
    }

    def __init__(self) -> None:
        self.rng = random.Random(1)

    def __call__(self, index: int, name: str, step: int) -> float:
        """Tag ``name``'s (the ``index``-th tag's) value at ``step``."""
        noise = self.rng.gauss(0.0, 0.01)
        base = self.BASES.get(name)
        return (base(step) if base else 1.0 + 0.1 * math.sin(step / 50 + index)) + noise


def wave_value(index: int, name: str, step: int) -> float:
    """``wave``: every tag a noiseless wave around 1, a tag's phase its index."""
    return 1.0 + 0.1 * math.sin(step / 7 + index)


def write(directory: Path, tags: int, rate: float, history: int, seconds: float, values: str) -> None:
    """Log the run (see the module docstring); returns after ``seconds`` of live steps."""
    from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter

    names = live_tags(tags)
    value = TrendValues() if values == "trend" else wave_value
    start = time.time() - history
    with EventWriter(directory, start=start) as writer:
        for step in range(1, history + 1):
            for index, name in enumerate(names):
                writer.add_scalar(name, value(index, name, step), step, wall_time=start + step)
        writer.flush()
        if history:
            print("ready", flush=True)
        step, end = history, time.monotonic() + seconds
        while time.monotonic() < end:
            step += 1
            now = time.time()
            for index, name in enumerate(names):
                writer.add_scalar(name, value(index, name, step), step, wall_time=now)
            writer.flush()
            if step == 1:
                print("ready", flush=True)  # no history: the first step is on disk
            time.sleep(max(0.0, 1 / rate - (time.time() - now)))


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("directory", type=Path, help="the run's directory (its event file goes there)")
    parser.add_argument("--tags", type=int, default=50, help="tags in all, five of them judged")
    parser.add_argument("--rate", type=float, default=1.0, help="live steps per second")
    parser.add_argument("--history", type=int, default=0, help="steps logged at once before the live ones")
    parser.add_argument("--seconds", type=float, default=math.inf, help="how long to log live steps")
    parser.add_argument("--values", choices=["trend", "wave"], default="trend")
    args = parser.parse_args()
    if args.tags < len(JUDGED_TAGS) or args.rate <= 0 or args.history < 0:
        sys.exit(f"--tags must be at least {len(JUDGED_TAGS)}, --rate above 0, --history 0 or more")
    write(args.directory, args.tags, args.rate, args.history, args.seconds, args.values)


if __name__ == "__main__":
    main()
