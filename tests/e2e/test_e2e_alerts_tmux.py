"""End to end in tmux: a critical finding in a dashboard whose window is not in view rings the bell
(tmux flags the window) and the pane title says CRIT; ``q`` gives the title back."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter

TMUX = shutil.which("tmux")
RLTOP = shutil.which("rltop", path=str(Path(sys.executable).parent)) or shutil.which("rltop")

pytestmark = pytest.mark.skipif(
    TMUX is None or RLTOP is None,
    reason="needs tmux and the installed rltop console script (.ci/run installs both)",
)


class Tmux:
    """A private tmux server (``-L``): the user's sessions are untouched."""

    def __init__(self) -> None:
        self.socket = f"rltop-alerts-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str) -> str:
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=10)
        return done.stdout

    def wait(self, condition, what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                screen = self("capture-pane", "-p", "-t", "t:0")
                raise AssertionError(f"timed out waiting for {what}:\n{screen}")
            time.sleep(0.1)

    def bell_flags(self) -> dict[str, str]:
        """Window index -> #{window_bell_flag}."""
        lines = self("list-windows", "-t", "t", "-F", "#{window_index} #{window_bell_flag}").split("\n")
        return dict(line.split() for line in lines if line.strip())

    def title(self) -> str:
        return self("display-message", "-p", "-t", "t:0", "#{pane_title}").strip()

    def kill(self) -> None:
        self("kill-server")


@pytest.fixture
def tmux():
    server = Tmux()
    yield server
    server.kill()


def test_critical_rings_the_bell_of_a_hidden_window_and_titles_the_pane(tmp_path, tmux):
    logs = tmp_path / "logs"
    with EventWriter(logs / "grpo") as writer:
        for step in range(1, 6):
            writer.add_scalar("train/loss", 1.0 + step / 10, step)
        writer.flush()
        command = f'TERM=screen-256color {RLTOP} {logs}; echo "rltop exited $?"; sleep 60'
        tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", command)
        tmux.wait(lambda: "loss" in tmux("capture-pane", "-p", "-t", "t:0"), "the dashboard")
        tmux.wait(lambda: tmux.title() == "● rltop: ok", "the title")
        tmux("new-window", "-t", "t:1", "sleep 600")  # the user looks at another window
        tmux("select-window", "-t", "t:1")
        assert tmux.bell_flags() == {"0": "0", "1": "0"}
        writer.add_scalar("train/loss", float("nan"), 6)
        writer.flush()
        tmux.wait(lambda: tmux.bell_flags().get("0") == "1", "the bell flag of rltop's window")
        assert tmux.bell_flags()["1"] == "0"
        tmux.wait(lambda: tmux.title() == "✖ rltop: 1 CRIT", "CRIT in the title")
        tmux("select-window", "-t", "t:0")
        tmux("send-keys", "-t", "t:0", "q")
        tmux.wait(lambda: "rltop exited 0" in tmux("capture-pane", "-p", "-t", "t:0"), "rltop to exit")
        assert "CRIT" not in tmux.title()  # the title stack gave the old title back
