"""The completions source on real TRL parquet files: the index, step lookups, repeated rows, damage."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.paths import FIXTURES

from rltop.ingest import storage
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.completions import (
    CompletionsFollower,
    CompletionsUpdate,
    file_step,
    folder_of,
    read_step,
)
from rltop.model.completions import CompletionIndex

FIXTURES_TRL2 = FIXTURES / "trl2"

HEALTHY = FIXTURES_TRL2 / "grpo_completions"  # trl 1.16, 60 steps, num_iterations 2, 4 prompts x 4
COLLAPSE = FIXTURES_TRL2 / "grpo_collapse"  # trl 1.16, lr 3e-3, temperature 0.7: collapses to "x" * 16


def _index(run_dir: Path) -> CompletionIndex:
    result = load([str(run_dir)])
    (run,) = result.store.runs.values()
    return run.completions


def test_index_of_the_real_fixture_matches_the_files():
    index = _index(HEALTHY)
    assert index.steps == [1, 2, 3, 4, 5, 6, 59, 60]
    for summary in index.summaries():
        table = pq.read_table(summary.path)
        assert summary.rows == table.num_rows == 16
        assert set(table.column("step").to_pylist()) == {summary.step}
        for name, mean in summary.rewards:
            values = table.column(name).to_pylist()
            assert mean == pytest.approx(sum(values) / len(values))
        assert [name for name, _ in summary.rewards] == ["length_reward", "contains_x_logged_reward"]
        lengths = [len(t) for t in table.column("completion").to_pylist()]
        assert summary.length_max == max(lengths)
        assert summary.length_mean == pytest.approx(sum(lengths) / 16)
        assert (summary.groups, summary.group_size) == (4, 4)  # batch 16, num_generations 4


def test_non_generation_steps_repeat_the_previous_generation():
    """num_iterations 2: the file of every even step holds the rows of the odd step before it."""
    index = _index(HEALTHY)
    assert [index.at(s).repeats for s in (1, 2, 3, 4, 5, 6)] == [None, 1, None, 3, None, 5]
    assert index.at(60).repeats == 59
    assert index.at(2).digest == index.at(1).digest and index.at(3).digest != index.at(1).digest
    rows_1 = [r.completion for r in read_step(index.at(1)).rows]
    rows_2 = read_step(index.at(2)).rows
    assert [r.completion for r in rows_2] == rows_1 and {r.values["step"] for r in rows_2} == {2}


def test_step_lookup_and_nearest_step():
    index = _index(HEALTHY)
    assert index.at(4).step == 4 and index.at(7) is None
    assert index.nearest(7).step == 6
    assert index.nearest(40).step == 59  # 34 steps from 6, 19 from 59
    assert index.nearest(32).step == 6  # 26 from 6, 27 from 59
    assert index.nearest(0).step == 1 and index.nearest(10_000).step == 60
    assert index.at_or_before(58).step == 6 and index.at_or_before(0) is None
    assert index.neighbour(6, 1).step == 59 and index.neighbour(1, -1) is None
    assert index.latest().step == 60


def test_collapse_run_shows_identical_completions_at_the_cap():
    index = _index(COLLAPSE)
    early, late = index.at(1), index.at(59)
    assert early.identical == 0 and early.top_count == 1
    assert late.rows == 16 and late.identical == 16 and late.top_count == 16
    assert late.top_text == "x" * 16 and late.length_max == 16 and late.length_mean == 16.0
    assert late.reward_mean("x_prefix_reward") == 2.0
    # The collapse grows: the share of repeated completions only rises from step 34 on, mostly.
    shares = [index.at(s).identical / index.at(s).rows for s in index.steps if s >= 34]
    assert shares[0] < 0.5 < shares[-1] == 1.0


def test_read_step_keeps_every_column_and_marks_twins_and_cap():
    index = _index(COLLAPSE)
    step = read_step(index.at(58), cap=16)
    assert step.columns == [
        "step",
        "prompt",
        "completion",
        "x_prefix_reward",
        "x_fraction_reward",
        "advantage",
    ]
    assert len(step.rows) == 16 and step.problem == ""
    table = pq.read_table(index.at(58).path).to_pylist()
    assert [row.values for row in step.rows] == table
    assert all(row.at_cap for row in step.rows)  # char-level tokenizer: 16 characters = 16 tokens
    twins = [row.twins for row in step.rows if row.completion == "x" * 16]
    assert len(twins) == 14 and set(twins) <= {6, 7, 8}
    assert read_step(index.at(58)).rows[0].at_cap is None  # no cap known: no claim


def test_files_are_kept_out_of_memory_until_asked(tmp_path):
    """The index keeps summaries only: deleting the files leaves it whole; reading then says why."""
    run = tmp_path / "run"
    shutil.copytree(HEALTHY, run)
    index = _index(run)
    shutil.rmtree(run / "completions")
    assert len(index) == 8
    step = read_step(index.at(3))
    assert step.rows == [] and "cannot read" in step.problem


def test_follower_reports_new_rewritten_deleted_and_torn_files(tmp_path):
    folder = tmp_path / "completions"
    follower = CompletionsFollower(str(folder))
    assert not follower.scan()  # no folder yet: nothing, no problem
    folder.mkdir()
    source = sorted((HEALTHY / "completions").iterdir())
    shutil.copy(source[0], folder / source[0].name)
    first = follower.scan()
    assert [s.step for s in first.added] == [1] and not first.problems
    assert not follower.scan()  # unchanged: nothing read again
    (folder / "completions_00002.parquet").write_bytes(source[1].read_bytes()[:300])  # being written
    torn = follower.scan()
    assert not torn.added and not torn.problems  # tried again once it changes
    shutil.copy(source[1], folder / "completions_00002.parquet")
    assert [s.step for s in follower.scan().added] == [2]
    # The final log rewrites the last file: its new rows replace the old summary.
    table = pq.read_table(source[2])
    pq.write_table(table, folder / "completions_00002.parquet")
    os.utime(folder / "completions_00002.parquet", (1, 1))
    rewritten = follower.scan()
    assert [s.step for s in rewritten.added] == [2] and rewritten.added[0].digest != first.added[0].digest
    (folder / "completions_00001.parquet").unlink()
    assert follower.scan().removed == [1]


def test_a_file_that_stays_unreadable_is_said_once(tmp_path):
    folder = tmp_path / "completions"
    folder.mkdir()
    bad = folder / "completions_00007.parquet"
    bad.write_bytes(b"not parquet at all")
    os.utime(bad, (1, 1))  # long settled: not a file being written
    follower = CompletionsFollower(str(folder))
    problems = follower.scan().problems
    assert len(problems) == 1 and "completions_00007.parquet: not a readable parquet file" in problems[0]
    assert not follower.scan().problems


def test_invalid_utf8_is_replaced_not_fatal(tmp_path):
    folder = tmp_path / "completions"
    folder.mkdir()
    table = pa.table(
        {
            "step": pa.array([3, 3], pa.int64()),
            "prompt": pa.array([b"p", b"p"], pa.binary()),
            "completion": pa.array([b"ok \xff\xfe bytes", b"fine"], pa.binary()),
            "r": pa.array([1.0, 0.0]),
            "advantage": pa.array([0.5, -0.5]),
        }
    )
    pq.write_table(table, folder / "completions_00003.parquet")
    (summary,) = CompletionsFollower(str(folder)).scan().added
    rows = read_step(summary).rows
    assert rows[0].completion == "ok \ufffd\ufffd bytes" and rows[1].completion == "fine"
    assert summary.rewards == (("r", 0.5),)


def test_names_and_folder():
    assert file_step("completions_00042.parquet") == 42
    assert file_step("completions_42.parquet.tmp") is None and file_step("other.parquet") is None
    assert folder_of("/out/run") == storage.join("/out/run", "completions")


def test_without_pyarrow_the_index_says_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    result = load([str(HEALTHY)])
    (run,) = result.store.runs.values()
    assert not run.completions and "pip install 'rltop[completions]'" in run.completions.note
    assert [p for p in result.problems if "rltop[completions]" in p] == [run.completions.note]


def test_the_watcher_lists_remote_completions_only_with_the_prefix(monkeypatch):
    """An idle remote run stays at about one request a poll: its folder is listed on relistings only."""
    from rltop.ingest.follow import run_tracker as tracker_module

    tracker = tracker_module.RunTracker([str(COLLAPSE)])
    tracker.rescan()
    (tracked,) = tracker.runs.values()
    scans = []

    def scan() -> CompletionsUpdate:
        scans.append(1)
        return CompletionsUpdate()

    monkeypatch.setattr(tracked.completions, "scan", scan)
    monkeypatch.setattr(tracker_module.storage, "is_remote", lambda path: True)
    tracker.scan_completions()
    assert scans == []
    tracker.scan_completions(force=True)
    assert scans == [1]


def test_an_unlistable_folder_keeps_the_index_and_is_said_once(tmp_path, monkeypatch):
    """Only a folder that is gone empties the index: a permission error is not a deletion."""
    from rltop.ingest.sources import completions as completions_module

    folder = tmp_path / "completions"
    shutil.copytree(HEALTHY / "completions", folder)
    follower = CompletionsFollower(str(folder))
    assert len(follower.scan().added) == 8

    def denied(root, on_problem):
        on_problem(f"{root}: cannot list directory (Permission denied); skipped")
        return iter(())

    monkeypatch.setattr(completions_module.storage, "walk", denied)
    first, second = follower.scan(), follower.scan()
    assert not first.removed and len(first.problems) == 1 and "Permission denied" in first.problems[0]
    assert not second  # said once
    monkeypatch.undo()
    assert not follower.scan()  # readable again: nothing changed, nothing read again
    shutil.rmtree(folder)
    assert sorted(follower.scan().removed) == [1, 2, 3, 4, 5, 6, 59, 60]
