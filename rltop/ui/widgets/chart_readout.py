"""The line under the detail chart: the cursor's step and time, and every overlaid run's value there.

::

    ▏step 96 · 2026-12-01 11:21:13, 24 s in   ● grpo_seed_1 0.2396   ● grpo_seed_2 0.4688   mean 0.33 ± 0.12

Values are the exact stored ones (`rltop.view.chart.readout`); a run without a point at that very
step shows its last point before it and that point's step. In a seed group the mean ± std (n − 1)
of the members' stored values at that step follows.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from rich.color import Color
from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from rltop.view.chart.readout import Readout
from rltop.view.text.fit import fit_path
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import visible

NAME_WIDTH = 24
"""Longest run name in the readout (longer ones are shortened, leading parts first)."""


class ChartReadout(Static):
    """Shows a `Readout` (or what to press when there is none)."""

    COMPONENT_CLASSES = {"chart-readout--label", "chart-readout--dim"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.readout: Readout | None = None
        """What the line shows now."""

    def show(
        self,
        readout: Readout | None,
        palette: Mapping[str, tuple[int, int, int]],
        mode: str,
        group: set[str] | None = None,
    ) -> None:
        """Draw ``readout``; ``group``: the runs of the seed group drawn as a mean (their mean follows)."""
        self.readout = readout
        dim = self.get_component_rich_style("chart-readout--dim")
        label = self.get_component_rich_style("chart-readout--label")
        text = Text(no_wrap=False, overflow="fold")
        if readout is None:
            text.append("← → move the cursor · click a point", style=dim)
            self.update(text)
            return
        text.append("▏step ", style=label)
        text.append(str(readout.step))
        text.append(f" · {readout.time_text}", style=dim)
        members = []
        for entry in readout.entries:
            rgb = palette.get(entry.color)
            text.append("   ")
            text.append("● ", style=Style(color=Color.from_rgb(*rgb)) if rgb else Style())
            text.append(fit_path(visible(entry.label), NAME_WIDTH) + " ", style=dim)
            text.append(entry.text, style="bold")
            if entry.step is not None and (not entry.exact or mode != "step"):
                text.append(f" (step {entry.step})", style=dim)
            if group is not None and entry.run in group and entry.exact and entry.value is not None:
                members.append(entry.value)
        finite = np.array([value for value in members if np.isfinite(value)])
        if finite.size >= 2:
            text.append("   mean ", style=label)
            mean, std = float(finite.mean()), float(finite.std(ddof=1))
            text.append(f"{format_short(mean)} ± {format_short(std, 3)}")
            text.append(f" ({finite.size} runs)", style=dim)
        self.update(text)
