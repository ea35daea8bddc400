"""Live latency benchmark: from a point's flush to the screen, in tmux and through Textual's pilot.

    python benchmarks/bench_live.py                      # 40x20, 100x30, 200x50 x 1 and 5 runs, tmux + pilot
    python benchmarks/bench_live.py --seconds 30 --repeat 3
    python benchmarks/bench_live.py --sizes 100x30 --runs 1 --modes tmux
    python benchmarks/bench_live.py --cpu                # 50 tags at 1 step/s, 100x30: the CPU goal
    python benchmarks/bench_live.py --cpu --cpu-sizes 40x20,100x30,200x50
    python benchmarks/bench_live.py --cpu --repeat 5 --against ../base   # beside another checkout

A writer process logs ``--runs`` runs (``run0``, ``run1``...), each step of each run flushed to its
event file as a whole (rltop's own writer, like torch's SummaryWriter after ``flush()``), one step
every ``--period`` seconds (0.5). The tags and values are the ones the real TRL GRPO run
``tests/fixtures/trl/grpo_healthy`` logged at every step, replayed. In ``run0`` the completions'
clipped ratio follows a pattern that makes the truncation rule move its level: ok -> warn -> ok
every 30 steps, and ok -> warn -> critical at the end. The writer prints each step's flush time
(monotonic clock, shared by every process of the machine). The level each step should bring comes
from rltop's health engine fed the same points step by step.

- tmux: the installed ``rltop --follow run0`` in a detached pane of the given size, read by a tmux
  control-mode client every 5 ms (``capture-pane``: 60 µs each, no process started per read). A
  step is on screen when the header shows ``step N`` for run0 (or a later step: two flushes can
  land in one read; at 40 columns with several runs the header gives the step's room to the
  fleet, and the step is read from run0's line in the runs overview); a level change when the
  header shows the new level with its step. CPU: the
  dashboard process's user+sys time over the measured window.
- pilot: the same writer, the dashboard in this process under Textual's test driver, at the same
  size; a step (and a level) is on screen at the first frame drawn after a repaint that held it
  (a callback after the screen's refresh reads the header that frame drew). CPU: this process's UI
  thread over the window.

Latency figures are p50 / p95 / max over every step of run0 after a warm-up; level changes are
listed one by one. The load average is printed with every case: the machine is shared.

``--cpu``: the CPU goal's case: one run logging 50 tags once a second (45 numbered tags plus
reward, kl, entropy, grad_norm and loss) on a 20,000-step history, the installed dashboard at
100 x 30 in tmux, its process CPU over ``--seconds``; run ``--repeat`` times, medians printed.
With ``--against DIR`` another checkout's dashboard runs beside it (``PYTHONPATH=DIR``), on a writer
of its own, measured over the same seconds: two runs minutes apart differ by ±10–15 % here (the
machine is shared), more than most changes save; side by side, the ratio holds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RLTOP = shutil.which("rltop", path=str(Path(sys.executable).parent)) or shutil.which("rltop")
TMUX = shutil.which("tmux")
TICKS = os.sysconf("SC_CLK_TCK")
FIXTURE = ROOT / "tests" / "fixtures" / "trl" / "grpo_healthy"
FOLLOWED = "run0"
CLIPPED = "train/completions/clipped_ratio"
CYCLE = [0.02] * 14 + [0.5] * 6 + [0.02] * 10  # truncation: warn at the 3rd 0.5, ok again after
ENDING = [0.02] * 6 + [0.95] * 8  # warn, then critical at the 4th of 5 points >= 0.9
WARMUP = 5.0
POLL = 0.005


# -- what the writer logs ---------------------------------------------------------------------------


def fixture_values() -> dict[str, list[float]]:
    """Tag -> the values grpo_healthy logged at every step (its per-step tags only)."""
    from rltop.ingest.follow.loader import load

    run = next(iter(load([str(FIXTURE)]).store.runs.values()))
    steps = run.last_step or 0
    return {tag: series.values.tolist() for tag, series in run.series.items() if len(series) >= steps - 1}


def clipped_ratio(run: int, step: int, steps: int) -> float | None:
    """run0's clipped ratio at ``step`` (None for the other runs: the fixture's own values)."""
    if run != 0:
        return None
    tail = steps - len(ENDING)
    return ENDING[step - 1 - tail] if step > tail else CYCLE[(step - 1) % len(CYCLE)]


def step_values(values: dict[str, list[float]], run: int, step: int, steps: int) -> dict[str, float]:
    """Every tag's value at ``step`` of run ``run`` (the fixture's, a little apart per run)."""
    out = {}
    for tag, series in values.items():
        value = series[(step - 1) % len(series)]
        out[tag] = value * (1.0 + 0.001 * run) if math.isfinite(value) else value
    ratio = clipped_ratio(run, step, steps)
    if ratio is not None:
        out[CLIPPED] = ratio
    return out


def write(directory: str, runs: int, period: float, steps: int) -> None:
    """The writer process: ``runs`` runs under ``directory``, one step each every ``period`` s."""
    from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter

    values = fixture_values()
    writers = [EventWriter(Path(directory) / f"run{index}") for index in range(runs)]
    print("ready", flush=True)
    next_at = time.monotonic()
    for step in range(1, steps + 1):
        now = time.time()
        for index, writer in enumerate(writers):
            for tag, value in step_values(values, index, step, steps).items():
                writer.add_scalar(tag, value, step, wall_time=now)
            writer.flush()
            print(index, step, repr(time.monotonic()), flush=True)
        next_at += period
        time.sleep(max(0.0, next_at - time.monotonic()))
    for writer in writers:
        writer.close()
    print("done", flush=True)


def expected_levels(runs: int, steps: int) -> dict[int, str]:
    """run0's level after each step, judged by rltop's engine point by point ("OK"/"WARN"/"CRIT")."""
    import numpy as np

    from rltop.health.engine import HealthEngine
    from rltop.model.run import Store

    values = fixture_values()
    run = Store().run(FOLLOWED, "")
    engine = HealthEngine()
    levels = {}
    for step in range(1, steps + 1):
        wall = 1.7e9 + step
        for tag, value in step_values(values, 0, step, steps).items():
            run.add_points(tag, np.array([step]), np.array([wall]), np.array([value]))
        levels[step] = {"OK": "OK", "WARN": "WARN", "CRITICAL": "CRIT"}[
            engine.assess(run, wall + 0.1).level.name
        ]
    return levels


class Writer:
    """The writer process, its flush times collected on a thread."""

    def __init__(self, directory: Path, runs: int, period: float, steps: int) -> None:
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); from bench_live import write; "
            "write(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))"
        )
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                code,
                str(Path(__file__).parent),
                str(directory),
                str(runs),
                str(period),
                str(steps),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert self.process.stdout.readline().strip() == "ready"
        self.flushed: dict[tuple[int, int], float] = {}
        self.done = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            parts = line.split()
            if parts == ["done"]:
                break
            self.flushed[(int(parts[0]), int(parts[1]))] = float(parts[2])
        self.done.set()

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


# -- reading the screen ------------------------------------------------------------------------------

HEADER_STEP = re.compile(r"\bstep (\d+)")
HEADER_LEVEL = re.compile(r"\b(OK|WARN|CRIT)\b")


SELECTED_STEP = (re.compile(r"^▶.*?\bstep (\d+)\b"), re.compile(r"^▶\S+\s+\S+\s+(\d+)\s"))


def header_facts(lines: list[str]) -> tuple[int | None, str | None]:
    """(step, level) the screen shows for the followed run: the header's (its first two lines: a
    narrow pane puts the facts second), or the selected line of the runs overview when a narrow
    header has no room for the step (40 columns and several runs: the fleet takes it)."""
    head = " ".join(lines[:2])
    step = HEADER_STEP.search(head)
    if step is None:
        selected = next((line.strip() for line in lines[:12] if line.strip().startswith("▶")), "")
        step = SELECTED_STEP[0].match(selected) or SELECTED_STEP[1].match(selected)
    level = HEADER_LEVEL.search(lines[0] if lines else "")
    return (int(step.group(1)) if step else None), (level.group(1) if level else None)


class TmuxDashboard:
    """The installed dashboard in a detached tmux pane, read through a control-mode client."""

    def __init__(self, command: str, width: int, height: int) -> None:
        self.socket = f"rltop-live-{uuid.uuid4().hex[:8]}"
        env = "env -u COLUMNS -u LINES TERM=xterm-256color"
        self._tmux(
            "new-session", "-d", "-s", "b", "-x", str(width), "-y", str(height), f"exec {env} {command}"
        )
        self._tmux("set-option", "-t", "b", "window-size", "manual")
        self.pid = int(self._tmux("display-message", "-p", "-t", "b", "#{pane_pid}").strip())
        self._client = subprocess.Popen(
            [TMUX, "-L", self.socket, "-C", "attach-session", "-t", "b"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        self._buffer = b""
        self._block()  # the attach
        self._command("refresh-client -f no-output")

    def _tmux(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True).stdout

    def _block(self) -> list[str]:
        lines: list[str] | None = None
        while True:
            while b"\n" not in self._buffer:
                chunk = os.read(self._client.stdout.fileno(), 65536)
                if not chunk:
                    raise EOFError("tmux control client ended")
                self._buffer += chunk
            line, self._buffer = self._buffer.split(b"\n", 1)
            if line.startswith(b"%begin"):
                lines = []
            elif line.startswith((b"%end", b"%error")) and lines is not None:
                return lines
            elif lines is not None:
                lines.append(line.decode("utf-8", "replace"))

    def _command(self, command: str) -> list[str]:
        self._client.stdin.write(command.encode() + b"\n")
        return self._block()

    def screen(self) -> list[str]:
        """What the pane shows now."""
        return self._command("capture-pane -p -t b")

    def cpu_seconds(self) -> float:
        """user + sys CPU of the dashboard process."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def ui_thread_cpu_seconds(self) -> float:
        """user + sys CPU of the dashboard's main (UI) thread; the rest is the watcher's threads."""
        fields = Path(f"/proc/{self.pid}/task/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def close(self) -> None:
        self._tmux("send-keys", "-t", "b", "q")
        time.sleep(0.3)
        self._client.kill()
        self._tmux("kill-server")


# -- the cases --------------------------------------------------------------------------------------


def measure_tmux(size: tuple[int, int], runs: int, args: argparse.Namespace) -> dict:
    """One case in tmux: what the screen showed when, and the dashboard's CPU."""
    work = Path(tempfile.mkdtemp(prefix="rltop-live-"))
    steps = int(args.seconds / args.period)
    writer = Writer(work, runs, args.period, steps)
    pane = TmuxDashboard(f"{RLTOP} --follow {FOLLOWED} {work}", *size)
    seen: list[tuple[float, int | None, str | None]] = []
    try:
        start = time.monotonic()
        cpu_start = None
        while not writer.done.is_set() and time.monotonic() - start < args.seconds + 30:
            now = time.monotonic()
            if cpu_start is None and now - start >= WARMUP:
                cpu_start = (now, pane.cpu_seconds())
            step, level = header_facts(pane.screen())
            seen.append((now, step, level))
            time.sleep(POLL)
        cpu_end = (time.monotonic(), pane.cpu_seconds())
    finally:
        pane.close()
        writer.close()
        shutil.rmtree(work, ignore_errors=True)
    cpu = 100.0 * (cpu_end[1] - cpu_start[1]) / (cpu_end[0] - cpu_start[0]) if cpu_start else math.nan
    return {"seen": seen, "flushed": writer.flushed, "steps": steps, "cpu": cpu}


async def _measure_pilot(size: tuple[int, int], runs: int, args: argparse.Namespace) -> dict:
    from rltop.ui.app import RltopApp
    from rltop.ui.widgets.header_bar import HeaderBar

    work = Path(tempfile.mkdtemp(prefix="rltop-live-pilot-"))
    steps = int(args.seconds / args.period)
    writer = Writer(work, runs, args.period, steps)
    app = RltopApp([str(work)], follow=FOLLOWED)
    seen: list[tuple[float, int | None, str | None]] = []
    repaint = app._repaint

    def frame_drawn() -> None:
        info = app.dashboard.query_one(HeaderBar).info
        step = HEADER_STEP.search(info.step_text)
        level = {0: "OK", 1: "WARN", 2: "CRIT"}.get(int(info.level)) if info.level is not None else None
        seen.append((time.monotonic(), int(step.group(1)) if step else None, level))

    async def probed() -> None:
        await repaint()
        app.screen.call_after_refresh(frame_drawn)

    app._repaint = probed
    try:
        async with app.run_test(size=size):
            start = time.monotonic()
            await asyncio.sleep(WARMUP)
            cpu_start = (time.monotonic(), time.thread_time())
            while not writer.done.is_set() and time.monotonic() - start < args.seconds + 30:
                await asyncio.sleep(0.05)
            cpu_end = (time.monotonic(), time.thread_time())
    finally:
        writer.close()
        shutil.rmtree(work, ignore_errors=True)
    cpu = 100.0 * (cpu_end[1] - cpu_start[1]) / (cpu_end[0] - cpu_start[0])
    return {"seen": seen, "flushed": writer.flushed, "steps": steps, "cpu": cpu}


def measure_pilot(size: tuple[int, int], runs: int, args: argparse.Namespace) -> dict:
    """One case through the pilot."""
    return asyncio.run(_measure_pilot(size, runs, args))


def latencies(result: dict, levels: dict[int, str]) -> tuple[list[float], list[tuple[int, str, float]]]:
    """(seconds from each step's flush to the screen showing it; (step, level, seconds) per change)."""
    flushed = {step: moment for (run, step), moment in result["flushed"].items() if run == 0}
    seen = result["seen"]
    first = min(flushed.values(), default=0.0)
    steps_shown, changes = [], []
    for step in sorted(flushed):
        if flushed[step] - first < WARMUP:
            continue
        shown = next(
            (
                moment
                for moment, on_screen, _ in seen
                if on_screen is not None and on_screen >= step and moment >= flushed[step]
            ),
            None,
        )
        if shown is not None:
            steps_shown.append(shown - flushed[step])
        if step > 1 and levels.get(step) != levels.get(step - 1):
            drawn = next(
                (
                    moment
                    for moment, on_screen, level in seen
                    if moment >= flushed[step]
                    and on_screen is not None
                    and on_screen >= step
                    and level == levels[step]
                ),
                None,
            )
            changes.append(
                (step, f"{levels[step - 1]}->{levels[step]}", (drawn - flushed[step]) if drawn else math.nan)
            )
    return steps_shown, changes


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile (nearest rank) of ``values``."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def report_case(
    mode: str, size: tuple[int, int], runs: int, results: list[dict], levels: dict[int, str]
) -> None:
    """One line per case (medians over the repeats), then its level changes."""
    p50s, p95s, maxes, cpus, worst_changes, counts = [], [], [], [], [], []
    change_lines = []
    for result in results:
        shown, changes = latencies(result, levels)
        p50s.append(percentile(shown, 0.5))
        p95s.append(percentile(shown, 0.95))
        maxes.append(max(shown, default=math.nan))
        cpus.append(result["cpu"])
        counts.append(len(shown))
        finite = [seconds for _, _, seconds in changes if math.isfinite(seconds)]
        worst_changes.append(max(finite, default=math.nan) if len(finite) == len(changes) else math.inf)
        change_lines.append(
            " ".join(f"{step}:{what} {seconds * 1000:.0f}ms" for step, what, seconds in changes)
        )
    load = os.getloadavg()
    ms = {name: statistics.median(values) * 1000 for name, values in
          (("p50", p50s), ("p95", p95s), ("max", maxes), ("change", worst_changes))}  # fmt: skip
    print(
        f"{mode:5s} {size[0]:>3}x{size[1]:<3} {runs} run(s): step on screen p50 {ms['p50']:5.0f} ms, "
        f"p95 {ms['p95']:5.0f} ms, max {ms['max']:5.0f} ms ({statistics.median(counts):.0f} steps); "
        f"level changes, worst {ms['change']:4.0f} ms; CPU {statistics.median(cpus):5.2f} % "
        f"({'process' if mode == 'tmux' else 'UI thread'}); load {load[0]:.2f} {load[1]:.2f}",
        flush=True,
    )
    for line in change_lines:
        print(f"        level changes: {line}", flush=True)


# -- the CPU goal -----------------------------------------------------------------------------------

LIVE_WRITER = Path(__file__).parent / "live_writer.py"  # the run bench_health.py --live-case judges too


def cpu_goal(args: argparse.Namespace) -> None:
    """The dashboard's process CPU while one run logs 50 tags a second (medians of the repeats);
    with ``--against``, another checkout's dashboard beside it, each on its own writer, measured
    over the same seconds (the machine's load and drift fall on both alike), and their ratio."""
    checkouts = [ROOT] + ([Path(args.against).resolve()] if args.against else [])
    for size in [tuple(int(part) for part in size.split("x")) for size in args.cpu_sizes.split(",")]:
        results: list[list[tuple[float, float]]] = [[] for _ in checkouts]
        for _ in range(args.repeat):
            shares = _cpu_side_by_side(checkouts, size, args.seconds)
            load = os.getloadavg()
            case = f"50 tags at 1 step/s, 20k steps of history, {size[0]}x{size[1]}"
            for checkout, result, share in zip(checkouts, results, shares):
                result.append(share)
                print(f"cpu: {case}: {share[0]:.2f} % of a core over {args.seconds:g} s, UI thread "
                      f"{share[1]:.2f} % ({checkout.name}; load {load[0]:.2f} {load[1]:.2f})",
                      flush=True)  # fmt: skip
        for checkout, result in zip(checkouts, results):
            process, ui = (statistics.median(share[part] for share in result) for part in (0, 1))
            print(f"cpu {size[0]}x{size[1]} ({checkout.name}): median {process:.2f} % of a core "
                  f"(goal <= 2 %), UI thread {ui:.2f} %")  # fmt: skip
        if len(checkouts) == 2:
            ratios = [mine[0] / theirs[0] for mine, theirs in zip(*results) if theirs[0]]
            print(f"cpu {size[0]}x{size[1]}: {checkouts[0].name} / {checkouts[1].name} = "
                  f"{statistics.median(ratios):.2f} (median of {len(ratios)} side-by-side rounds: "
                  f"{', '.join(f'{ratio:.2f}' for ratio in ratios)})")  # fmt: skip


def _cpu_side_by_side(
    checkouts: list[Path], size: tuple[int, int], seconds: float
) -> list[tuple[float, float]]:
    """(process, UI thread) CPU share of each checkout's dashboard, all measured over the same seconds."""
    works, writers, panes = [], [], []
    try:
        for checkout in checkouts:
            work = Path(tempfile.mkdtemp(prefix="rltop-live-cpu-"))
            (work / "run").mkdir()
            works.append(work)
            writer = subprocess.Popen(
                [sys.executable, str(LIVE_WRITER), str(work / "run"), "--tags", "50", "--history", "20000",
                 "--seconds", str(seconds + 40), "--values", "trend"],
                stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
            )  # fmt: skip
            writers.append(writer)
            assert writer.stdout.readline().strip() == "ready"
            panes.append(TmuxDashboard(f"env PYTHONPATH={checkout} {RLTOP} {work}", *size))
        time.sleep(15)  # the first read and a settled screen
        before = [(pane.cpu_seconds(), pane.ui_thread_cpu_seconds()) for pane in panes]
        started = time.monotonic()
        time.sleep(seconds)
        elapsed = time.monotonic() - started
        after = [(pane.cpu_seconds(), pane.ui_thread_cpu_seconds()) for pane in panes]
        return [
            (100.0 * (end[0] - begin[0]) / elapsed, 100.0 * (end[1] - begin[1]) / elapsed)
            for begin, end in zip(before, after)
        ]
    finally:
        for pane in panes:
            pane.close()
        for writer in writers:
            writer.kill()
            writer.wait()
        for work in works:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="40x20,100x30,200x50")
    parser.add_argument("--runs", default="1,5", help="runs logging at once, comma-separated")
    parser.add_argument("--modes", default="tmux,pilot")
    parser.add_argument("--seconds", type=float, default=45.0, help="how long each case logs")
    parser.add_argument("--period", type=float, default=0.5, help="seconds between steps")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cpu", action="store_true", help="only the CPU goal's case")
    parser.add_argument("--cpu-sizes", default="100x30", help="pane sizes of the CPU case")
    parser.add_argument("--against", help="with --cpu: another checkout's dashboard beside this one's")
    args = parser.parse_args()
    if TMUX is None or RLTOP is None:
        sys.exit("needs tmux and the installed rltop")
    if args.cpu:
        cpu_goal(args)
        return
    sizes = [tuple(int(part) for part in size.split("x")) for size in args.sizes.split(",")]
    levels = expected_levels(1, int(args.seconds / args.period))
    print(
        f"live: steps every {args.period:g} s for {args.seconds:g} s; run0's expected level changes: "
        + json.dumps(
            {step: level for step, level in levels.items() if step > 1 and level != levels[step - 1]}
        )
    )
    for mode in args.modes.split(","):
        for size in sizes:
            for runs in (int(count) for count in args.runs.split(",")):
                measure = measure_tmux if mode == "tmux" else measure_pilot
                results = [measure(size, runs, args) for _ in range(args.repeat)]
                report_case(mode, size, runs, results, levels)


if __name__ == "__main__":
    main()
