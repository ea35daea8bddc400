"""The guide's "Stopping a run that blew up" (docs/guide/alerts.md), end to end, with its own hook scripts.

A tiny real training loop (gradient descent with a learning rate that jumps too high, logged with
rltop's event writer, the torch SummaryWriter format with the pid in the file name) diverges until
its loss is Inf/NaN. ``rltop watch --on-alert <script from the README>`` sees the critical finding
and the loop stops: at the end of a step when the stop file appears (what the README's TRL
callback does), or on SIGINT from the pid in the event file's name.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from helpers.live import wait_until
from helpers.paths import REPO

ROOT = REPO  # the repository root
PYTHON = sys.executable
MAX_STEPS = 5000

TRAIN = r"""
import json, math, signal, sys, time
from pathlib import Path
import numpy as np
from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter

# Ctrl-C raises KeyboardInterrupt, as in a training started from a terminal, even when pytest runs
# where SIGINT is ignored (a shell's background job), which its children would otherwise inherit.
signal.signal(signal.SIGINT, signal.default_int_handler)
run_dir, result = Path(sys.argv[1]), Path(sys.argv[2])
max_steps = int(sys.argv[3])
rng = np.random.default_rng(0)
X = rng.normal(size=(64, 8)).astype(np.float32)
y = X @ rng.normal(size=8).astype(np.float32)
w = np.zeros(8, np.float32)
writer = EventWriter(run_dir)
outcome = {"stopped_by": None, "first_bad_step": None}
step = 0
try:
    for step in range(1, max_steps + 1):
        lr = 0.05 if step <= 30 else 5.0  # a schedule gone wrong: gradient descent diverges
        with np.errstate(all="ignore"):
            grad = X.T @ (X @ w - y) / len(X)
            w = (w - lr * grad).astype(np.float32)
            loss = float(np.mean((X @ w - y) ** 2))
        writer.add_scalar("train/loss", loss, step)
        writer.add_scalar("train/learning_rate", lr, step)
        writer.flush()
        if outcome["first_bad_step"] is None and not math.isfinite(loss):
            outcome["first_bad_step"], outcome["first_bad_time"] = step, time.time()
        if (run_dir / "STOP").exists():  # what the README's StopOnFile callback checks
            outcome["stopped_by"] = "stop file"
            break
        time.sleep(0.01)  # the rest of a training step
except KeyboardInterrupt:
    outcome["stopped_by"] = "SIGINT"
outcome["step"] = step
if "first_bad_time" in outcome:
    outcome["seconds_after_first_bad"] = round(time.time() - outcome.pop("first_bad_time"), 2)
writer.close()
result.write_text(json.dumps(outcome))
"""


def readme_script(name: str) -> str:
    """The shell script of the README whose second line is ``# <name>: ...``."""
    text = (ROOT / "docs" / "guide" / "alerts.md").read_text()
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        if block.startswith(f"#!/bin/sh\n# {name}:"):
            return block
    raise AssertionError(f"no {name} in docs/guide/alerts.md")


@pytest.mark.parametrize("script, stopped_by", [("stop_run.sh", "stop file"), ("interrupt_run.sh", "SIGINT")])
def test_a_critical_finding_stops_the_training_loop(tmp_path, script, stopped_by):
    hook = tmp_path / script
    hook.write_text(readme_script(script))
    hook.chmod(0o755)
    logs, result = tmp_path / "outputs", tmp_path / "result.json"
    run_dir = logs / "runs" / "diverging"
    run_dir.mkdir(parents=True)
    watch = subprocess.Popen(
        [PYTHON, "-m", "rltop", "watch", str(logs), "--on-alert", str(hook)],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    train = None
    try:
        train = subprocess.Popen(
            [PYTHON, "-c", TRAIN, str(run_dir), str(result), str(MAX_STEPS)],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(lambda: train.poll() is not None, "the training loop to end", timeout=120)
        outcome = json.loads(result.read_text())
    finally:
        for process in (train, watch):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
    assert outcome["stopped_by"] == stopped_by, (outcome, watch.stderr.read())
    assert outcome["first_bad_step"] is not None and outcome["step"] < MAX_STEPS
    print(
        f"{script}: stopped at step {outcome['step']}, {outcome['seconds_after_first_bad']} s after the "
        f"first non-finite loss (step {outcome['first_bad_step']})"
    )
    assert watch.returncode == 0
