"""``rltop tail`` beside the real trackio package logging a run into its database: each step shows
up while training goes on, exactly once; the run's config arrives with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from live_helpers import end_all, start_tail

STEPS = 3

WRITER = r"""
import sys
import trackio

steps = int(sys.argv[1])
trackio.init(project="live", name="calm-river-1", config={"beta": 0.04, "max_steps": steps})
print("ready", flush=True)
for step in range(1, steps + 1):
    sys.stdin.readline()
    trackio.log({"train/loss": 1.0 / step, "train/reward": step / 10, "train/global_step": step})
    print("logged", step, flush=True)
trackio.finish()
print("done", flush=True)
"""


def said(process: subprocess.Popen, word: str) -> list[str]:
    """The next line of the writer's own that starts with ``word`` (trackio prints notices too)."""
    while True:
        line = process.stdout.readline()
        assert line, f"the writer ended before saying {word!r}"
        if line.startswith(word):
            return line.split()


def test_tail_shows_each_trackio_step_once_while_it_trains(tmp_path) -> None:
    trackio_dir = tmp_path / "trackio"
    env = {
        **os.environ,
        "TRACKIO_DIR": str(trackio_dir),
        "HF_HUB_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "0",
        "HF_HOME": str(tmp_path / "hf"),
    }
    writer = tail = None
    try:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(STEPS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        said(writer, "ready")
        trackio_dir.mkdir(exist_ok=True)
        tail, out, err = start_tail(str(trackio_dir))
        for step in range(1, STEPS + 1):
            writer.stdin.write("go\n")
            writer.stdin.flush()
            assert said(writer, "logged") == ["logged", str(step)]
            # The step reaches the database (trackio writes from a thread) and then the tail.
            out.wait(
                lambda lines, step=step: sum(f'"step": {step},' in line for line in lines) >= 2,
                f"the points of step {step}",
                timeout=120,
            )
        said(writer, "done")
        assert writer.wait(timeout=120) == 0
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0, err.lines
    finally:
        end_all(writer, tail)
    printed = [json.loads(line) for line in out.lines]
    assert {point["run"] for point in printed} == {"live/calm-river-1"}
    got = sorted((point["tag"], point["step"], point["value"]) for point in printed)
    expected = sorted(
        [("train/loss", s, 1.0 / s) for s in range(1, STEPS + 1)]
        + [("train/reward", s, s / 10) for s in range(1, STEPS + 1)]
    )
    assert got == expected
