"""A chart's settings: the ones the keys cycle through, shared by the dashboard and the reports.

No numpy here: the dashboard imports this before its first frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

X_MODES = ("step", "relative", "wall")
"""The x axes the ``x`` key cycles through (runs aligned by step, or by time since their start)."""
X_LABELS = {"step": "step", "relative": "time since start", "wall": "wall time"}
DEFAULT_SMOOTHING = 0.6
"""TensorBoard's default smoothing weight."""
SMOOTHING_STEPS = (0.0, 0.6, 0.8, 0.9, 0.95, 0.99)
"""Smoothing weights ``s``/``S`` step through."""
ZOOMS = (None, 0.5, 0.25, 0.1)
"""The zoom levels ``z`` cycles through: everything, then the last half, quarter, tenth of the run."""
BAND_KINDS = ("minmax", "std")
"""How a seed group's band is drawn: from the lowest to the highest run, or the mean ± 1 std."""
BAND_LABELS = {"minmax": "min–max", "std": "±1 std"}


@dataclass
class ChartOptions:
    """How charts are drawn; the detail screen's keys change it, every chart reads it."""

    smoothing: float = DEFAULT_SMOOTHING
    x_mode: str = "step"
    log_y: bool = False
    """Log scale asked for (``l``): log when every value is > 0, else symlog."""
    ignore_outliers: bool = True
    """Scale y to the 1st–99th percentile (TensorBoard's default); clipped points are marked."""
    zoom: float | None = None
    """Show only the last part of the run (a share of the x range), None for all of it."""
    window: tuple[float, float] | None = None
    """An explicit x range (``[``/``]`` around the cursor); wins over ``zoom``."""
    group: bool = True
    """A run of a seed group is drawn with its group: mean line, band, members faint."""
    band: str = "minmax"
    overlays: dict[str, frozenset[str]] = field(default_factory=dict)
    """Shown run -> the other runs ticked in its overlay checklist: exactly what its chart draws
    besides it. A run without an entry draws its seed group (none when it has no group): a chart
    shows the run you are looking at, not every run under the path."""
    fit_all: bool = False
    """The x range spans every run drawn (``f``); by default it is the shown run's own, so a long
    run overlaid never squeezes a short one into a few columns (the longer runs are cut, and the
    chart says so)."""

    def key(self) -> tuple:
        """Everything that changes the picture (for caches)."""
        return (
            self.smoothing,
            self.x_mode,
            self.log_y,
            self.ignore_outliers,
            self.zoom,
            self.window,
            self.group,
            self.band,
            tuple(sorted((run, tuple(sorted(picked))) for run, picked in self.overlays.items())),
            self.fit_all,
        )
