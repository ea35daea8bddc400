"""Runs compared: the config diff with each run's verdict beside it, and the one-line summary.

Every front end (the text, Markdown, JSON and HTML snapshots, ``rltop diff``, the dashboard's
diff screen) draws the same `Comparison`: a table of runs (rows) by differing settings (columns),
each row with the run's verdict (``✖ CRIT entropy collapse``), and under it the settings folded
away and the line of `rltop.view.compare.split` when the data shows a split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rltop.health.findings import Level
from rltop.view.compare.diff import MISSING, ConfigDiff, build_config_diff
from rltop.view.compare.split import Split, find_split, rule_level
from rltop.view.config import config_value
from rltop.view.run_view import RunView
from rltop.view.seed_groups import SeedGroup
from rltop.view.text.cells import cell_len, cut_cells, cut_cells_left
from rltop.view.text.fit import cut_at_word, fit_paths
from rltop.view.text.humanize import plural
from rltop.view.text.marks import EMPTY_ICON, LEVEL_ICONS, LEVEL_NAMES
from rltop.view.text.safe import visible

UNSET = "–"
"""A setting a run's config lacks (another trainer's option)."""
RUN_WIDTH = 32
"""At most this many cells for a run's name in the table."""
VERDICT_WIDTH = 30
MIN_VERDICT = 8
"""A verdict is never cut below its badge and a word (``✖ CRIT …``)."""
CELL_WIDTH = 24
"""At most this many cells for a setting's name or value (a long list is cut, JSON has it whole)."""
GAP = 2


@dataclass(frozen=True)
class DiffTable:
    """The comparison as a table of text cells, fitted to a width."""

    header: list[str]
    rows: list[list[str]]
    widths: list[int]
    levels: list[Level | None]
    """Each row's run level (None: empty run), for the renderer's colours."""
    left_out: list[str]
    """Settings that differ but did not fit the width."""


@dataclass
class Comparison:
    """The runs compared: diff, verdicts and summary."""

    diff: ConfigDiff
    views: dict[str, RunView]
    split: Split | None

    @property
    def summary(self) -> str | None:
        """The one line of what goes with the failure (None when the data shows no clean split)."""
        return self.split.sentence if self.split is not None else None

    def no_split(self) -> str:
        """Why there is no summary line ("" for a seed group, whose runs are one experiment)."""
        if self.split is not None or self.diff.seed_group is not None:
            return ""
        states = {run.state for run in self.runs}
        if len(states) == 1:
            return f"Every run is {states.pop()}: no difference to explain."
        return "No setting splits the failing runs from the healthy ones cleanly."

    @property
    def runs(self) -> list[RunView]:
        """The runs of the table, in its order (runs without a config are not in it)."""
        return [self.views[name] for name in self.diff.runs if name in self.views]

    def verdict(self, name: str) -> str:
        """``✖ CRIT entropy collapse``, ``● ok``, ``○ empty``: a run's level and what led to it."""
        view = self.views[name]
        if view.empty:
            return f"{EMPTY_ICON} empty"
        badge = f"{LEVEL_ICONS[view.level]} {LEVEL_NAMES[view.level]}"
        leading = _leading_titles(view)
        if not leading:
            return badge
        more = f" +{len(leading) - 1}" if len(leading) > 1 else ""
        return f"{badge} {visible(leading[0])}{more}"

    def cell(self, name: str, key: str) -> str:
        """A run's value of a differing setting, as the command line writes it (``–``: not set)."""
        value = self.diff.values(key).get(name, MISSING)
        return UNSET if value is MISSING else config_value(value)

    def folded(self) -> str:
        """``189 settings equal (folded) · ignored: output_dir``: what the table leaves out."""
        parts = [f"{plural(self.diff.equal, 'setting')} equal in every run (folded)"]
        if self.diff.ignored:
            parts.append(
                "ignored (they name the run): " + ", ".join(visible(key) for key in self.diff.ignored)
            )
        if self.diff.without_config:
            names = ", ".join(
                self.views[name].label if name in self.views else visible(name)
                for name in self.diff.without_config
            )
            parts.append(f"no config logged: {names}")
        return " · ".join(parts)

    def headline(self) -> str:
        """``5 runs · 1 setting differs: learning_rate``, or what the runs are when none differs."""
        count = len(self.diff.runs)
        group = self.diff.seed_group
        if group is not None:
            return (
                f"{plural(count, 'run')} differ only in their seed: seed group {visible(group.name)} "
                f"(seeds {', '.join(visible(seed) for seed in group.seeds)}), "
                f"worst level {_worst(self.runs)}"
            )
        if count < 2:
            return f"{plural(count, 'run')} with a config: nothing to compare"
        rows = self.diff.rows
        if not rows:
            return f"{plural(count, 'run')} · the same config"
        keys = ", ".join(visible(row.key) for row in rows[:6]) + (" …" if len(rows) > 6 else "")
        verb = "differs" if len(rows) == 1 else "differ"
        partial = sum(not row.everywhere for row in rows)
        some = f" ({partial} set in only some runs)" if partial else ""
        return f"{plural(count, 'run')} · {plural(len(rows), 'setting')} {verb}{some}: {keys}"

    def table(self, width: int | None = None, scroll: bool = False) -> DiffTable:
        """Runs (rows) by run, verdict and each differing setting (columns).

        ``width``: the cells to fit; the verdict is shortened (to `MIN_VERDICT` at least) so that the
        first setting fits beside it, and the settings that do not fit are left out and listed, unless
        ``scroll`` (the table scrolls sideways: every setting is a column). None: nothing is cut."""
        runs = self.runs
        settings = [
            (
                _fit_key(visible(row.key)),
                [cut_cells_end(self.cell(run.name, row.key), CELL_WIDTH) for run in runs],
            )
            for row in self.diff.rows
        ]
        setting_widths = [max(cell_len(cell) for cell in [title, *cells]) for title, cells in settings]
        run_width = RUN_WIDTH if width is None else max(8, min(RUN_WIDTH, width // 3))
        labels = fit_paths([run.label for run in runs], run_width)
        run_cells = [labels[run.label] for run in runs]
        run_width = max(cell_len(cell) for cell in ["run", *run_cells])
        verdict_width = VERDICT_WIDTH
        if width is not None:
            first = GAP + setting_widths[0] if setting_widths else 0
            verdict_width = max(MIN_VERDICT, min(VERDICT_WIDTH, width - run_width - GAP - first))
        verdicts = [cut_at_word(self.verdict(run.name), verdict_width) for run in runs]
        header, columns = ["run", "verdict"], [run_cells, verdicts]
        widths = [run_width, max(cell_len(cell) for cell in ["verdict", *verdicts])]
        used = sum(widths) + GAP
        left_out: list[str] = []
        for row, (title, cells), cell_width in zip(self.diff.rows, settings, setting_widths):
            if width is not None and not scroll and (left_out or used + GAP + cell_width > width):
                left_out.append(row.key)
                continue
            header.append(title)
            columns.append(cells)
            widths.append(cell_width)
            used += GAP + cell_width
        rows = [[column[index] for column in columns] for index in range(len(runs))]
        levels = [None if run.empty else run.level for run in runs]
        return DiffTable(header, rows, widths, levels, left_out)

    def as_json(self) -> dict[str, dict[str, Any]]:
        """``config_diff``: setting -> run -> value, for the runs that have it."""
        return {row.key: self.diff.values(row.key) for row in self.diff.rows}


def _fit_key(key: str) -> str:
    """A setting's name in a column title: its end when too long (veRL's dotted keys end in the
    part that says what they are: ``…actor.optim.lr``)."""
    return key if cell_len(key) <= CELL_WIDTH else "…" + cut_cells_left(key, CELL_WIDTH - 1)


def cut_cells_end(text: str, cells: int) -> str:
    """``text`` in at most ``cells`` cells, ``…`` at the end when cut."""
    return text if cell_len(text) <= cells else cut_cells(text, cells - 1) + "…"


def _leading_titles(view: RunView) -> list[str]:
    """The titles of the rules at the run's level, most severe stage first."""
    if view.level == Level.OK:
        return []
    rules = sorted(
        {f.rule: f for f in view.findings if rule_level(view, f.rule) == view.level}.values(),
        key=lambda f: (f.stage, f.first_step if f.first_step is not None else 1 << 62),
    )
    return [f.title or f.rule for f in rules]


def _worst(runs: Sequence[RunView]) -> str:
    judged = [run.level for run in runs if not run.empty]
    return LEVEL_NAMES[max(judged)] if judged else "empty"


def compare_runs(
    views: Sequence[RunView],
    configs: Mapping[str, Mapping[str, Any] | None],
    seed_groups: Sequence[SeedGroup] = (),
) -> Comparison:
    """The comparison of these runs (``configs``: run name -> its full config, `Run.config`)."""
    names = [view.name for view in views]
    diff = build_config_diff({name: configs.get(name) for name in names}, seed_groups, names)
    by_name = {view.name: view for view in views}
    return Comparison(diff, by_name, find_split(diff, views))
