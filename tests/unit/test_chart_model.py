"""The chart model without a screen: axes, outlier-robust scaling, zoom, marks, the cursor readout,
a seed group's band, and the thresholds along a series (a band that follows its baseline)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.paths import FIXTURES
from helpers.ui import write_run

from rltop.health.bands import BandTracker
from rltop.health.engine import HealthEngine
from rltop.health.settings import Rules
from rltop.ingest.follow.loader import load
from rltop.model.run import Run
from rltop.model.series import Series
from rltop.model.values import format_value
from rltop.view.chart.data import Overlay, build_figure, figure_range
from rltop.view.chart.group import aligned_group, step_matrix
from rltop.view.chart.options import ChartOptions
from rltop.view.chart.readout import build_readout, nearest_point, step_point
from rltop.view.chart.scale import YScale, choose_scale, nice_ticks, robust_limits, step_labels, y_ticks

TRL2 = FIXTURES / "trl2"


def series(values, steps=None, start=1_795_000_000.0, gap=10.0) -> Series:
    values = np.asarray(values, dtype=np.float64)
    steps = np.arange(1, len(values) + 1) if steps is None else np.asarray(steps)
    out = Series("train/x")
    out.append(steps.astype(np.int64), start + gap * np.arange(len(values)), values, single_precision=False)
    return out


def overlay(values, run="a", color="smooth", **kwargs) -> Overlay:
    return Overlay(run, run, series(values, **kwargs), color)


# -- axes ------------------------------------------------------------------------------------------


def test_step_ticks_are_integers_and_read_alike():
    ticks = nice_ticks(1, 150, 6, integer=True)
    assert ticks == [20, 40, 60, 80, 100, 120, 140]
    assert nice_ticks(1, 4, 6, integer=True) == [1, 2, 3, 4]  # never 1.5 on a step axis
    assert step_labels([0, 50_000, 100_000, 150_000]) == ["0", "50k", "100k", "150k"]
    assert step_labels([5000, 10_000]) == ["5000", "10000"]


def test_log_scale_only_for_positive_values_else_symlog():
    assert choose_scale(True, np.array([1e-2, 5.0, 1e6])).kind == "log"
    symlog = choose_scale(True, np.array([-0.5, 0.0, 0.02, 3.0]))
    assert symlog.kind == "symlog" and symlog.linear_width == pytest.approx(0.1)  # the small values' decade
    assert "values ≤ 0" in symlog.note
    assert choose_scale(False, np.array([1.0, 2.0])).kind == "linear"
    values = np.array([-3.0, -0.01, 0.0, 0.5, 40.0])
    assert np.allclose(symlog.inverse(symlog.forward(values)), values)


def test_log_ticks_are_decades_and_labels_stay_apart():
    positions, labels = y_ticks(-2.0, 6.0, YScale("log"), 5)
    assert labels == ["0.01", "1", "100", "10000", "1e6"] and positions == [-2, 0, 2, 4, 6]
    _, close = y_ticks(0.99997, 1.00003, YScale(), 5)
    assert len(set(close)) == len(close)  # 0.99998, 1, 1.00002: never "1 1 1"


def test_robust_limits_ignore_outliers_like_tensorboard():
    values = np.concatenate((np.linspace(0, 1, 200), [1000.0, -1000.0]))
    low, high = robust_limits(values, ignore_outliers=True)
    assert -0.1 < low < 0.1 and 0.9 < high < 1.1
    assert robust_limits(values, ignore_outliers=False) == (-1000.0, 1000.0)
    assert robust_limits(np.array([np.nan]), True) is None


def test_robust_limits_are_numpys_nearest_rank_percentiles():
    """One partition finds the ranks numpy's percentile takes (1st "higher", 99th "lower"), at
    every length around the ranks' steps, with ties, NaN and infinities left out; the caller's
    array is left as it was."""
    rng = np.random.default_rng(3)
    for count in [*range(20, 260), 1001, 19_999, 20_000, 20_001]:
        values = rng.normal(0, 1, count) * 10 ** rng.uniform(-3, 3)
        if count % 3 == 0:
            values = np.round(values, 1)  # ties
        if count % 5 == 0:
            values[rng.integers(0, count, 3)] = [np.nan, np.inf, -np.inf]
        before = values.copy()
        finite = values[np.isfinite(values)]
        expected = (float(np.percentile(finite, 1.0, method="higher")),
                    float(np.percentile(finite, 99.0, method="lower")))  # fmt: skip
        if finite.size >= 20:
            assert robust_limits(values, ignore_outliers=True) == expected, count
        np.testing.assert_array_equal(values, before)


def test_growing_limits_are_robust_limits_at_every_point(monkeypatch):
    """A live chart's y range read from its values kept sorted: the same floats as partitioning the
    whole array, while the values grow one point or many at a time (NaN, ±inf, ties and zeros of
    both signs among them), under and over the robust minimum, and when they stop growing (a
    zoomed window moves, a purge), with outliers shown, and with the switch off."""
    from rltop.view.chart import scale

    rng = np.random.default_rng(9)
    values = np.round(rng.normal(0, 1, 6000), 2)
    values[rng.integers(0, 6000, 60)] = np.nan
    values[rng.integers(0, 6000, 8)] = np.inf
    values[rng.integers(0, 6000, 8)] = -np.inf
    values[rng.integers(0, 6000, 300)] = -0.0
    growing = scale.GrowingLimits()

    def same(data: np.ndarray, ignore: bool = True) -> None:
        want = robust_limits(data, ignore)
        got = growing.limits(data, ignore)
        assert (got is None) == (want is None)
        if want is not None:
            assert np.array(got).tobytes() == np.array(want).tobytes(), len(data)

    end = 0
    while end < 6000:
        end = min(6000, end + int(rng.choice([1, 1, 2, 5, 19, 300])))
        same(values[:end])
    assert growing._last is not None and growing._last[1] is not None  # read from the sorted values
    same(values[1000:5000])  # a window that moved
    same(values[1000:5001])
    same(values[:3000])  # shorter: a purge
    same(values[:3001], ignore=False)
    zeros = np.concatenate((np.full(50, -0.0), np.zeros(50), rng.uniform(1, 2, 10)))
    same(zeros[:100])
    same(zeros)  # a zero edge: +0.0 both ways, whichever of the equal zeros is at its rank
    assert np.array(robust_limits(zeros, True)[0]).tobytes() == np.array(0.0).tobytes()
    monkeypatch.setattr(scale, "KEEP_RANKS", False)
    same(values[:6000])
    assert growing._last is None


# -- figures ---------------------------------------------------------------------------------------


def test_outliers_are_clipped_to_the_edge_and_marked():
    values = np.sin(np.arange(300) / 10.0)
    values[150] = 500.0
    figure = build_figure(overlay(values), [], ChartOptions(), 200)
    assert figure.ylim[1] < 5 and figure.clipped == 1
    (mark,) = [m for m in figure.marks if m.kind == "clipped-high"]
    assert mark.x.tolist() == [151.0] and mark.y[0] == figure.ylim[1]
    every = build_figure(overlay(values), [], ChartOptions(ignore_outliers=False), 200)
    assert every.ylim[1] > 500 and every.clipped == 0


def test_non_finite_points_are_marks_at_their_steps():
    values = np.linspace(1.0, 2.0, 50)
    values[[9, 19, 29]] = [np.nan, np.inf, -np.inf]
    figure = build_figure(overlay(values), [], ChartOptions(), 100)
    marks = {m.kind: m for m in figure.marks}
    assert marks["nan"].x.tolist() == [10.0] and marks["nan"].glyph == "×"
    assert marks["inf"].x.tolist() == [20.0] and marks["-inf"].x.tolist() == [30.0]
    assert marks["-inf"].y[0] == figure.ylim[0] and marks["inf"].y[0] == figure.ylim[1]
    assert all(np.isfinite(trace.y).all() for trace in figure.traces)


def test_zoom_shows_only_the_chosen_range():
    run = overlay(np.arange(1000.0))
    for zoom, first in ((0.5, 500.5), (0.25, 750.25), (0.1, 900.1)):
        figure = build_figure(run, [], ChartOptions(zoom=zoom), 100)
        assert figure.xlim == pytest.approx((first, 1000.0))
        assert all(trace.x.min() >= first for trace in figure.traces)
        assert min(figure.xticks[0]) >= first
    window = build_figure(run, [], ChartOptions(window=(100.0, 200.0)), 100)
    assert window.xlim == (100.0, 200.0) and max(t.x.max() for t in window.traces) <= 200


def test_log_y_on_a_loss_spanning_1e_2_to_1e6():
    loss = np.logspace(-2, 6, 200)
    figure = build_figure(overlay(loss), [], ChartOptions(log_y=True, ignore_outliers=False), 100)
    assert figure.scale.kind == "log"
    assert figure.ylim[0] < -2 and figure.ylim[1] > 6  # drawn in decades
    assert {"0.01", "1", "100", "1e6"} <= set(figure.yticks[1])


def test_a_two_thousand_step_run_overlaid_is_cut_to_the_short_one_shown():
    """The chart shows the run you look at: a longer run overlaid is cut to its x range (and says
    so in its legend label), unless ``fit_all`` asks for every run's range."""
    long, short = overlay(np.ones(2000), "long"), overlay(np.ones(200) * 2, "short", color="other-1")
    figure = build_figure(short, [long], ChartOptions(x_mode="relative"), 100)
    assert figure.xlim == (0.0, 1990.0)  # ten seconds a step, both start at 0: the short run's range
    assert [t.label for t in figure.traces if t.role == "line"] == ["long (cut; 0 s–5 h 33 min)", "short"]
    assert figure.cut == [("long", "0 s–5 h 33 min")]
    whole = build_figure(short, [long], ChartOptions(x_mode="relative", fit_all=True), 100)
    assert whole.xlim == (0.0, 19990.0) and whole.cut == []
    assert [t.label for t in whole.traces if t.role == "line"] == ["long", "short"]
    shorter = build_figure(long, [short], ChartOptions(), 100)  # a shorter run overlaid is not cut
    assert shorter.xlim == (1.0, 2000.0) and shorter.cut == []


def test_thresholds_only_where_they_apply_and_off_chart_ones_are_named():
    run = load([str(TRL2 / "ppo_value_spike")]).store.runs.popitem()[1]
    tag = "train/loss/value_avg"
    track = BandTracker().track(run, tag)
    main = Overlay(run.name, "ppo", run.series[tag], "smooth")
    figure = build_figure(main, [], ChartOptions(), 200, band=track)
    (warn,) = [t for t in figure.thresholds if t.label == "warn_high"]
    finite = warn.x[np.isfinite(warn.y)]
    assert finite.min() > 20  # no line before the rule has a baseline (warm-up 20 points)
    assert len(np.unique(warn.y[np.isfinite(warn.y)])) > 5  # it follows the baseline


def test_a_live_series_ahead_of_its_band_keeps_the_last_thresholds():
    run = load([str(TRL2 / "ppo_value_spike")]).store.runs.popitem()[1]
    tag = "train/loss/value_avg"
    track = BandTracker().track(run, tag)
    source = run.series[tag]
    longer = series(np.concatenate((source.values, [0.05, 0.06])))  # two points the band has not seen
    figure = build_figure(Overlay("r", "r", longer, "smooth"), [], ChartOptions(), 500, band=track)
    (warn,) = [t for t in figure.thresholds if t.label == "warn_high"]
    assert warn.x[-1] == len(longer) and warn.y[-1] == warn.y[-3] == track.line("warn_high")[-1]


def test_figure_range_is_what_the_cursor_moves_in():
    run = overlay(np.arange(100.0))
    assert figure_range(run, [], ChartOptions(zoom=0.5)) == (50.5, 100.0)
    longer = overlay(np.arange(400.0), "longer", color="other-1")
    assert figure_range(run, [longer], ChartOptions(zoom=0.5)) == (50.5, 100.0)
    assert figure_range(run, [longer], ChartOptions(zoom=0.5, fit_all=True)) == (200.5, 400.0)


# -- cursor ----------------------------------------------------------------------------------------


def test_readout_gives_the_exact_stored_value_of_every_run():
    a = series(np.float32([0.1, 0.2, 0.30000001, 0.4]).astype(np.float64))
    a.single_precision = True
    b = series([1.5, 2.5, 3.5], steps=[1, 2, 4])
    readout = build_readout(("a", "A", a, "smooth"), [("b", "B", b, "other-1")], "step", 2)
    main, other = readout.entries
    assert readout.step == 3 and main.text == format_value(a.values[2], True) == "0.3"
    assert other.step == 2 and other.text == "2.5" and not other.exact  # b has no step 3
    assert build_readout(("a", "A", a, "smooth"), [("b", "B", b, "other-1")], "step", 3).entries[1].exact


def test_the_cursor_steps_point_by_point_and_lands_on_the_last_of_equal_steps():
    run = series([1.0, 2.0, 3.0, 4.0], steps=[1, 2, 2, 3])
    assert nearest_point(run, "step", 2.2) == 2  # the second point at step 2: what readers read
    assert step_point(run, "step", 0, 1, 0, 10) == 2
    assert step_point(run, "step", 2, -1, 0, 10) == 0
    assert step_point(run, "step", 3, 1, 0, 10) == 3  # the last point stays


# -- seed groups -----------------------------------------------------------------------------------


def test_a_group_is_aligned_by_step_with_mean_and_band():
    members = [overlay([1.0, 2.0, 3.0], "a"), overlay([3.0, 4.0, 5.0, 6.0], "b"), overlay([2.0, 3.0], "c")]
    lines = aligned_group(members, "step", 0.0, 0, 10, "minmax")
    assert lines.steps.tolist() == [1, 2, 3, 4]
    assert lines.mean.tolist() == [2.0, 3.0, 4.0, 6.0]
    assert lines.low[:3].tolist() == [1.0, 2.0, 3.0] and lines.high[:3].tolist() == [3.0, 4.0, 5.0]
    assert np.isnan(lines.low[3]) and lines.count.tolist() == [3, 3, 2, 1]  # one run: no band
    std = aligned_group(members, "step", 0.0, 0, 10, "std")
    assert std.high[0] == pytest.approx(2.0 + np.std([1.0, 3.0, 2.0], ddof=1))
    union, matrix = step_matrix([np.array([1, 3])], [np.array([5.0, 6.0])])
    assert union.tolist() == [1, 3] and matrix.tolist() == [[5.0, 6.0]]


def test_group_figure_draws_members_faint_band_and_mean():
    members = [overlay(np.linspace(0, 1, 50) + shift, name) for shift, name in ((0.0, "a"), (0.2, "b"))]
    figure = build_figure(members[0], [], ChartOptions(), 100, members=members)
    roles = [trace.role for trace in figure.traces]
    assert roles.count("member") == 2 and roles[-1] == "mean" and len(figure.areas) == 1


# -- the band along the series ---------------------------------------------------------------------


def test_spike_band_follows_its_baseline_and_ends_at_todays_band():
    run = load([str(TRL2 / "ppo_value_spike")]).store.runs.popitem()[1]
    tag = "train/loss/value_avg"
    health = HealthEngine().assess(run)
    track = BandTracker().track(run, tag, health.kind)
    warn, critical = track.line("warn_high"), track.line("crit_high")
    assert len(track) == len(run.series[tag])
    assert np.isnan(warn[:20]).all()  # the warm-up never has a band
    now = health.band(tag)
    assert warn[-1] == pytest.approx(now[1]) and critical[-1] == pytest.approx(now[3])
    assert np.nanmax(warn) > 1.2 * np.nanmin(warn)  # not a flat line at today's median
    assert np.allclose(critical[np.isfinite(critical)], 4 * warn[np.isfinite(warn)])  # 20x vs 5x


def test_band_track_is_the_same_fed_live_or_at_once(tmp_path):
    run = load([str(TRL2 / "ppo_value_spike")]).store.runs.popitem()[1]
    tag = "train/loss/value_avg"
    whole = BandTracker().track(run, tag).lines
    live = Run(run.name, run.directory, texts=run.texts)
    tracker = BandTracker()
    source = run.series[tag]
    for start in range(0, len(source), 7):
        live.add_points(
            tag,
            source.steps[start : start + 7],
            source.wall_times[start : start + 7],
            source.values[start : start + 7],
        )
        tracker.track(live, tag)
    assert np.array_equal(tracker.track(live, tag).lines, whole, equal_nan=True)


def test_entropy_band_starts_with_its_early_level_and_rules_can_be_switched_off(tmp_path):
    entropy = [2.0] * 30
    write_run(tmp_path / "r", {"train/policy/entropy_avg": entropy, "train/val/ratio": [1.0] * 30})
    run = load([str(tmp_path)]).store.runs.popitem()[1]
    track = BandTracker().track(run, "train/policy/entropy_avg", "PPO")
    warn, floor = track.line("warn_low"), track.line("crit_low")
    # The early level is known from the first point (cold start): half of it is the warn line, the
    # candidate critical 35 % of it (above the 0.01-nat floor) from the first point on.
    assert warn == pytest.approx(1.0)
    assert floor == pytest.approx(0.7)
    rules = Rules.defaults().merged({"ratio_drift": {"enabled": False}}, "test")
    assert BandTracker(rules).track(run, "train/val/ratio", "PPO") is None
    assert BandTracker().track(run, "train/val/ratio", "PPO").line("warn_high")[0] == pytest.approx(1.05)
