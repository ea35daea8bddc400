"""Shared test fixtures: the copied real TRL runs under tests/fixtures/trl."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
TRL = FIXTURES / "trl"
TRL_RUNS = (
    "grpo_healthy",
    "grpo_liger_cpu_crash",
    "grpo_truncated",
    "grpo_unstable",
    "grpo_with_eval",
    "ppo_healthy",
    "ppo_unstable",
)


def trl_event_file(name: str) -> Path:
    """The single event file of one copied TRL fixture run."""
    (found,) = sorted((TRL / name).glob("runs/*/events.out.tfevents.*"))
    return found


@pytest.fixture
def trl_dir() -> Path:
    """The directory holding every copied TRL fixture run (read-only use)."""
    return TRL


@pytest.fixture
def trl_copy(tmp_path: Path):
    """Copy one fixture run into a temporary directory (for tests that modify files)."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(TRL / name, target)
        return target

    return copy


Points = dict[str, list[tuple[int, float]]]


def read_file_points(path: Path, window: int = 1 << 22) -> tuple[Points, list[str]]:
    """Every (step, value) per tag of one event file read to its end in ``window``-byte reads,
    and the problems reported."""
    from rltop.ingest.tfrecord.reader import EventFileReader

    reader = EventFileReader(str(path), window=window)
    points: dict[str, list[tuple[int, float]]] = {}
    problems: list[str] = []
    while True:
        result = reader.read()
        problems.extend(result.problems)
        for tag, chunk in result.decoded.scalars.items():
            points.setdefault(tag, []).extend(zip(chunk.steps.tolist(), chunk.values.tolist()))
        if not result.more:
            return points, problems
