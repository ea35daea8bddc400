"""Tests moved out of test_wandb_source.py: each starts a process (the unit tier starts none)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.wandb_files import (  # noqa: F401 (fixtures among them)
    EVENTS_DIR,
    FIXTURE,
    NOW,
    ROOT,
    RUN_FILE,
    WANDB_DIR,
    WITHOUT_WANDB,
    last_history_record,
    only_run,
    points,
    points_up_to,
    read_bytes,
    records_of,
)


@pytest.mark.parametrize(
    "argv",
    [
        ["snapshot", str(WANDB_DIR)],
        ["snapshot", str(RUN_FILE)],
        ["tail", str(WANDB_DIR)],
        ["export", str(RUN_FILE.parent)],
    ],
)
def test_without_wandb_one_line_naming_the_extra_and_exit_2(argv) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_WANDB, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'rltop[wandb]'" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_without_wandb_the_event_files_beside_a_wandb_folder_are_still_read() -> None:
    command = [sys.executable, "-c", WITHOUT_WANDB, "snapshot", str(FIXTURE), "--format", "json"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (run,) = json.loads(done.stdout)["runs"]
    assert run["source"]["kind"] == "tfevents"
