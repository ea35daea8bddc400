"""rltop never writes under a log directory: every source kind, every headless command.

One tree holds a run of each kind (TensorBoard event files, a W&B run file, a trackio database,
checkpoints' trainer_state.json), each in its own training folder so that every kind is read.
``snapshot`` and ``export`` run in this process, ``tail`` until it printed every point and
``watch`` until its first judgement ("watching 4 runs"), as subprocesses. Before and after, every
entry of the tree is the same: names, sizes, contents, inodes, modification and change times
(a directory's times change when a file is created in it, even one removed since), owners and
modes; and no process holds a lock on any file of the tree, while the live commands idle and
after the others returned."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.live import Lines, end_all, start_tail
from helpers.snapshot import run_cli
from helpers.tree import (  # noqa: F401 (fixtures among them)
    KINDS,
    ROOT,
    every_kind_read,
    locks_on,
    pytestmark,  # noqa: F401 (the module's marks)
    tree_state,
)


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
