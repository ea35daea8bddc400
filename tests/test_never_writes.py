"""rltop never writes under a log directory: every source kind, every headless command.

One tree holds a run of each kind (TensorBoard event files, a W&B run file, a trackio database,
checkpoints' trainer_state.json), each in its own training folder so that every kind is read.
``snapshot`` and ``export`` run in this process, ``tail`` until it printed every point and
``watch`` until its first judgement ("watching 4 runs"), as subprocesses. Before and after, every
entry of the tree is the same: names, sizes, contents, inodes, modification and change times
(a directory's times change when a file is created in it, even one removed since), owners and
modes; and no process holds a lock on any file of the tree, while the live commands idle and
after the others returned.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from live_helpers import Lines, end_all, start_tail
from test_snapshot_helpers import isolate_user_rules, run_cli

from rltop.ingest.follow.loader import load

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parent.parent
KINDS = {"tfevents", "wandb", "trackio", "trainer_state"}


def log_tree(folder: Path) -> Path:
    """A run of every kind, each in a training folder of its own."""
    tree = folder / "logs"
    shutil.copytree(FIXTURES / "trl" / "grpo_unstable", tree / "tensorboard" / "grpo_unstable")
    shutil.copytree(FIXTURES / "wandb" / "wandb_grpo" / "wandb", tree / "wandb_training" / "wandb")
    (tree / "trackio_training" / "trackio").mkdir(parents=True)
    shutil.copy(
        FIXTURES / "trackio" / "trackio_grpo" / "trackio" / "huggingface.db",
        tree / "trackio_training" / "trackio",
    )
    for state in sorted((FIXTURES / "trl" / "ppo_healthy").glob("checkpoint-*/trainer_state.json")):
        target = tree / "checkpoints" / "ppo" / state.parent.name / state.name
        target.parent.mkdir(parents=True)
        shutil.copy(state, target)
    return tree


def tree_state(tree: Path) -> dict[str, tuple]:
    """Every entry under ``tree``: inode, size, mtime, ctime, mode, owner, and a file's sha256."""
    state = {}
    for path in sorted([tree, *tree.rglob("*")]):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        state[str(path.relative_to(tree))] = (
            info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode, info.st_uid,
            info.st_gid, digest,
        )  # fmt: skip
    return state


def locks_on(tree: Path) -> list[str]:
    """The lines of /proc/locks about a file of ``tree``: any process's POSIX, OFD or flock lock."""
    inodes = {}
    for path in [tree, *tree.rglob("*")]:
        info = path.lstat()
        inodes[f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"] = path
    held = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        where = next((field for field in fields if field.count(":") == 2), None)
        if where in inodes:
            held.append(f"{inodes[where]}: {line}")
    return held


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    isolate_user_rules(monkeypatch, tmp_path)
    return log_tree(tmp_path)


def every_kind_read(tree: Path) -> int:
    """The points of the tree, checking that a run of each kind is among them."""
    result = load([str(tree)])
    assert {source.kind for source in result.discovery.runs} == KINDS
    return sum(len(series) for run in result.store.runs.values() for series in run.series.values())


pytestmark = pytest.mark.skipif(not Path("/proc/locks").exists(), reason="locks are listed by /proc/locks")


@pytest.mark.parametrize(
    "command", [("snapshot", "--format", "json", "--fail-on", "never"), ("export", "--format", "jsonl")]
)
def test_snapshot_and_export_leave_the_tree_as_it_was(capsys, tree: Path, command: tuple[str, ...]) -> None:
    before = tree_state(tree)  # before anything reads it (the in-process load must not write either)
    points = every_kind_read(tree)
    code, out, err = run_cli(capsys, command[0], str(tree), *command[1:])
    assert code == 0, err
    if command[0] == "export":
        assert len(out.splitlines()) == points
    else:
        assert {run["source"]["kind"] for run in json.loads(out)["runs"]} == KINDS
    assert locks_on(tree) == []
    assert tree_state(tree) == before


def test_tail_leaves_the_tree_as_it_was(tree: Path) -> None:
    before = tree_state(tree)  # before anything reads it (the in-process load must not write either)
    points = every_kind_read(tree)
    tail, out, err = start_tail(str(tree), "--poll", "3600")  # caught up, it reads nothing for an hour
    try:
        out.wait(lambda lines: len(lines) >= points, f"all {points} points", timeout=120)
        assert locks_on(tree) == []
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0, err.lines
    finally:
        end_all(tail)
    assert len(out.lines) == points
    assert tree_state(tree) == before


@pytest.mark.parametrize("mode", [(), ("--poll", "3600")], ids=["file-events", "polling"])
def test_watch_leaves_the_tree_as_it_was(tree: Path, mode: tuple[str, ...]) -> None:
    before = tree_state(tree)
    every_kind_read(tree)
    watch = subprocess.Popen(
        [sys.executable, "-m", "rltop", "watch", str(tree), *mode], cwd=ROOT, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        err = Lines(watch.stderr)
        Lines(watch.stdout)
        err.wait(lambda lines: any("watching 4 runs" in line for line in lines), "the first judgement", 120)
        if mode:
            assert locks_on(tree) == []  # polling once an hour: idle now
        watch.send_signal(signal.SIGTERM)
        assert watch.wait(timeout=30) == 0, err.lines
    finally:
        end_all(watch)
    assert tree_state(tree) == before
