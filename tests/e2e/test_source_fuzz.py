"""Odd values and damage in trainer_state.json and TRL's completions files never raise, never cost another
run's points, and every intact point is still read; a reader that raises anyway costs only its own file.

The cases are drawn with a fixed seed from real files of the copied fixtures: a real
``trainer_state.json`` (GRPO, 200 steps) with its bytes damaged (truncated, flipped, zeroed, garbage
inserted) or its values made odd (steps of 2**70, 1e20, strings, booleans; values of 10**400, 1e400,
NaN, strings, lists; entries that are not dicts), and real ``completions_*.parquet`` files truncated,
flipped, zeroed or replaced by random bytes. Each damaged run lies beside an intact TensorBoard run,
which must load whole every time.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import threading
from pathlib import Path

import pytest
from helpers.paths import FIXTURES, TRL

from rltop.ingest.feed import apply_batch
from rltop.ingest.follow.loader import load
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.ingest.follow.watcher import Watcher
from rltop.ingest.reading import step_fits
from rltop.ingest.sources.completions import CompletionsFollower
from rltop.ingest.sources.trainer_state import tag_of
from rltop.model.run import Store

SEED = 20261204
STATE = TRL / "grpo_healthy" / "checkpoint-200" / "trainer_state.json"
COMPLETIONS = FIXTURES / "trl2" / "grpo_completions" / "completions"
INTACT = TRL / "ppo_unstable"  # a critical TensorBoard run beside every damaged one
ODD_STEPS = [2**70, -(2**70), 10**400, 1e20, -1e300, 1.5, "7", None, True, [3], {"a": 1}]
ODD_VALUES = ["10**400", "1e400", "-1e400", "NaN", '"text"', "[1, 2]", '{"x": 1}', "true", "null"]


def intact_counts() -> dict[str, int]:
    """Points per tag of the intact run, read alone."""
    (run,) = load([str(INTACT)]).store.runs.values()
    return {tag: len(series) for tag, series in run.series.items()}


def tree_with(tmp_path: Path) -> tuple[Path, Path]:
    """A tree with the intact run in ``b/`` and an empty output_dir ``a/`` for the damaged run."""
    root = tmp_path / "tree"
    shutil.copytree(INTACT, root / "b" / INTACT.name)
    (root / "a").mkdir(parents=True)
    return root, root / "a"


def damaged_bytes(data: bytes, rng: random.Random) -> bytes:
    """One byte-level damage of ``data``."""
    kind = rng.choice(("truncate", "flip", "zeros", "insert", "random"))
    at = rng.randrange(len(data))
    if kind == "truncate":
        return data[:at]
    if kind == "flip":
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            flipped[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return bytes(flipped)
    if kind == "zeros":
        return data[:at] + bytes(rng.randint(1, 4096)) + data[at + 4096 :]
    if kind == "insert":
        return data[:at] + rng.randbytes(rng.randint(1, 64)) + data[at:]
    return rng.randbytes(rng.randint(0, 2048))


def odd_state(document: dict, rng: random.Random) -> tuple[str, dict[str, set[int]]]:
    """The document with a few odd steps, values and entries, as JSON text; and the (tag -> steps) of
    every point that stayed ordinary (those must all be read)."""
    history = [dict(entry) for entry in document["log_history"]]
    raw_values: dict[tuple[int, str], str] = {}  # values written as raw JSON (not dumpable)
    for _ in range(rng.randint(1, 6)):
        entry = rng.choice(history)
        what = rng.random()
        if what < 0.35:
            entry["step"] = rng.choice(ODD_STEPS)
        elif what < 0.8:
            key = rng.choice([k for k in entry if k != "step"] or ["loss"])
            raw_values[(id(entry), key)] = rng.choice(ODD_VALUES)
            entry[key] = f"@@{id(entry)}:{key}@@"
        else:
            history.insert(rng.randrange(len(history) + 1), rng.choice([None, 3, "x", [1], []]))
    text = json.dumps({**document, "log_history": history, "global_step": rng.choice([200, 2**70, "x"])})
    for (ident, key), raw in raw_values.items():
        text = text.replace(json.dumps(f"@@{ident}:{key}@@"), raw.replace("10**400", "1" + "0" * 400))
    ordinary: dict[str, set[int]] = {}
    for entry in history:
        if not isinstance(entry, dict) or not step_fits(entry.get("step")) or isinstance(entry["step"], bool):
            continue
        for key, value in entry.items():
            ordinary_value = isinstance(value, (int, float)) and not isinstance(value, bool)
            if key != "step" and ordinary_value and math.isfinite(value) and not str(value).startswith("@@"):
                ordinary.setdefault(tag_of(key), set()).add(entry["step"])
    return text, ordinary


def test_odd_values_and_damage_in_trainer_state_never_raise_nor_cost_points(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    document = json.loads(STATE.read_text())
    expected = intact_counts()
    failures: list[str] = []
    for number in range(120):
        root, output_dir = tree_with(tmp_path / str(number))
        target = output_dir / "checkpoint-200" / "trainer_state.json"
        target.parent.mkdir()
        ordinary: dict[str, set[int]] | None = None
        if number % 2:
            target.write_bytes(damaged_bytes(STATE.read_bytes(), rng))
        else:
            text, ordinary = odd_state(document, rng)
            target.write_text(text)
        result = load([str(root)])  # never raises
        runs = {run.directory: run for run in result.store.runs.values()}
        intact = next(run for directory, run in runs.items() if directory.startswith(str(root / "b")))
        if {tag: len(series) for tag, series in intact.series.items()} != expected:
            failures.append(f"case {number}: the intact run lost points")
        if ordinary is not None:
            damaged = runs.get(str(output_dir))
            read = {} if damaged is None else {t: set(s.steps.tolist()) for t, s in damaged.series.items()}
            lost = {tag: steps - read.get(tag, set()) for tag, steps in ordinary.items()}
            if any(lost.values()):
                failures.append(f"case {number}: ordinary points lost {list(lost.items())[:2]}")
            if len(text_problems := [p for p in result.problems if "skipped" in p]) > 2:
                failures.append(f"case {number}: said more than once: {text_problems}")
    assert not failures, "\n".join(failures[:10])


def test_damaged_completions_cost_only_their_own_step(tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    originals = sorted(COMPLETIONS.glob("completions_*.parquet"))
    failures: list[str] = []
    for number in range(60):
        folder = tmp_path / str(number) / "completions"
        shutil.copytree(COMPLETIONS, folder)
        victim = rng.choice(originals)
        (folder / victim.name).write_bytes(damaged_bytes(victim.read_bytes(), rng))
        update = CompletionsFollower(str(folder)).scan(final=True)  # never raises
        steps = {summary.step for summary in update.added}
        others = {int(p.stem.split("_")[1]) for p in originals if p != victim}
        if not others <= steps:
            failures.append(f"case {number}: lost steps {sorted(others - steps)}")
        victim_step = int(victim.stem.split("_")[1])
        if victim_step not in steps and not any(victim.name in p for p in update.problems):
            failures.append(f"case {number}: {victim.name} unreadable and not said: {update.problems}")
    assert not failures, "\n".join(failures[:10])


def test_a_random_bytes_parquet_file_is_said_by_a_one_shot_load(tmp_path: Path) -> None:
    output_dir = tmp_path / "run"
    shutil.copytree(TRL / "grpo_healthy", output_dir)
    (output_dir / "completions").mkdir()
    (output_dir / "completions" / "completions_00001.parquet").write_bytes(random.Random(3).randbytes(500))
    problems = load([str(output_dir)]).problems  # written just now: a live follower would wait
    assert any("completions_00001.parquet: not a readable parquet file" in p for p in problems)


@pytest.fixture
def raising_trainer_state(monkeypatch):
    """trainer_state.json readers that raise, as a reader bug would."""
    from rltop.ingest.sources import trainer_state

    def broken(self):
        raise OverflowError("Python int too large to convert to C long")

    monkeypatch.setattr(trainer_state.TrainerStateReader, "read", broken)


def test_a_failing_run_does_not_stop_a_one_shot_load(tmp_path: Path, raising_trainer_state) -> None:
    root, output_dir = tree_with(tmp_path)
    shutil.copytree(TRL / "grpo_healthy" / "checkpoint-100", output_dir / "checkpoint-100")
    result = load([str(root)])
    intact = next(run for run in result.store.runs.values() if "b/" in run.name)
    assert {tag: len(series) for tag, series in intact.series.items()} == intact_counts()
    (said,) = [p for p in result.problems if "reading failed" in p]
    assert "OverflowError" in said and "trainer_state.json" in said


def test_a_failing_run_does_not_stop_the_watcher(tmp_path: Path, raising_trainer_state) -> None:
    root, output_dir = tree_with(tmp_path)
    shutil.copytree(TRL / "grpo_healthy" / "checkpoint-100", output_dir / "checkpoint-100")
    store, events = Store(), []
    lock = threading.Lock()

    def take(batch) -> None:  # the consumer's own way: apply each batch to its store
        with lock:
            events.extend(batch.events)
            apply_batch(store, batch)

    watcher = Watcher([str(root)], take, poll=0.05)
    watcher.start()
    try:
        assert watcher.caught_up.wait(60)
    finally:
        watcher.stop()
    with lock:
        intact = next(run for run in store.runs.values() if run.name.startswith("b/"))
        assert {tag: len(series) for tag, series in intact.series.items()} == intact_counts()
        failed = [e.message for e in events if "reading failed" in e.message]
        assert len(failed) == 1 and "OverflowError" in failed[0]
        assert not [e.message for e in events if "internal error" in e.message]


def test_a_failing_file_is_said_once_over_many_polls(tmp_path: Path, raising_trainer_state) -> None:
    root, output_dir = tree_with(tmp_path)
    shutil.copytree(TRL / "grpo_healthy" / "checkpoint-100", output_dir / "checkpoint-100")
    tracker = RunTracker([str(root)])
    tracker.rescan()
    said = []
    for _ in range(5):  # five polls, each reading every file again
        tracker.mark_due(everything=True)
        tracker.read_dirty(lambda: False, lambda: None)
        said += [e.message for e in tracker.take_batch().events if "reading failed" in e.message]
    assert len(said) == 1
