"""How many charts the dashboard's grid holds at a terminal size, and which metrics they show.

No Textual and no numpy here: the dashboard lays itself out before its first frame.

From `GRID_MIN_WIDTH` x `GRID_MIN_HEIGHT` on, the grid takes up to `GRID_SHARE` of the height
above the cards: as many columns of at least `CHART_MIN_WIDTH` cells as fit, and as many rows of
`CHART_MIN_HEIGHT` as that share holds (120 x 36: 2 charts; 200 x 50: 4 x 2). Which metrics:
`rltop.view.chart.tags` (key values first, then those with warn/critical findings).
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
CARDS_MIN_HEIGHT = 7
"""Lines left to the cards below the grid (a group title and a row of cards)."""
ALERT_SHARE = 0.33
"""The alert strip's largest share of the height (``AlertStrip { max-height: 33% }`` in app.tcss)."""
EXPANDED_ALERT_LINES = 4
"""Extra lines of the expanded top alert (its whole message and the advice), about."""


def alert_lines(height: int, alerts: int, expanded: bool) -> int:
    """Lines the alert strip takes for ``alerts`` alerts (one line saying all is calm for none).

    Computed from the content, not read off the laid-out screen, so the grid's size never depends
    on when a layout pass happened (the same screen always gets the same grid).
    """
    lines = max(1, alerts) + (EXPANDED_ALERT_LINES if expanded and alerts else 0)
    return min(lines, int(height * ALERT_SHARE))


def grid_shape(width: int, height: int, available: int, room: int | None = None) -> tuple[int, int, int]:
    """(columns, rows, row height) of the grid for ``available`` charts; (0, 0, 0): no grid.

    ``room``: the lines the header, the overview and the alerts leave; the grid leaves
    `CARDS_MIN_HEIGHT` of them to the cards, and is not shown when a chart would not fit.
    """
    if width < GRID_MIN_WIDTH or height < GRID_MIN_HEIGHT or available <= 0:
        return 0, 0, 0
    columns = max(1, (width - 2) // CHART_MIN_WIDTH)
    budget = int(height * GRID_SHARE)
    if room is not None:
        budget = min(budget, room - CARDS_MIN_HEIGHT)
        if budget < CHART_MIN_HEIGHT:
            return 0, 0, 0
    rows = max(1, budget // CHART_MIN_HEIGHT)
    count = min(columns * rows, available)
    rows = math.ceil(count / columns)
    columns = math.ceil(count / rows)  # fewer charts than slots: wider charts, no empty slot
    row_height = min(CHART_MAX_HEIGHT, max(CHART_MIN_HEIGHT, budget // rows))
    return columns, rows, row_height


def no_grid_reason(width: int, height: int, available: int, room: int) -> str | None:
    """Why `grid_shape` draws no chart at this size (None when it draws some): said when ``c`` asks."""
    if width < GRID_MIN_WIDTH or height < GRID_MIN_HEIGHT:
        return (
            f"charts need a terminal of at least {GRID_MIN_WIDTH} × {GRID_MIN_HEIGHT} "
            f"(this one: {width} × {height})"
        )
    if available <= 0:
        return "no metric to chart (the filter leaves none)"
    budget = min(int(height * GRID_SHARE), room - CARDS_MIN_HEIGHT)
    if budget < CHART_MIN_HEIGHT:
        return (
            f"no room for charts: the header, the runs overview and the alerts leave {max(room, 0)} of "
            f"{height} lines, and a row of charts takes {CHART_MIN_HEIGHT} plus {CARDS_MIN_HEIGHT} for "
            "the cards (v hides the overview)"
        )
    return None
