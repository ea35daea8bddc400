"""veRL logs followed live: appended line by line and in random chunks (torn lines), resumed,
rewritten, damaged, read in small windows, from ``memory://``, and through the headless commands.

Every live reading must end with exactly what a one-shot load of the finished file gives: each
point once, in order, none lost before or after a torn line or a damaged one.
"""

from __future__ import annotations

import json
import random
import shutil
import threading
import uuid

import fsspec
import pytest
from helpers.paths import FIXTURES
from helpers.snapshot import isolate_user_rules, run_cli
from helpers.tree import tree_state
from helpers.verl import drive
from helpers.watcher import MODES, start_watcher, wait_for  # noqa: F401 (fixture)

from rltop.health.calibration import Calibration
from rltop.health.rules.stall import Activity, judge_stall, usual_gap
from rltop.health.settings import Rules
from rltop.ingest.feed import APPEARED, FILE_ERROR, RELOADED, ChangeBatch, apply_batch
from rltop.ingest.follow.loader import load
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.ingest.sources.line_reader import LineFileReader
from rltop.ingest.sources.verl.console_reader import ConsoleDecoder
from rltop.model.run import Store

VERL = FIXTURES / "verl"
BASELINE = VERL / "real" / "verl-baseline-qwen0.5b-ppo" / "Qwen2.5-0.5B-bsz256_2-prompt512-resp256-0.538.log"
GUI_AGENT = VERL / "real" / "gui-agent-grpo" / "verl_demo.log"
JSONL = VERL / "written" / "verl0_9_1" / "grpo_run.jsonl"


def texts(series) -> list[tuple[int, str]]:
    return [(step, repr(value)) for step, value in zip(series.steps.tolist(), series.values.tolist())]


def same_run(live, fresh) -> None:
    """The live run holds exactly the points (and config) of a one-shot load of the finished file."""
    assert sorted(live.series) == sorted(fresh.series)
    for tag, series in fresh.series.items():
        assert texts(live.series[tag]) == texts(series), tag
    assert live.config == fresh.config


def chunks(data: bytes, seed: int, by_line: bool) -> list[bytes]:
    """``data`` cut line by line, or at random places (lines torn anywhere, up to 64 KB a piece)."""
    if by_line:
        return data.splitlines(keepends=True)
    rng, pieces, at = random.Random(seed), [], 0
    while at < len(data):
        size = rng.choice([1, 7, 100, 4096, 65536])
        pieces.append(data[at : at + rng.randint(1, size)])
        at += len(pieces[-1])
    return pieces


@pytest.mark.parametrize(
    "source, name, by_line",
    [(BASELINE, "train.log", True), (BASELINE, "train.log", False), (GUI_AGENT, "verl_demo.log", False),
     (JSONL, "grpo_run.jsonl", True), (JSONL, "grpo_run.jsonl", False)],
)  # fmt: skip
def test_appended_piece_by_piece_every_point_arrives_once(tmp_path, source, name, by_line):
    data = source.read_bytes()
    pieces = chunks(data, seed=len(data), by_line=by_line)
    if len(pieces) > 400:  # keep the cycles few: merge neighbours, keeping the tears where they are
        pieces = [
            b"".join(pieces[i : i + len(pieces) // 300]) for i in range(0, len(pieces), len(pieces) // 300)
        ]
    path = tmp_path / "run" / name
    path.parent.mkdir()
    path.write_bytes(b"")
    tracker, store = RunTracker([str(tmp_path)]), Store()
    delivered: dict[tuple[str, str], list[int]] = {}
    events = []
    for piece in pieces:
        with open(path, "ab") as handle:
            handle.write(piece)
        batch = drive(tracker, store)
        events.extend(batch.events)
        for points in batch.points:
            delivered.setdefault((points.run, points.tag), []).extend(points.points.steps.tolist())
    (fresh,) = load([str(path)]).store.runs.values()
    (appeared,) = [e for e in events if e.kind == APPEARED]
    assert not [e for e in events if e.kind in (RELOADED, FILE_ERROR) and "skipped" not in e.message]
    live = store.runs[appeared.run]
    same_run(live, fresh)
    for (_, tag), steps in delivered.items():
        assert steps == fresh.series[tag].steps.tolist(), tag  # each point delivered once, in order


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "source, name, tag, steps",
    [(BASELINE, "train.log", "actor/entropy_loss", 435), (JSONL, "grpo_run.jsonl", "actor/entropy", 10)],
)
def test_a_log_written_while_the_watcher_runs(tmp_path, mode, stop_all, source, name, tag, steps):  # noqa: F811
    data = source.read_bytes()
    path = tmp_path / "ppo" / name
    path.parent.mkdir()
    start = data.index(b"step:0") if name.endswith(".log") else 0
    path.write_bytes(data[:start])  # the console's start (config dump, no step yet); the JSONL empty
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)

    def write() -> None:
        with open(path, "ab") as handle:
            for piece in chunks(data[start:], seed=3, by_line=False):
                handle.write(piece)
                handle.flush()

    writer = threading.Thread(target=write)
    writer.start()
    writer.join()
    (fresh,) = load([str(path)]).store.runs.values()
    run = "ppo/train.log" if name.endswith(".log") else "ppo/grpo_run"
    wait_for(lambda: len(consumer.points(run, tag)) >= steps, f"all {steps} steps", 60)
    wait_for(lambda: same_points(consumer.store().runs[run], fresh), "every point of every tag", 60)
    same_run(consumer.store().runs[run], fresh)


def same_points(live, fresh) -> bool:
    """Every tag of ``fresh`` has as many points in ``live``."""
    return all(tag in live.series and len(live.series[tag]) == len(s) for tag, s in fresh.series.items())


def test_small_windows_and_an_over_long_line(tmp_path):
    data = BASELINE.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    path = tmp_path / "train.log"
    path.write_bytes(data[:cut] + b"x" * 10_000 + b"step:1 - a:1\n" + data[cut:])  # one line of 10 KB
    reader = LineFileReader(str(path), ConsoleDecoder(), window=512, max_line=4096)
    store, problems = Store(), []
    while True:
        result = reader.read()
        problems.extend(result.problems)
        batch = ChangeBatch()
        batch.add_decoded("r", str(path), result.decoded, None, str(path))
        apply_batch(store, batch)
        if not result.more:
            break
    (fresh,) = load([str(BASELINE)]).store.runs.values()
    same_run(store.runs["r"], fresh)
    assert problems == [f"{path}: 1 line skipped (longer than the 4 KB a line may take)"]


def test_a_resumed_run_appended_to_the_same_log(tmp_path):
    data = BASELINE.read_bytes()
    path = tmp_path / "ppo" / "train.log"
    path.parent.mkdir()
    first_end = data.index(b"step:6 - ")
    first = data[: data.rindex(b"\n", 0, first_end) + 1]  # steps 0..5
    resumed = first.replace(b"'total_epochs': 15", b"'total_epochs': 20").replace(
        b"0.4", b"0.3"
    )  # steps 0..5
    resumed = resumed[: resumed.index(b"step:0 - ")] + b"".join(
        line + b"\n" for line in resumed.split(b"\n") if b"step:3 - " in line or b"step:4 - " in line
    )  # the config printed again, then steps 3 and 4 again (from the step-3 checkpoint)
    path.write_bytes(first)
    tracker, store = RunTracker([str(tmp_path)]), Store()
    drive(tracker, store)
    with open(path, "ab") as handle:
        handle.write(resumed)
    drive(tracker, store)
    run = store.runs["ppo/train.log"]
    assert run.series["actor/entropy_loss"].steps.tolist() == [0, 1, 2, 3, 4]  # the store purges 3.. and 4..
    assert run.config["trainer.total_epochs"] == 20  # the resumed run's config
    (fresh,) = load([str(path)]).store.runs.values()
    same_run(run, fresh)


def test_a_rewritten_or_truncated_log_is_read_again_and_costs_no_other_run(tmp_path):
    data = BASELINE.read_bytes()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(GUI_AGENT, tmp_path / "b" / "verl_demo.log")
    path = tmp_path / "a" / "train.log"
    path.write_bytes(data)
    tracker, store = RunTracker([str(tmp_path)]), Store()
    drive(tracker, store)
    path.write_bytes(data[: len(data) // 3])  # truncated in place (the same file, shorter)
    batch = drive(tracker, store)
    assert [e.run for e in batch.events if e.kind == RELOADED] == ["a/train.log"]
    (fresh,) = load([str(path)]).store.runs.values()
    same_run(store.runs["a/train.log"], fresh)
    with open(path, "r+b") as handle:  # rewritten in place, longer: only its first bytes tell
        handle.write(b"libgomp: rewritten!" + data[19:])
    batch = drive(tracker, store)
    assert [e.run for e in batch.events if e.kind == RELOADED] == ["a/train.log"]
    drive(tracker, store)
    same_run(store.runs["a/train.log"], load([str(path)]).store.runs["train.log"])
    same_run(store.runs["b/verl_demo.log"], load([str(GUI_AGENT)]).store.runs["verl_demo.log"])


def hostile_log() -> bytes:
    """The GUI agent's log with every kind of damage between its lines."""
    lines = GUI_AGENT.read_bytes().split(b"\n")
    damage = [
        b"\x00" * 5000,  # a run of zeros (a file system that lost a block)
        b"garbage \xff\xfe\xfd not utf-8 step:9 - x",
        b"step:12 - a:" + b"9" * 400 + b" - b:1e999 - c:np.complex128(1+2j) - d:1.5",  # huge numbers
        b"step:" + b"9" * 30 + b" - a:1 - b:2",  # a step no int64 holds
        b"step:" + b"9" * 5000 + b" - a:1 - b:2",  # ... nor int() parses
        b"(TaskRunner pid=1) " + b"y" * (1 << 20),  # a 1 MB line
        b"step:13 - " + b" - ".join(b"k%d:%d" % (i, i) for i in range(60_000)),  # a 1 MB metric line
        b"\r\r\x1b[31m\x1b[0m\x1b]0;title\x07",
        b"step:14 - a\x00b:1 - c:2",  # a NUL inside a key
        b"step:2 - x:1 - y:seven",  # starts like a metric line, is none
    ]
    at = len(lines) // 2
    return b"\n".join(lines[:at] + damage + lines[at:])


def test_hostile_content_never_raises_and_costs_no_other_point(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "good").mkdir()
    (tmp_path / "bad" / "verl_demo.log").write_bytes(hostile_log())
    (tmp_path / "bad" / "run.jsonl").write_bytes(
        JSONL.read_bytes() + b"\x00\x00{garbage\n" + b'{"step":11,"data":{"a":"' + b"q" * (1 << 20) + b'"}}\n'
    )
    shutil.copy(GUI_AGENT, tmp_path / "good" / "verl_demo.log")
    result = load([str(tmp_path)])
    bad, good = result.store.runs["bad/verl_demo.log"], result.store.runs["good/verl_demo.log"]
    same_run(good, load([str(GUI_AGENT)]).store.runs["verl_demo.log"])
    for tag, series in good.series.items():  # every point of the real log survives the damage beside it
        assert texts(bad.series[tag]) == texts(series), tag
    assert bad.series["d"].steps.tolist() == [12]
    assert bad.series["k59999"].values.tolist() == [59999.0]
    assert len([tag for tag in bad.series if tag.startswith("k")]) == 60_000
    same_run(result.store.runs["bad/run"], load([str(JSONL)]).store.runs["grpo_run"])
    assert sorted(result.problems) == sorted([
        f"{tmp_path / 'bad' / 'verl_demo.log'}: 2 points skipped (value too large for a float); 1 point "
        "skipped (value not a real number); 4 points skipped (step or value out of range); 2 lines skipped "
        "(begin like a metric line (step:N - …) but are not key:number items)",
        f"{tmp_path / 'bad' / 'run.jsonl'}: 1 line skipped (not JSON)",
    ])  # fmt: skip


def test_a_log_and_a_jsonl_in_an_object_store(tmp_path):
    root = f"memory://rltop-verl-{uuid.uuid4().hex[:8]}"
    fs = fsspec.filesystem("memory")
    try:
        fs.pipe(f"{root}/ppo/train.log", BASELINE.read_bytes()[:200_000])
        fs.pipe(f"{root}/proj/grpo_run.jsonl", JSONL.read_bytes())
        fs.pipe(f"{root}/other/train.log", b"not a veRL log\n")
        remote = load([root]).store
        assert sorted(remote.runs) == ["ppo/train.log", "proj/grpo_run"]
        same_run(remote.runs["proj/grpo_run"], load([str(JSONL)]).store.runs["grpo_run"])
        tracker, store = RunTracker([root]), Store()
        drive(tracker, store)
        fs.pipe(f"{root}/ppo/train.log", BASELINE.read_bytes())  # an object rewritten whole, longer
        drive(tracker, store)
        local = tmp_path / "train.log"
        local.write_bytes(BASELINE.read_bytes())
        same_run(store.runs["ppo/train.log"], load([str(local)]).store.runs["train.log"])
    finally:
        if fs.exists(root):
            fs.rm(root, recursive=True)


def test_snapshot_and_export_read_the_veRL_logs_and_write_nothing(capsys, tmp_path, monkeypatch):
    isolate_user_rules(monkeypatch, tmp_path)
    tree = tmp_path / "logs"
    shutil.copytree(VERL / "real", tree / "real")
    shutil.copy(JSONL, tree / "grpo_run.jsonl")
    before = tree_state(tree)
    code, out, err = run_cli(capsys, "snapshot", str(tree), "--format", "json", "--fail-on", "never")
    assert code == 0, err
    runs = {run["name"]: run for run in json.loads(out)["runs"]}
    assert sorted(runs) == [
        "grpo_run", "real/gui-agent-grpo/verl_demo.log",
        "real/verl-baseline-qwen0.5b-ppo/Qwen2.5-0.5B-bsz256_2-prompt512-resp256-0.538.log",
    ]  # fmt: skip
    assert {run["source"]["kind"] for run in runs.values()} == {"verl_console", "verl_jsonl"}
    code, out, err = run_cli(capsys, "export", str(tree), "--format", "jsonl")
    assert code == 0, err
    store = load([str(tree)]).store
    assert len(out.splitlines()) == sum(len(s) for run in store.runs.values() for s in run.series.values())
    assert len(out.splitlines()) == 17486 + 690 + 218
    assert tree_state(tree) == before


@pytest.mark.parametrize("source", [GUI_AGENT, JSONL])
def test_the_stall_rule_takes_the_logged_step_time_as_the_least_usual_gap(source):
    # A console log has no times: points found at start share the file's date. The step time
    # veRL logs (timing_s/step, 10-12 min here) keeps a slow step from reading as a stall.
    (run,) = load([str(source)]).store.runs.values()
    activity = Activity.of_run(run)
    last_step_seconds = (
        722.6587480120361 + 10 if source == JSONL else 591.5320173036307
    )  # step 10's timing_s/step
    assert activity.step_seconds == last_step_seconds
    assert usual_gap(activity, 20) == last_step_seconds
    params, newest = Rules.defaults()["stall"], run.last_point_wall_time
    assert judge_stall(activity, newest + 20 * 60, params, Calibration()) is None  # two steps: no stall
    late = judge_stall(activity, newest + 3 * 3600, params, Calibration())
    assert late is not None and "its logged step time" in late.message
