"""Dashboard benchmarks: time to the first painted frame, time to the complete picture, idle CPU.

    python benchmarks/bench_ui.py            # fixture run + 900k + 6M scalar logs, 60 s idle CPU
    python benchmarks/bench_ui.py --quick    # fixture run + 900k log, 15 s idle CPU
    python benchmarks/bench_ui.py --sizes 200x50   # only the chart grid's size
    python benchmarks/bench_ui.py --runs-only --repeat 1   # only 200 runs left open, idle CPU

Each case starts the installed ``rltop PATH`` in a detached tmux pane (a real terminal; by
default 100 x 30, the cards only, and 200 x 50, where the chart grid is on) and polls
``capture-pane`` every 10 ms:

- first frame: anything is on screen (rltop's first frame says where it reads; the dashboard
  then fills in while the watcher reads, the header saying "reading… N points").
- complete: the header shows the run's last step and no longer says "reading…"; with the grid,
  its charts are drawn too (plotext's axes, ``┤``, are on screen).
- idle CPU: user+sys time of the rltop process (``/proc/PID/stat``) over the idle window, after
  the picture is complete; the log does not change, so this is the cost of a dashboard left open.
  One case is 200 runs (copies of the fixture runs) in one directory.
- complete CPU: user+sys time of the rltop process when the picture became complete, against the
  bare load of the same log (`rltop.ingest.follow.loader.load` in a fresh process, imports included)
  measured in the same run: the goal is at most 1.5x. "floor x" is the ratio a dashboard would
  reach that cost nothing but the load and Textual's own start (the minimal app below).

Each case starts the dashboard ``--repeat`` times (3), each start after a bare load of the same
log, and prints the medians (idle CPU: the last start): this VM's speed drifts by a third within
minutes, so one start of each says little.

Baseline, printed as ratios: a minimal Textual app (one Static and a Footer) started the same way,
for the first frame and for idle CPU. Goals (issue 5): first frame <= 0.5 s on any log size,
idle CPU <= 0.5 % of a core. The 900k/6M logs come from benchmarks/make_logs.py (cached).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bytecode import compile_rltop  # noqa: E402

RLTOP = shutil.which("rltop", path=str(Path(sys.executable).parent)) or shutil.which("rltop")
TMUX = shutil.which("tmux")
TICKS = os.sysconf("SC_CLK_TCK")

MINIMAL_APP = """
from textual.app import App
from textual.widgets import Footer, Static
class Minimal(App):
    BINDINGS = [("q", "quit", "Quit")]
    def compose(self):
        yield Static("hello")
        yield Footer()
Minimal().run()
"""


class Pane:
    """A command in its own tmux server, polled with capture-pane."""

    def __init__(self, command: str, width: int = 100, height: int = 30) -> None:
        self.socket = f"rltop-bench-{uuid.uuid4().hex[:8]}"
        env = "env -u COLUMNS -u LINES TERM=xterm-256color"
        self.started = time.monotonic()
        size = ("-x", str(width), "-y", str(height))
        self._tmux("new-session", "-d", "-s", "b", *size, f"exec {env} {command}")
        self.pid = int(self._tmux("display-message", "-p", "-t", "b", "#{pane_pid}").strip())

    def _tmux(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True).stdout

    def wait(self, predicate, timeout: float) -> float | None:
        """Seconds from start until ``predicate(screen)`` holds (None on timeout)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self._tmux("capture-pane", "-p", "-t", "b")):
                return time.monotonic() - self.started
            time.sleep(0.01)
        return None

    def cpu_seconds(self) -> float:
        """user + sys CPU of the pane's process (and its finished children)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(value) for value in fields[11:15]) / TICKS

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)


def idle_cpu(pane: Pane, seconds: float) -> float:
    """Percent of one core used over ``seconds`` of doing nothing."""
    before, start = pane.cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    return 100.0 * (pane.cpu_seconds() - before) / (time.monotonic() - start)


def bench_minimal(idle: float, repeat: int) -> tuple[float, float, float]:
    """The minimal app's first frame (s) and its CPU when the frame is there (medians of
    ``repeat`` starts), and its idle CPU (%, on the last start)."""
    script = Path(tempfile.mkdtemp()) / "minimal.py"
    script.write_text(MINIMAL_APP)
    firsts, cpus = [], []
    for index in range(repeat):
        pane = Pane(f"{sys.executable} {script}")
        try:
            firsts.append(pane.wait(lambda screen: "hello" in screen, 30) or float("nan"))
            cpus.append(pane.cpu_seconds())
            if index == repeat - 1:
                time.sleep(1.0)
                idle_percent = idle_cpu(pane, idle)
        finally:
            pane.close()
    return statistics.median(firsts), statistics.median(cpus), idle_percent


def bench_rltop(
    path: Path, last_step: int | None, idle: float | None, timeout: float, size: tuple[int, int] = (100, 30)
) -> dict[str, float | None]:
    """One dashboard start: first frame, complete picture (s and CPU-s), then idle CPU (None: skip)."""
    pane = Pane(f"{RLTOP} {path}", *size)
    grid = size[0] >= 120 and size[1] >= 36  # rltop.ui.logic.grid_layout: the chart grid is on

    def complete_picture(screen: str) -> bool:
        lines = screen.splitlines()
        shown = last_step is None or (bool(lines) and f"step {last_step} " in lines[0] + " ")
        done = bool(lines) and shown and "reading" not in screen and "Reading" not in screen
        return done and (not grid or "┤" in screen)

    try:
        first = pane.wait(lambda screen: screen.strip() != "", 30)
        complete = pane.wait(complete_picture, timeout)
        complete_cpu = pane.cpu_seconds()
        if idle is None:
            return {"first": first, "complete": complete, "complete_cpu": complete_cpu, "idle": None}
        time.sleep(2.0)  # let the last repaint and the first health tick pass
        return {
            "first": first,
            "complete": complete,
            "complete_cpu": complete_cpu,
            "idle": idle_cpu(pane, idle),
        }
    finally:
        pane.close()


def medians_of_starts(
    path: Path, steps: int | None, idle: float, size: tuple[int, int], repeat: int
) -> tuple[dict[str, float | None], float]:
    """``repeat`` dashboard starts, each after a bare load of the same log (so both see the same
    machine: this VM's speed drifts by a third within minutes); the medians of each figure, the
    idle CPU measured on the last start, and the bare load's median."""
    starts, bares = [], []
    for index in range(repeat):
        bares.append(bare_load_cpu(path))
        starts.append(bench_rltop(path, steps, idle if index == repeat - 1 else None, timeout=300, size=size))
    result: dict[str, float | None] = {}
    for key in ("first", "complete", "complete_cpu"):
        values = [start[key] for start in starts if start[key] is not None]
        result[key] = statistics.median(values) if values else None
    result["idle"] = starts[-1]["idle"]
    return result, statistics.median(bares)


def many_runs(count: int) -> Path:
    """A directory of ``count`` runs: copies of the fixture runs, under the benchmark output."""
    from make_logs import OUT

    root = OUT / f"runs_{count}"
    if not (root / "COMPLETE").exists():
        shutil.rmtree(root, ignore_errors=True)
        fixtures = sorted(p for p in (ROOT / "tests/fixtures/trl").iterdir() if p.is_dir())
        for i in range(count):
            shutil.copytree(fixtures[i % len(fixtures)], root / f"run_{i:03d}")
        (root / "COMPLETE").write_text(f"{count} runs\n")
    return root


def process_cpu(code: str, *args: str) -> float:
    """Process CPU (user+sys, imports included) of a fresh Python that runs ``code`` with ``args``."""
    report = "\nimport resource\nu = resource.getrusage(resource.RUSAGE_SELF)\nprint(u.ru_utime + u.ru_stime)"
    done = subprocess.run(
        [sys.executable, "-c", code + report, *args], capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


def interpreter_cpu() -> float:
    """Process CPU of a Python that starts and does nothing (median of 3): the bare load and the
    minimal app both pay it, so the floor counts it once."""
    return statistics.median(process_cpu("pass") for _ in range(3))


def bare_load_cpu(path: Path) -> float:
    """Process CPU of a one-shot load of ``path`` in a fresh process."""
    code = "import sys\nfrom rltop.ingest.follow.loader import load\nload([sys.argv[1]])"
    return process_cpu(code, str(path))


def main() -> None:
    """Run the cases and print a table with ratios to the minimal Textual app."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="skip the 6M log, 15 s idle windows")
    parser.add_argument("--large", action="store_true", help="with --quick: the 6M log too")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="dashboard starts (and bare loads) per case; medians are printed",
    )
    parser.add_argument(
        "--sizes", default="100x30,200x50", help="pane sizes, comma-separated (200x50: the chart grid is on)"
    )
    parser.add_argument("--runs-only", action="store_true", help="only the 200-run case (idle CPU goal)")
    args = parser.parse_args()
    repeat = max(args.repeat, 1)
    sizes_wanted = [tuple(int(n) for n in size.split("x")) for size in args.sizes.split(",")]
    if TMUX is None or RLTOP is None:
        sys.exit("bench_ui needs tmux and the installed rltop")
    compile_rltop()
    from make_logs import write_log

    idle = 15.0 if args.quick else 60.0
    cases: list[tuple[str, Path, int | None]] = [
        ("ppo_unstable (2.7k)", ROOT / "tests/fixtures/trl/ppo_unstable", 150),
        ("200 runs (fixtures)", many_runs(200), None),
    ]
    sizes = ("medium",) if args.quick and not args.large else ("medium", "large")
    if args.runs_only:
        cases, sizes = cases[1:], ()
    for size in sizes:
        directory = write_log(size)
        steps = 30_000 if size == "medium" else 100_000
        label = "30 x 30k (900k)" if size == "medium" else "60 x 100k (6M)"
        cases.append((label, directory, steps))
    base_first, base_cpu, base_idle = bench_minimal(idle, repeat)
    textual_start = max(base_cpu - interpreter_cpu(), 0.0)  # what Textual's own start adds
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(
        f"baseline minimal Textual app: first frame {base_first:.3f} s ({base_cpu:.2f} CPU-s), "
        f"idle CPU {base_idle:.2f} %"
    )
    # The floor of "complete CPU / bare load": what a dashboard would cost that adds nothing to the
    # load but Textual's own start.
    print(
        f"{'log':22} {'pane':>7} {'first frame':>12} {'x base':>7} {'complete s':>11} {'CPU s':>6} "
        f"{'bare load CPU s':>16} {'x load':>7} {'floor x':>8} {'idle CPU %':>11} {'x base':>7}"
    )
    for label, path, steps in cases:
        for width, height in sizes_wanted:
            result, bare = medians_of_starts(path, steps, idle, (width, height), repeat)
            first, complete, cpu = result["first"], result["complete"], result["idle"]
            done_cpu = result["complete_cpu"]
            print(
                f"{label:22} {f'{width}x{height}':>7} {first:12.3f} {first / base_first:7.2f} "
                f"{(complete if complete is not None else float('nan')):11.2f} {done_cpu:6.2f} "
                f"{bare:16.2f} {done_cpu / bare:7.2f} {(bare + textual_start) / bare:8.2f} {cpu:11.2f} "
                f"{cpu / base_idle if base_idle else float('inf'):7.2f}",
                flush=True,
            )
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(
        "goals: first frame <= 0.5 s on any log, the chart grid on or off; complete picture <= 1.5x "
        "the bare load's CPU; idle CPU <= 0.5 % of a core (200 runs included)"
    )
    print(
        f"floor x: (bare load + Textual's own start, {textual_start:.2f} CPU-s: the minimal app's CPU "
        "at its first frame less a bare interpreter's) / bare load"
    )
    print(
        f"each row: medians of {repeat} dashboard starts, each after a bare load of the same "
        "log (the bare load's median); idle CPU on the last start"
    )


if __name__ == "__main__":
    main()
