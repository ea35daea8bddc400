"""End to end: the installed ``rltop`` in a real terminal (tmux), as a user runs it beside training.

Each test starts rltop in a detached tmux session of a given size, reads the screen with
``capture-pane``, presses ``q`` and checks that the terminal is given back (main screen, cursor
shown, mouse reporting off) with exit code 0. tmux is installed by ``.ci/run`` where missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers.paths import FIXTURES

FIXTURES_TRL = FIXTURES / "trl"

TMUX = shutil.which("tmux")
RLTOP = shutil.which("rltop", path=str(Path(sys.executable).parent)) or shutil.which("rltop")

pytestmark = pytest.mark.skipif(
    TMUX is None or RLTOP is None,
    reason="needs tmux and the installed rltop console script (.ci/run installs both)",
)


class Pane:
    """One rltop process in its own tmux server (private socket: the user's sessions are untouched)."""

    def __init__(self, width: int, height: int, args: list[str], env: dict[str, str] | None = None):
        self.socket = f"rltop-test-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{key}={value}" for key, value in (env or {}).items())
        command = f'env {exports} {RLTOP} {" ".join(args)}; echo "rltop exited $?"; sleep 60'
        self.tmux("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), command)

    def tmux(self, *args: str) -> str:
        result = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=10)
        return result.stdout

    def capture(self, escapes: bool = False) -> str:
        """The visible screen (with SGR attributes when ``escapes``)."""
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "t")

    def wait_until(self, condition, what: str, timeout: float = 30.0) -> str:
        """Wait until ``condition(screen)`` holds; return the screen."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture()
            if condition(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} not on screen after {timeout} s:\n{screen}")
            time.sleep(0.2)

    def wait_for(self, *needles: str, timeout: float = 30.0) -> str:
        """Wait until every needle is on screen; return the screen."""
        return self.wait_until(lambda screen: all(n in screen for n in needles), str(needles), timeout)

    def wait_for_line(self, pattern: str, timeout: float = 30.0) -> str:
        """Wait until some line matches the regex ``pattern``; return the screen."""
        return self.wait_until(
            lambda screen: any(re.search(pattern, line) for line in screen.splitlines()),
            f"a line matching {pattern!r}",
            timeout,
        )

    def flag(self, name: str) -> str:
        """A tmux pane flag (alternate_on, cursor_flag, mouse_any_flag...)."""
        return self.tmux("display-message", "-p", "-t", "t", f"#{{{name}}}").strip()

    def quit_and_check_restored(self) -> None:
        """``q`` ends rltop with code 0 and the terminal is back to normal."""
        self.tmux("send-keys", "-t", "t", "q")
        self.wait_for("rltop exited 0", timeout=15)
        assert self.flag("alternate_on") == "0"
        assert self.flag("cursor_flag") == "1"
        assert self.flag("mouse_any_flag") == "0"

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def pane_factory():
    panes: list[Pane] = []

    def start(width: int, height: int, args: list[str], env: dict[str, str] | None = None) -> Pane:
        pane = Pane(width, height, args, {"TERM": "xterm-256color", **(env or {})})
        panes.append(pane)
        return pane

    yield start
    for pane in panes:
        pane.close()


def test_dashboard_at_100x30_shows_run_metrics_and_alerts_then_q_restores(pane_factory):
    pane = pane_factory(100, 30, [str(FIXTURES_TRL / "ppo_unstable")])
    screen = pane.wait_for("ppo_unstable", "entropy_avg", "val/ratio", "CRIT")
    assert "PPO" in screen and "finished at step 150" in screen and "runs/Nov29" not in screen
    assert "Key values" in screen and "objective/rlhf_reward" in screen
    pane.quit_and_check_restored()


def test_dashboard_at_40_columns_is_one_line_per_metric(pane_factory):
    pane = pane_factory(40, 20, [str(FIXTURES_TRL / "ppo_unstable")])
    # (The board's scrollbar may take the last column.)
    screen = pane.wait_for_line(r"^ val/ratio\s+\S+\s+\S+ \S (ok[▲✖]?|WARN|CRIT)\s*[▁▂▃▄▅▆▇█]?$")
    assert "CRIT policy/entropy_avg" in screen and "Key values" in screen  # narrow: no train/
    assert all(len(line) <= 40 for line in screen.splitlines())
    pane.quit_and_check_restored()


def test_no_color_shows_no_colour(pane_factory):
    pane = pane_factory(100, 30, [str(FIXTURES_TRL / "ppo_unstable")], {"NO_COLOR": "1"})
    pane.wait_for("entropy_avg", "CRIT", "⏎ Detail")  # the whole dashboard, its cursor placed (footer)
    for red, green, blue in _colours(pane.capture(escapes=True)):
        assert max(red, green, blue) - min(red, green, blue) <= 16, (red, green, blue)
    pane.quit_and_check_restored()


def test_screen_256color_terminal(pane_factory):
    pane = pane_factory(100, 30, [str(FIXTURES_TRL / "ppo_unstable")], {"TERM": "screen-256color"})
    pane.wait_for("entropy_avg", "CRIT", "val/ratio")
    assert "38;5;" in pane.capture(escapes=True)  # 256-colour output, as that terminal supports
    pane.quit_and_check_restored()


def test_demo_shows_points_arriving_and_alarms_firing(pane_factory, tmp_path):
    target = tmp_path / "demo"
    pane = pane_factory(120, 35, ["demo", "--speed", "15", "--dir", str(target)])
    pane.wait_for("ppo_unstable", "CRIT", "entropy_avg", timeout=45)
    first = _step(pane.capture())
    assert first >= 0, pane.capture()
    pane.wait_until(lambda screen: _step(screen) > first, "a later step")  # live
    pane.quit_and_check_restored()
    assert (target / "ppo_unstable").is_dir() and (target / "grpo_healthy").is_dir()


def _step(screen: str) -> int:
    """The step the screen shows first (-1 while none is drawn)."""
    found = re.search(r"step (\d+)", screen)
    return int(found.group(1)) if found else -1


def _colours(screen: str) -> list[tuple[int, int, int]]:
    """Every foreground/background colour in tmux's SGR output, as RGB."""
    found = []
    for params in re.findall(r"\x1b\[([0-9;]*)m", screen):
        codes = [int(c) for c in params.split(";") if c]
        i = 0
        while i < len(codes):
            code = codes[i]
            if code in (38, 48) and i + 1 < len(codes) and codes[i + 1] == 2:
                found.append(tuple(codes[i + 2 : i + 5]))
                i += 5
            elif code in (38, 48) and i + 1 < len(codes) and codes[i + 1] == 5:
                found.append(_xterm_rgb(codes[i + 2]))
                i += 3
            else:
                if 31 <= code <= 36 or 41 <= code <= 46 or 91 <= code <= 96 or 101 <= code <= 106:
                    found.append(
                        {
                            1: (255, 0, 0),
                            2: (0, 255, 0),
                            3: (255, 255, 0),
                            4: (0, 0, 255),
                            5: (255, 0, 255),
                            6: (0, 255, 255),
                        }[code % 10]
                    )
                i += 1
    return found


def _xterm_rgb(index: int) -> tuple[int, int, int]:
    if index < 16:
        basic = [
            (0, 0, 0), (128, 0, 0), (0, 128, 0), (128, 128, 0), (0, 0, 128), (128, 0, 128), (0, 128, 128),
            (192, 192, 192), (128, 128, 128), (255, 0, 0), (0, 255, 0), (255, 255, 0), (0, 0, 255),
            (255, 0, 255), (0, 255, 255), (255, 255, 255),
        ]  # fmt: skip
        return basic[index]
    if index >= 232:
        level = 8 + 10 * (index - 232)
        return (level, level, level)
    index -= 16
    steps = [0, 95, 135, 175, 215, 255]
    return (steps[index // 36], steps[(index // 6) % 6], steps[index % 6])


def _write_two_runs(root: Path, steps: range, writers: dict | None = None) -> dict:
    """Two healthy runs as transformers lays them out, written (and flushed) step by step."""
    from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter

    writers = writers or {
        name: EventWriter(root / name / "runs" / f"Dec01_10-0{index}-00_node")
        for index, name in enumerate(("grpo_a", "grpo_b"))
    }
    for step in steps:
        for offset, writer in enumerate(writers.values()):
            writer.add_scalar("train/reward", 0.1 * step + offset, step)
            writer.add_scalar("train/entropy", 2.0 - 0.001 * step, step)
            writer.add_scalar("train/rewards/length_reward/mean", 0.05 * step, step)
            writer.add_scalar("train/rewards/contains_x_reward/mean", 0.02 * step, step)
    for writer in writers.values():
        writer.flush()
    return writers


@pytest.mark.parametrize(("width", "height"), [(100, 30), (40, 20)])
def test_live_writer_two_runs_one_turns_critical(pane_factory, tmp_path, width, height):
    writers = _write_two_runs(tmp_path, range(1, 6))
    try:
        pane = pane_factory(width, height, [str(tmp_path)])
        fleet = r"2 runs(: all ok| ●)"
        screen = pane.wait_for_line(fleet)
        assert "grpo_a" in screen and "grpo_b" in screen  # the overview: one line per run
        assert "runs/" not in screen and "Dec01" not in screen  # experiment names, not sessions
        assert all(len(line) <= width for line in screen.splitlines())
        _write_two_runs(tmp_path, range(6, 9), writers)
        pane.wait_for_line(r"grpo_a +(step )?8 ")
        # grpo_b's reward turns NaN: critical; the header and the overview say so wherever the cursor is.
        for step in range(9, 12):
            writers["grpo_b"].add_scalar("train/reward", float("nan"), step)
        writers["grpo_b"].flush()
        screen = pane.wait_for_line(r"2 runs(: 1 CRIT| ✖1)")
        overview = [line for line in screen.splitlines() if "grpo_b" in line]
        assert any("✖" in line for line in overview)
        # Reward functions keep their names, even at 40 columns.
        pane.tmux("send-keys", "-t", "t", "/", *"rewards/", "Enter")
        screen = pane.wait_for("length_reward/mean", "contains_x_reward/mean")
        assert all(len(line) <= width for line in screen.splitlines())
        pane.quit_and_check_restored()
    finally:
        for writer in writers.values():
            writer.close()


def test_completions_arrive_live_and_enter_on_the_alert_shows_them(pane_factory, tmp_path):
    """TRL's completions files land while rltop runs: the alert quotes them, Enter shows the step."""
    collapse = FIXTURES_TRL.parent / "trl2" / "grpo_collapse"
    out = tmp_path / "grpo"
    shutil.copytree(collapse / "runs", out / "runs")
    (out / "completions").mkdir()
    files = sorted((collapse / "completions").iterdir())
    shutil.copy(files[0], out / "completions" / files[0].name)
    pane = pane_factory(100, 30, [str(out)])
    pane.wait_for("CRIT", "entropy", "completions: all 16 at step 1 differ")
    for path in files[1:]:
        shutil.copy(path, out / "completions" / path.name)
    pane.wait_for("16 of 16 at step 60 are identical")
    pane.tmux("send-keys", "-t", "t", "Enter")
    pane.wait_for("Completions", "step 60", "×8 identical", "xxxxxxxxxxxxxxxx", "←→ Step")
    pane.tmux("send-keys", "-t", "t", "Escape")
    pane.wait_for("Key values")
    pane.quit_and_check_restored()
