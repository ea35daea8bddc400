"""Run discovery: names, file order, odd directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.paths import TRL

from rltop.ingest.follow.discovery import DiscoveryError, discover
from rltop.ingest.sources.tfevents.kind import event_file_order


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def test_runs_are_named_relative_to_the_root() -> None:
    found = discover([str(TRL)])
    names = [run.name for run in found.runs]
    assert "grpo_healthy/runs/Nov29_21-46-18_vm" in names
    assert len(names) == 7
    assert found.problems == []


def test_run_directory_and_single_file(tmp_path: Path) -> None:
    run_dir = TRL / "ppo_healthy" / "runs" / "Nov29_21-50-07_vm"
    (from_dir,) = discover([str(run_dir)]).runs
    assert from_dir.name == "Nov29_21-50-07_vm"
    file = next(run_dir.glob("events*"))
    (from_file,) = discover([str(file)]).runs
    assert from_file.name == "Nov29_21-50-07_vm" and from_file.files == [str(file)]


def test_several_roots_are_prefixed() -> None:
    found = discover([str(TRL / "ppo_healthy"), str(TRL / "ppo_unstable")])
    assert [r.name for r in found.runs] == [
        "ppo_healthy/runs/Nov29_21-50-07_vm",
        "ppo_unstable/runs/Nov29_21-53-12_vm",
    ]


def test_files_are_read_in_timestamp_order(tmp_path: Path) -> None:
    for name in (
        "events.out.tfevents.1700000100.h.2.0",
        "events.out.tfevents.999.h.1.0",
        "events.out.tfevents.1700000000.h.3.0",
    ):
        _touch(tmp_path / "run" / name)
    (run,) = discover([str(tmp_path)]).runs
    assert [os.path.basename(f) for f in run.files] == [
        "events.out.tfevents.999.h.1.0",
        "events.out.tfevents.1700000000.h.3.0",
        "events.out.tfevents.1700000100.h.2.0",
    ]
    assert event_file_order("notes.txt")[0] == float("inf")


def test_symlink_loop_is_skipped_with_a_warning(tmp_path: Path) -> None:
    _touch(tmp_path / "a" / "events.out.tfevents.1.h.1.0")
    os.symlink(tmp_path, tmp_path / "a" / "loop")
    found = discover([str(tmp_path)])
    assert [r.name for r in found.runs] == ["a"]
    assert any("symlink loop" in p for p in found.problems)


def test_unreadable_directory_is_skipped_with_a_warning(tmp_path: Path, monkeypatch) -> None:
    _touch(tmp_path / "ok" / "events.out.tfevents.1.h.1.0")
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)  # tests run as root: simulate the denial
    found = discover([str(tmp_path)])
    assert [r.name for r in found.runs] == ["ok"]
    assert any("locked" in p and "Permission denied" in p for p in found.problems)


def test_non_event_file_given_explicitly(tmp_path: Path) -> None:
    notes = _touch(tmp_path / "notes.json")
    found = discover([str(notes)])
    assert found.runs == []
    assert "not a TensorBoard event file" in found.problems[0]


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DiscoveryError, match="no such file"):
        discover([str(tmp_path / "nope")])


def test_roots_with_the_same_base_name_stay_apart(tmp_path: Path) -> None:
    for side in ("a", "b"):
        _touch(tmp_path / side / "logs" / "run1" / "events.out.tfevents.1.h.1.0")
    found = discover([str(tmp_path / "a" / "logs"), str(tmp_path / "b" / "logs")])
    assert [r.name for r in found.runs] == ["a/logs/run1", "b/logs/run1"]
