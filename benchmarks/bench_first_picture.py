"""The dashboard's own work on a complete first read: UI-thread CPU from the moment the watcher
delivers the whole first read to the settled dashboard.

    python benchmarks/bench_first_picture.py                  # 900k and 6M logs, 5 starts each
    python benchmarks/bench_first_picture.py --repeat 10 --against ../old-checkout

Each start is a fresh process running `RltopApp` headless (Textual's pilot, 100 x 30) on the log;
the figure is ``time.thread_time()`` of the UI thread from the caught-up batch's arrival
(`Session.apply`) until the dashboard shows the run and the screen has settled: applying the
batch, judging the history, building the views, mounting, laying out and drawing the cards. The
read itself (the watcher thread) and Textual's start are not in it, so this figure moves less with
the VM's speed than a whole process's CPU (`bench_ui.py`). ``--against DIR`` alternates the starts
with another checkout's rltop (``PYTHONPATH=DIR``), start by start: this VM's speed drifts by a
third within minutes, so two batches run one after the other compare the drift.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

ONE_START = """
import asyncio, sys, time
import rltop.ui.app as app_module, rltop.ui.session as session_module
if sys.argv[2] == "hold-off":
    import rltop.ingest.follow.watcher as watcher_module
    watcher_module.FIRST_READ_DELIVER_EVERY = 0.0
began = []
apply = session_module.Session.apply
def timed_apply(self, batch):
    if batch.caught_up and not began:
        began.append(time.thread_time())
    return apply(self, batch)
session_module.Session.apply = timed_apply
async def main():
    app = app_module.RltopApp([sys.argv[1]], theme="rltop-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        session = app.session
        while not (session is not None and session.caught_up and not session.dirty.runs
                   and app.dashboard.shown_run):
            await asyncio.sleep(0.01)
            session = app.session
        await pilot.pause()
        print(time.thread_time() - began[0], time.process_time())
asyncio.run(main())
"""


def one_start(path: Path, tree: str | None = None, hold: bool = True) -> tuple[float, float]:
    """UI-thread CPU of one fresh dashboard from the complete first read to the settled screen,
    and the whole process's CPU until then (``tree``: the checkout whose rltop runs; default the
    installed one; ``hold``: False delivers the first read in batches as ``rltop tail`` gets it)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = tree
    # Not run from the checkout: ``python -c`` puts its folder first on sys.path, and PYTHONPATH
    # (another checkout's, to compare) must win.
    command = [sys.executable, "-c", ONE_START, str(path), "hold" if hold else "hold-off"]
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(), env=env
    )
    ui, process = done.stdout.strip().splitlines()[-1].split()
    return float(ui), float(process)


def main() -> None:
    """Print the median (and the range) of ``--repeat`` starts on each log."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="starts per log (default 5)")
    parser.add_argument("--against", metavar="DIR", help="another checkout, started alternately")
    parser.add_argument(
        "--hold-off",
        action="store_true",
        help="also start with the first-read hold off (the watcher's batches as they come)",
    )
    parser.add_argument("--sizes", nargs="+", default=["medium", "large"], choices=["medium", "large"])
    args = parser.parse_args()
    from bytecode import compile_rltop
    from make_logs import write_log

    compile_rltop()
    trees: list[tuple[str, str | None, bool]] = [("this checkout", str(ROOT), True)]
    if args.against:
        trees.append((args.against, str(Path(args.against).resolve()), True))
    if args.hold_off:
        trees.append(("first-read hold off", str(ROOT), False))
    labels = {"medium": "30 x 30k (900k)", "large": "60 x 100k (6M)"}
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for size in args.sizes:
        label = labels[size]
        path = write_log(size)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in trees}
        for _ in range(max(args.repeat, 1)):
            for name, tree, hold in trees:
                times[name].append(one_start(path, tree, hold))
        for name, pairs in times.items():
            ui = sorted(pair[0] for pair in pairs)
            process = sorted(pair[1] for pair in pairs)
            print(
                f"{label:16} {name}: first picture, UI thread: median {statistics.median(ui):.3f} "
                f"CPU-s (range {ui[0]:.3f}-{ui[-1]:.3f}, {len(ui)} starts); whole process: median "
                f"{statistics.median(process):.2f} CPU-s ({process[0]:.2f}-{process[-1]:.2f})",
                flush=True,
            )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
