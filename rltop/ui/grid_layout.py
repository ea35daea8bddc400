"""How many charts the dashboard's grid holds at a terminal size, and which metrics they show.

No Textual and no numpy here: the dashboard lays itself out before its first frame.

From `GRID_MIN_WIDTH` x `GRID_MIN_HEIGHT` on, the grid takes up to `GRID_SHARE` of the height
above the cards: as many columns of at least `CHART_MIN_WIDTH` cells as fit, and as many rows of
`CHART_MIN_HEIGHT` as that share holds (120 x 36: 2 charts; 200 x 50: 4 x 2). Which metrics:
`rltop.view.chart_tags` (key values first, then those with warn/critical findings).
"""

from __future__ import annotations

import math

GRID_MIN_WIDTH = 120
GRID_MIN_HEIGHT = 36
CHART_MIN_WIDTH = 44
"""Narrowest chart (border and y labels included): about 60 braille dots of plot."""
CHART_MIN_HEIGHT = 11
CHART_MAX_HEIGHT = 16
GRID_SHARE = 0.45
"""Most of the height the grid takes; the alerts and the cards share the rest."""


def grid_shape(width: int, height: int, available: int) -> tuple[int, int, int]:
    """(columns, rows, row height) of the grid for ``available`` charts; (0, 0, 0): no grid."""
    if width < GRID_MIN_WIDTH or height < GRID_MIN_HEIGHT or available <= 0:
        return 0, 0, 0
    columns = max(1, (width - 2) // CHART_MIN_WIDTH)
    budget = int(height * GRID_SHARE)
    rows = max(1, budget // CHART_MIN_HEIGHT)
    count = min(columns * rows, available)
    rows = math.ceil(count / columns)
    columns = math.ceil(count / rows)  # fewer charts than slots: wider charts, no empty slot
    row_height = min(CHART_MAX_HEIGHT, max(CHART_MIN_HEIGHT, budget // rows))
    return columns, rows, row_height
