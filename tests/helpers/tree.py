"""Shared by the tests: what test_never_writes.py used to define for itself and others."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from helpers.paths import FIXTURES, REPO
from helpers.snapshot import isolate_user_rules
from rltop.ingest.follow.loader import load

ROOT = REPO  # the repository root


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
