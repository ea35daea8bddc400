"""Every run at a glance: how many are in each state, and which one is the worst."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rltop.view.marks import RUN_STATES
from rltop.view.run_view import RunView


def state_counts(runs: Iterable[RunView]) -> list[tuple[str, int]]:
    """(state, number of runs) for each `RunView.state` present, worst first, empty last."""
    states = [run.state for run in runs]
    return [(state, states.count(state)) for state in RUN_STATES if state in states]


def worst_run(runs: Sequence[RunView]) -> RunView | None:
    """The run that needs a look first: worst level, then one with points, then the latest news."""

    def key(run: RunView) -> tuple[int, bool, float, str]:
        moment = max(run.last_point_wall_time or 0.0, run.last_change_time or 0.0)
        return (int(run.level), not run.empty, moment, run.name)

    return max(runs, key=key) if runs else None
