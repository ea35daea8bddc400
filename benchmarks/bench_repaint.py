"""The dashboard's UI-thread CPU per live step, each shortcut on against off in one process.

    python benchmarks/bench_repaint.py                                  # 100x30, every switch
    python benchmarks/bench_repaint.py --sizes 40x20,100x30,200x50 --steps 200
    python benchmarks/bench_repaint.py --switch rltop.model.summary:REUSE_COLUMNS

The run of ``bench_live.py --cpu`` (50 tags, 45 numbered plus reward, KL, entropy, grad norm and
loss, 20k steps of history) is posted to the dashboard under Textual's pilot, one step at a time, as
the watcher posts batches; the switches are turned on for even steps and off for odd ones, so both
halves run on the same app, the same history and the same machine load. Printed: the UI thread's
CPU per step (`time.thread_time()` from posting the batch until the next step, the repaint and the
frame included) and Textual's compositor's part of it, each half's mean and their ratio.

Why in one process: on this shared 2-core machine two runs of ``bench_live.py --cpu`` taken minutes
apart differ by more (±10 %) than most single shortcuts save; alternating step by step cancels that.
The process-level figure (the goal's) stays ``bench_live.py --cpu``'s.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from live_writer import TrendValues, live_tags  # noqa: E402

from rltop.ingest.feed import ChangeBatch, PointsBatch  # noqa: E402
from rltop.model.run import Store  # noqa: E402
from rltop.model.series import Points  # noqa: E402
from rltop.ui.app import RltopApp  # noqa: E402
from rltop.ui.messages import LiveBatch  # noqa: E402

SWITCHES = [
    "rltop.model.summary:REUSE_COLUMNS",
    "rltop.ui.line_strips:REUSE_STYLES",
    "rltop.ui.widgets.header_bar:DRAW_OWN_LINES",
    "rltop.ui.kept_render:KEEP_LINES",
    "rltop.ui.widgets.detail_chart:REUSE_PICTURES",
]
START = 1_795_000_000.0
HISTORY = 20_000
TAGS = live_tags(50)


def batches(steps: int) -> list[ChangeBatch]:
    """Steps 1 .. ``steps`` of every tag with the values `live_writer.py --values trend` logs (its
    own generator, called in its order, stored as float32 as its event file holds them): the history
    as one watcher batch, then each live step as one."""
    value = TrendValues()
    table = (
        np.array(
            [[value(index, tag, step) for index, tag in enumerate(TAGS)] for step in range(1, steps + 1)]
        )
        .astype(np.float32)
        .astype(np.float64)
    )
    ranges = [(1, HISTORY + 1), *((step, step + 1) for step in range(HISTORY + 1, steps + 1))]
    return [_batch(first, end, table[first - 1 : end - 1]) for first, end in ranges]


def _batch(first: int, end: int, values: np.ndarray) -> ChangeBatch:
    """Steps ``first`` .. ``end - 1`` (``values``: a row a step, a column a tag) as one watcher batch."""
    steps = np.arange(first, end, dtype=np.int64)
    walls = START + steps.astype(np.float64)
    points = [
        PointsBatch("run", tag, Points(steps.copy(), walls.copy(), values[:, index].copy()))
        for index, tag in enumerate(TAGS)
    ]
    changed = {"run": "/logs/run"}
    return ChangeBatch(points=points, changed_runs=changed, change_times={"run": float(walls[-1])})


class _Compositor:
    """Sums the compositor's CPU into the half that is running."""

    def __init__(self) -> None:
        from textual._compositor import Compositor

        self.half: bool | None = None
        self.spent = {True: 0.0, False: 0.0}
        original = Compositor.render_update

        def timed(compositor, *args, **kwargs):
            started = time.thread_time()
            result = original(compositor, *args, **kwargs)
            if self.half is not None:
                self.spent[self.half] += time.thread_time() - started
            return result

        Compositor.render_update = timed


async def measure(size: tuple[int, int], switches: list[str], steps: int, gap: float) -> dict:
    """Per-step UI-thread CPU with ``switches`` on (even steps) and off (odd steps)."""
    flags = [(importlib.import_module(module), name) for module, name in (s.split(":") for s in switches)]
    compositor = _Compositor()
    clock = [START + HISTORY + 1.0]
    store = Store()
    store.run("run", "/logs/run")
    app = RltopApp(["/logs"], store=store, clock=lambda: clock[0], theme="rltop-dark")
    history, *live = batches(HISTORY + steps)
    spent: dict[bool, list[float]] = {True: [], False: []}
    async with app.run_test(size=size) as pilot:
        app.post_message(LiveBatch(history))
        while app.repaint_count == 0 or app.session.store.runs["run"].last_step != HISTORY:
            await pilot.pause()
        await asyncio.sleep(1.0)  # the first picture settled
        for index, one in enumerate(live):
            half = index % 2 == 0
            for module, name in flags:
                setattr(module, name, half)
            compositor.half = half
            clock[0] = START + HISTORY + 1 + index + 0.2
            started = time.thread_time()
            app.post_message(LiveBatch(one))
            await asyncio.sleep(gap)
            spent[half].append(time.thread_time() - started)
    count = {half: len(values) for half, values in spent.items()}
    return {
        half: (statistics.fmean(values) * 1000, compositor.spent[half] / count[half] * 1000)
        for half, values in spent.items()
    }


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100x30")
    parser.add_argument("--steps", type=int, default=160, help="live steps (half with the switches on)")
    parser.add_argument("--gap", type=float, default=0.3, help="seconds between steps")
    parser.add_argument("--switch", action="append", help="module:FLAG (default: every shortcut)")
    args = parser.parse_args()
    switches = args.switch or SWITCHES
    for size in [tuple(int(part) for part in size.split("x")) for size in args.sizes.split(",")]:
        result = asyncio.run(measure(size, switches, args.steps, args.gap))
        (on, on_comp), (off, off_comp) = result[True], result[False]
        print(f"{size[0]}x{size[1]}: on {on:.2f} ms/step (compositor {on_comp:.2f}), off {off:.2f} "
              f"ms/step (compositor {off_comp:.2f}): on/off {on / off:.2f}  [{', '.join(switches)}]",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
