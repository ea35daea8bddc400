"""The Textual-free parts of the UI: smoothing, names that fit, sparkline rows, themes, the demo writer."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers.paths import TRL

from rltop.demo_data.replay import Replayer
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter
from rltop.model.smoothing import ema_debiased
from rltop.ui.themes import RLTOP_THEMES, load_themes, theme_from_toml
from rltop.view.chart.spark import spark_rows
from rltop.view.text.fit import cut_at_word, elide_name
from rltop.view.text.humanize import format_rate


def tensorboard_smoothing(values: list[float], weight: float) -> list[float]:
    """TensorBoard's resmoothDataset (vz_line_chart2), transcribed as a plain loop."""
    last, count, out = 0.0, 0, []
    constant = all(v == values[0] for v in values)
    for value in values:
        if constant or not math.isfinite(value):
            out.append(value)
            continue
        last = last * weight + (1 - weight) * value
        count += 1
        out.append(last / (1 - weight**count))
    return out


@pytest.mark.parametrize("weight", [0.0, 0.6, 0.9, 0.99, 0.999])
@pytest.mark.parametrize("count", [1, 2, 700, 3000])
def test_ema_debiased_matches_tensorboard(weight, count):
    rng = np.random.default_rng(count)
    values = rng.normal(size=count) * np.linspace(1, 50, count)
    if count > 500:
        values[[3, 400]] = [np.nan, np.inf]
    got = ema_debiased(values, weight)
    want = np.array(tensorboard_smoothing(values.tolist(), weight))
    assert np.array_equal(np.isfinite(got), np.isfinite(want))
    finite = np.isfinite(want)
    assert np.allclose(got[finite], want[finite], rtol=1e-10, atol=1e-12)
    assert np.array_equal(np.isnan(got), np.isnan(values))


def test_ema_debiased_edge_cases():
    assert ema_debiased(np.array([]), 0.6).shape == (0,)
    assert ema_debiased(np.array([2.0, 2.0, 2.0]), 0.6).tolist() == [2.0, 2.0, 2.0]
    assert np.isnan(ema_debiased(np.array([np.nan, np.nan]), 0.6)).all()
    # Weight 1 would freeze the curve at 0: clamped to TensorBoard's 0.999 like its slider.
    assert ema_debiased(np.array([1.0, 3.0]), 1.0)[0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("name", "width", "expected"),
    [
        ("val/ratio", 20, "val/ratio"),
        ("rewards/length_reward/mean", 16, "rewards/…/mean"),
        ("rewards/length_reward/mean", 7, "…/mean"),
        ("policy/approxkl_avg", 13, "…approxkl_avg"),
        ("completions/mean_terminated_length", 18, "mean_terminated…"),
        ("x" * 30, 5, "xxxx…"),
    ],
)
def test_elide_name_cuts_at_segments_and_words(name, width, expected):
    assert elide_name(name, width) == expected
    assert len(elide_name(name, width)) <= width


def test_cut_at_word_and_rate():
    assert cut_at_word("entropy fell to 0.0004 at step 149", 20) == "entropy fell to…"
    assert cut_at_word("short", 20) == "short"
    assert format_rate(0.0) == "0 pts/s" and format_rate(3.5) == "3.5 pts/s"
    assert format_rate(2500) == "2.5k pts/s"


def test_spark_rows_two_rows_and_non_finite_marks():
    rows = spark_rows(np.array([0.0, 1.0, 2.0, 3.0, np.nan]), rows=2)
    assert len(rows) == 2 and all(len(row) == 5 for row in rows)
    assert rows[1][0] == "▁" and rows[0][3] == "█" and rows[1][4] == "×"
    flat = spark_rows(np.array([1.0, 1.0]), rows=2)
    assert flat[0] == "  " and flat[1] == "──"  # a constant is a flat line, not half-height bars
    assert spark_rows(np.array([1.0, np.nan]), rows=1) == ["─×"]


def test_builtin_themes_load_and_bad_theme_files_are_reported(tmp_path):
    themes, problems = load_themes()
    assert problems == [] and set(RLTOP_THEMES) <= {theme.name for theme in themes}
    (tmp_path / "bad.toml").write_text('name = "x"\nprimary = "#123456"\ncolour = "red"\n')
    (tmp_path / "broken.toml").write_text("name = \n")
    (tmp_path / "ok.toml").write_text(
        'name = "mine"\nprimary = "#123456"\n[variables]\nrltop-spark-ok = "#00ff00"\n'
    )
    themes, problems = load_themes([tmp_path])
    assert [theme.name for theme in themes] == ["mine"]
    assert len(problems) == 2 and any("colour" in p for p in problems)
    with pytest.raises(ValueError, match="bad colour"):
        theme_from_toml('name = "y"\nprimary = "not-a-colour"\n', "y.toml")


def test_event_writer_round_trips_through_rltop_and_tbparse(tmp_path):
    from tbparse import SummaryReader

    with EventWriter(tmp_path / "run") as writer:
        writer.add_text("args/text_summary", json.dumps({"beta": 0.04}), 0, 100.0)
        for step in range(1, 4):
            writer.add_scalar("train/loss", step / 4, step, 100.0 + step)
        writer.add_scalar("train/loss", float("nan"), 4, 105.0)
    (run,) = load([str(tmp_path)]).store.runs.values()
    series = run.series["train/loss"]
    assert series.steps.tolist() == [1, 2, 3, 4] and series.wall_times.tolist() == [101, 102, 103, 105]
    assert series.values[:3].tolist() == [0.25, 0.5, 0.75] and math.isnan(series.values[3])
    assert run.config == {"beta": 0.04}
    frame = SummaryReader(str(tmp_path / "run")).scalars
    assert frame["step"].tolist() == [1, 2, 3, 4]


def test_replay_writes_the_bundled_runs_step_by_step(tmp_path):
    clock = iter(range(1_000, 10_000)).__next__
    replayer = Replayer(tmp_path, speed=1000, clock=lambda: float(clock()))
    replayer.begin()
    store = load([str(tmp_path)]).store
    assert set(store.runs) == {"ppo_unstable", "grpo_healthy"}
    assert all(run.last_step == 1 and run.config for run in store.runs.values())
    replayer.advance(9)
    store = load([str(tmp_path)]).store
    assert store.runs["ppo_unstable"].last_step == 10
    replayer.start()
    assert replayer.wait(30)
    store = load([str(tmp_path)]).store
    assert store.runs["ppo_unstable"].last_step == 150 and store.runs["grpo_healthy"].last_step == 200
    # Same points as the original run, only the wall times are new.
    (original,) = load([str(TRL / "ppo_unstable")]).store.runs.values()
    for tag, series in original.series.items():
        replayed = store.runs["ppo_unstable"].series[tag]
        assert replayed.steps.tolist() == series.steps.tolist()
        assert np.array_equal(replayed.values, series.values, equal_nan=True)


def test_every_builtin_theme_tells_8_overlaid_runs_apart():
    from rltop.ui.themes import VARIABLE_DEFAULTS
    from rltop.ui.widgets.detail_chart import OTHER_RUN_CLASSES

    themes, _ = load_themes()
    assert len(OTHER_RUN_CLASSES) == 7  # with the run's own line: 8 runs
    for theme in themes:
        if theme.name not in RLTOP_THEMES:
            continue
        colours = [theme.variables["rltop-chart-smooth"]] + [
            theme.variables[f"rltop-chart-other-{i}"] for i in range(1, 8)
        ]
        assert len({colour.lower() for colour in colours}) == 8, theme.name
    assert all(f"rltop-chart-other-{i}" in VARIABLE_DEFAULTS for i in range(1, 8))
