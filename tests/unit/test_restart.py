"""A run resumed from an earlier checkpoint: a second event file whose steps go back."""

from __future__ import annotations

from pathlib import Path

from rltop.ingest.follow.loader import load


def _write(directory: Path, steps: range, offset: float) -> Path:
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(logdir=str(directory))
    for step in steps:
        writer.add_scalar("train/reward", step + offset, step)
    writer.close()
    (written,) = directory.glob("events.out.tfevents.*")
    return written


def test_resumed_run_shows_the_resumed_trajectory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    first = _write(tmp_path / "a", range(1, 11), 0.0)
    second = _write(tmp_path / "b", range(6, 13), 0.5)  # resumed from the step-5 checkpoint
    first.rename(run / "events.out.tfevents.1700000000.host.1.0")
    second.rename(run / "events.out.tfevents.1700000100.host.2.0")
    (loaded,) = load([str(run)]).store.runs.values()
    series = loaded.series["train/reward"]
    assert series.steps.tolist() == list(range(1, 13))
    assert series.values.tolist() == [1, 2, 3, 4, 5] + [s + 0.5 for s in range(6, 13)]
    assert series.purged == 5
