"""Helpers for the health tests: write synthetic runs with a real tensorboardX SummaryWriter, judge them."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from helpers.paths import FIXTURES
from rltop.health.engine import HealthEngine, RunHealth, assess_store
from rltop.health.findings import Finding, Level
from rltop.health.settings import Rules
from rltop.ingest.follow.loader import load

# The copied real TRL runs (what conftest's trl_dir fixture points at), for module-scoped fixtures.
TRL = FIXTURES / "trl"
WALL_START = 1_800_000_000.0
GAP_S = 2.0  # seconds between two steps of a synthetic run


def write_run(
    root: Path,
    name: str,
    series: Mapping[str, Sequence[float] | Mapping[int, float]],
    config: Mapping[str, object] | None = None,
) -> Path:
    """Write one run directory under ``root`` with tensorboardX, as transformers' callback would.

    ``series`` maps a tag to its values at steps 1..N (a sequence) or to {step: value}. ``config``
    becomes the ``args/text_summary`` JSON. Wall times advance GAP_S seconds per step.
    """
    from tensorboardX import SummaryWriter

    directory = root / name
    writer = SummaryWriter(str(directory))
    try:
        if config is not None:
            writer.add_text("args", json.dumps(config), 0, walltime=WALL_START)
        points: list[tuple[int, str, float]] = []
        for tag, values in series.items():
            items = values.items() if isinstance(values, Mapping) else enumerate(values, start=1)
            points.extend((int(step), tag, float(value)) for step, value in items)
        for step, tag, value in sorted(points, key=lambda point: point[0]):
            writer.add_scalar(tag, value, step, walltime=WALL_START + GAP_S * step)
    finally:
        writer.close()
    return directory


def judge(
    root: Path, rules: Rules | None = None, now: float | None = None, name: str | None = None
) -> RunHealth:
    """Load every run under ``root`` and return the verdict on ``name`` (or the only run)."""
    result = load([str(root)])
    verdicts = assess_store(result.store, rules, now)
    if name is None:
        (only,) = verdicts.values()
        return only
    return verdicts[name]


def load_run(root: Path, name: str):
    """The `Run` called ``name`` loaded from ``root`` (for engine-level tests)."""
    return load([str(root)]).store.runs[name]


def rule_findings(health: RunHealth, rule: str, tag: str | None = None) -> list[Finding]:
    """The findings of one rule (optionally on one tag)."""
    return [f for f in health.findings if f.rule == rule and (tag is None or f.tag == tag)]


def worst(findings: Sequence[Finding]) -> Level:
    """Worst level among findings (OK when none)."""
    return max((f.level for f in findings), default=Level.OK)


def fresh_engine(rules: Rules | None = None) -> HealthEngine:
    """A new engine with the built-in thresholds (or ``rules``)."""
    return HealthEngine(rules)


Changes = dict[tuple[str, str], list[tuple[int, Level]]]  # (rule, tag) -> [(step, level it changed to)]


def replay(path: Path, rules: Rules | None = None) -> tuple[Changes, RunHealth]:
    """Judge the one run under ``path`` as a live dashboard would, one logged step at a time.

    Returns, per (rule, tag) of every finding that ever appeared, the steps where its level changed
    (step, new level), and the verdict at the end. Each step's points are appended to a fresh run
    and the engine judges them incrementally, so a level is reported at the step it would have
    reached the screen.
    """
    from rltop.model.run import Run
    from rltop.model.series import Series

    (full,) = load([str(path)]).store.runs.values()
    run = Run(name=full.name, directory=full.directory, texts=full.texts)
    run.completions = full.completions
    engine = HealthEngine(rules)
    steps = sorted({int(step) for series in full.series.values() for step in series.steps})
    changes: Changes = {}
    levels: dict[tuple[str, str], Level] = {}
    health = engine.assess(run)
    for step in steps:
        for tag, series in full.series.items():
            have = len(run.series[tag]) if tag in run.series else 0
            upto = int((series.steps <= step).sum())
            if upto > have:
                points = series.points()
                run.series.setdefault(tag, Series(tag)).append(
                    points.steps[have:upto], points.wall_times[have:upto], points.values[have:upto]
                )
        health = engine.assess(run)
        now = {(f.rule, f.tag): Level(f.level) for f in health.findings}
        for key in now.keys() | levels.keys():
            if now.get(key, Level.OK) != levels.get(key, Level.OK):
                changes.setdefault(key, []).append((step, now.get(key, Level.OK)))
        levels = now
    return changes, health


@functools.cache
def replay_fixture(path: Path) -> tuple[Changes, RunHealth]:
    """`replay` of a copied fixture run with the built-in rules, once per session: several tests
    look at the same replay. The result is shared: read it, never change it."""
    assert path.is_relative_to(FIXTURES), path  # (a fixture never changes during a session)
    return replay(path)


def first_step_at(changes: Changes, rule: str, tag: str, level: Level) -> int | None:
    """The first step at which (rule, tag) reached ``level`` or worse (None: never)."""
    return next((step for step, reached in changes.get((rule, tag), []) if reached >= level), None)
