"""Shared by the tests: what test_wandb_live.py used to define for itself and others."""

from __future__ import annotations

import os
from pathlib import Path

KEYS = [f"train/metric_{index:02d}" for index in range(24)]


WRITER = r"""
import glob, json, os, sys
import wandb

root, expected_path = sys.argv[1], sys.argv[2]
keys = json.loads(sys.argv[3])
run = wandb.init(project="rltop-live", mode="offline", dir=root, config={"beta": 0.04, "max_steps": 160})
run.define_metric("train/global_step")
run.define_metric("*", step_metric="train/global_step", step_sync=True)  # as transformers' WandbCallback
written = []

def log(step):
    row = {key: step + index / 100 for index, key in enumerate(keys)}
    run.log({**row, "train/global_step": step})
    written.extend([key, step, value] for key, value in row.items())

def file_size():
    files = glob.glob(os.path.join(root, "wandb", "offline-run-*", "run-*.wandb"))
    return os.path.getsize(files[0]) if files else 0

step = 0
while file_size() < 2 * 32768:  # logs until two whole blocks are on disk
    step += 1
    log(step)
    if step >= 100000:
        raise SystemExit("the run file does not grow")
print("paused", step, flush=True)
sys.stdin.readline()
for later in range(step + 1, step + 40):
    log(later)
run.finish()
with open(expected_path, "w") as handle:
    json.dump(written, handle)
print("done", flush=True)
"""


def offline_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a wandb SDK run that stays on this machine and out of the user's config."""
    return {
        **os.environ,
        "WANDB_MODE": "offline",
        "WANDB_SILENT": "true",
        "WANDB_DISABLE_GIT": "true",
        "WANDB_CONFIG_DIR": str(tmp_path / "config"),
        "WANDB_CACHE_DIR": str(tmp_path / "cache"),
    }


CRASHING = r"""
import sys
import wandb

config = {"beta": 0.04, "max_steps": 100}
run = wandb.init(project="rltop-crash", mode="offline", dir=sys.argv[1], config=config)
run.define_metric("train/global_step")
run.define_metric("*", step_metric="train/global_step")
for step in range(1, 6):
    run.log({"train/loss": 1.0 / step, "train/global_step": step})
raise RuntimeError("CUDA out of memory (simulated)")
"""


UNSYNCED = r"""
import sys
import wandb

run = wandb.init(project="rltop-steps", mode="offline", dir=sys.argv[1])
run.define_metric("train/global_step")
run.define_metric("*", step_metric="train/global_step", step_sync=False)
for step in range(1, 4):
    run.log({"profiling/Time taken: generate": step / 100})  # as TRL's profiling timers log
    run.log({"train/loss": 1.0 / step, "train/global_step": step})
run.finish()
"""


RESUMING = r"""
import sys, time
import wandb

# Preempted after step 5, resumed from the checkpoint at step 2: the second session logs 3..7.
for session, (start, stop) in enumerate([(1, 6), (3, 8)]):
    if session:  # the SDK names a run folder to the second: a resume within it would share it
        began = int(time.time())
        while int(time.time()) == began:
            time.sleep(0.01)
    run = wandb.init(project="rltop-resume", mode="offline", dir=sys.argv[1], id="resumed1", resume="allow")
    run.define_metric("train/global_step")
    run.define_metric("*", step_metric="train/global_step")
    for step in range(start, stop):
        run.log({"train/loss": session * 10 + step, "train/global_step": step})
    run.finish()
"""
