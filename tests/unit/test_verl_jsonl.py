"""veRL's file logger (JSON Lines) as runs: the files veRL 0.9.1 (orjson) and 0.7.0 (json) wrote.

tests/fixtures/verl/written (see its README) holds files written by veRL's own ``Tracking`` class:
NaN and infinities as ``null`` (orjson) or ``NaN``/``Infinity`` (json), strings, a bool, a nested
object, a 31-digit integer, and a restart that truncated the file."""

from __future__ import annotations

import math
import shutil

import pytest
from helpers.verl import VERSIONS, WRITTEN, as_text, drive, independent_points  # noqa: F401 (fixtures among them)

from rltop.ingest.feed import APPEARED, FILE_ERROR, RELOADED
from rltop.ingest.follow.loader import load
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.ingest.sources.verl.jsonl import looks_like_jsonl
from rltop.model.run import Store


@pytest.mark.parametrize("version", VERSIONS)
def test_every_value_veRL_wrote_is_read(version):
    path = WRITTEN / version / "grpo_run.jsonl"
    result = load([str(path)])
    (run,) = result.store.runs.values()
    assert run.name == "grpo_run" and run.source == "verl_jsonl"
    expected = independent_points(path)
    assert sorted(run.series) == sorted(expected)
    for tag, points in expected.items():
        series = run.series[tag]
        assert as_text(zip(series.steps.tolist(), series.values.tolist())) == as_text(points), tag
    assert result.problems == []  # "rollout/backend": "vllm" is a label veRL logs on purpose
    assert run.config == {"framework": "verl"}


def test_what_each_writer_made_of_nan_infinity_strings_and_nesting():
    new = load([str(WRITTEN / "verl0_9_1" / "grpo_run.jsonl")]).store.runs["grpo_run"].series
    old = load([str(WRITTEN / "verl0_7_0" / "grpo_run.jsonl")]).store.runs["grpo_run"].series
    assert (
        math.isnan(new["actor/grad_norm"].values[5]) and new["actor/grad_norm"].steps[5] == 6
    )  # orjson: null
    assert old["actor/grad_norm"].values[5] == math.inf  # json: Infinity
    assert math.isnan(old["actor/grad_norm"].values[4]) and math.isnan(new["actor/pg_loss"].values[4])
    assert old["critic/score/min"].values.tolist() == [-math.inf]
    assert new["timing_s/as_text"].values.tolist() == [12.5] and new["rollout/is_sync"].values.tolist() == [
        1.0
    ]
    assert new["eval/acc"].values.tolist() == [0.5] and new["eval/n"].values.tolist() == [12.0]
    assert old["perf/huge_counter"].values.tolist() == [1e30]
    assert new["val-core/aime_2024/acc/mean@30"].steps.tolist() == [0]


def test_a_run_is_named_after_its_file_inside_its_project_folder(tmp_path):
    project = tmp_path / "root" / "verl_fixture"
    project.mkdir(parents=True)
    shutil.copy(WRITTEN / "verl0_9_1" / "grpo_run.jsonl", project / "grpo_run.jsonl")
    result = load([str(tmp_path / "root")])
    assert sorted(result.store.runs) == ["verl_fixture/grpo_run"]


@pytest.mark.parametrize(
    "first_line, veRL_s",
    [
        (b'{"step":0,"data":{"a":1.0}}', True),
        (b'{"step": 0, "data": {"a": NaN}}', True),
        (b'{"input": "q", "output": "a", "score": 1.0, "step": 3}', False),  # veRL's rollout dump
        (b'{"step": 1, "data": {"a": 1}, "extra": 2}', False),
        (b'{"step": 1, "data": [1, 2]}', False),
        (b"[1, 2, 3]", False),
        (b"not json at all", False),
    ],
)
def test_which_jsonl_files_are_veRL_s(first_line, veRL_s):
    assert looks_like_jsonl(first_line + b"\n" + b'{"other": 1}\n', True) is veRL_s
    assert looks_like_jsonl(first_line + b"\n", False) is veRL_s  # a whole line, more to come
    assert looks_like_jsonl(first_line[:10], False) is first_line.startswith(b'{"step":')  # a long first line


def test_a_damaged_first_line_does_not_hide_the_records_after_it():
    assert looks_like_jsonl(b'{"step":0,"da\x00\x00\n{"step":1,"data":{"a":1}}\n', True)


def test_other_tools_jsonl_files_are_not_runs(tmp_path):
    (tmp_path / "rollouts").mkdir()
    (tmp_path / "rollouts" / "12.jsonl").write_text(
        '{"input": "q", "output": "a", "score": 1.0, "step": 12}\n'
    )
    (tmp_path / "metrics.jsonl").write_text('{"loss": 0.5, "step": 1}\n')
    shutil.copy(WRITTEN / "verl0_7_0" / "grpo_run.jsonl", tmp_path / "exp.jsonl")
    assert sorted(load([str(tmp_path)]).store.runs) == ["exp"]


def test_odd_lines_cost_only_their_points(tmp_path):
    path = tmp_path / "odd.jsonl"
    lines = [
        b'{"step":1,"data":{"a":1.0,"b":"x","c":[1,2]}}',
        b"garbage \x00\xff line",
        b'{"step":2,"data":{"a":' + b"9" * 400 + b',"b":2}}',  # an integer no float holds
        b'{"step":' + str(2**70).encode() + b',"data":{"a":3.0}}',
        b'{"step":"3","data":{"a":3.0}}',
        b'{"step":3.0,"data":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",  # deeper than json parses
        b'{"step":4,"data":{"a":4.0,"huge":1e999,"big":"' + b"z" * (1 << 20) + b'"}}',  # a 1 MB line
        b'["not", "a", "record"]',
        b"",
        b'{"step":5,"data":{"a":5.0,"b":null}}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = load([str(path)])
    series = result.store.runs["odd"].series
    assert series["a"].steps.tolist() == [1, 4, 5] and series["a"].values.tolist() == [1.0, 4.0, 5.0]
    assert series["b"].steps.tolist() == [2, 5] and math.isnan(series["b"].values[1])
    assert series["huge"].values.tolist() == [math.inf]  # Python's json reads 1e999 as infinity
    (said,) = result.problems
    assert said == (
        f"{path}: 1 point skipped (a list or another object, "
        "not a number); 1 point skipped (value too large for a float); 1 point skipped (step or value out "
        "of range); 1 point skipped (step not an integer); 2 lines skipped (not JSON); 1 line skipped (not a "
        '{"step": N, "data": {…}} record)'
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_a_restart_that_truncates_the_file_reloads_the_run(tmp_path, version):
    folder = tmp_path / "verl_fixture"
    folder.mkdir()
    path = folder / "restarted.jsonl"
    path.write_bytes((WRITTEN / version / "restart_first.jsonl").read_bytes())
    tracker, store = RunTracker([str(tmp_path)]), Store()
    first = drive(tracker, store)
    assert [e.run for e in first.events if e.kind == APPEARED] == ["verl_fixture/restarted"]
    assert store.runs["verl_fixture/restarted"].series["actor/entropy"].steps.tolist() == list(range(1, 9))
    with open(path, "wb") as handle:  # what FileLogger does when the resumed training starts: "wb"
        resumed = (WRITTEN / version / "restart_resumed.jsonl").read_bytes()
        handle.write(resumed[: len(resumed) // 3])
    batch = drive(tracker, store)
    assert [e.run for e in batch.events if e.kind == RELOADED] == ["verl_fixture/restarted"]
    assert any("reading it again from the start" in e.message for e in batch.events if e.kind == FILE_ERROR)
    with open(path, "ab") as handle:
        handle.write(resumed[len(resumed) // 3 :])
    drive(tracker, store)
    fresh = load([str(tmp_path)]).store.runs["verl_fixture/restarted"]
    live = store.runs["verl_fixture/restarted"]
    assert live.series["actor/entropy"].steps.tolist() == list(range(6, 13))
    for tag, series in fresh.series.items():
        assert as_text(zip(live.series[tag].steps.tolist(), live.series[tag].values.tolist())) == as_text(
            zip(series.steps.tolist(), series.values.tolist())
        ), tag
