"""Widgets whose lines nothing changed hand the compositor their last lines (issue 28's CPU goal).

At every frame Textual's compositor asks each widget that overlaps the changed part of the screen
for its lines (`Widget.render_lines`), whether or not any of them changed: each answer costs the
widget's styles-cache bookkeeping (its background through its ancestors, its border titles' styles,
its opacity, the line filters over every line), 30–60 µs a widget in the live dashboard. A live
step changes the header's line and a numbers line in each card, so the changed part spans the
screen, and the twenty-odd containers, group titles and alert lines between them were asked at
every step for lines that had not changed.

`KeptLines` answers from the last answer while nothing it depends on changed: the same crop and
size, no line of the widget marked for repaint (a refresh marks them), its styles cache not cleared
since (its first line is still the same object), the same background and line filters, and no link
under the mouse. Whatever changes a widget's lines goes through one of those, as it must for
Textual's own cache of the lines.
"""

from __future__ import annotations

import os

from textual.geometry import Region
from textual.strip import Strip

KEEP_LINES = os.environ.get("RLTOP_PLAIN_FRAMES", "") != "1"
"""Goal: a frame costs the widgets that changed, not every widget under the changed area (issue 28's
CPU). Off (``RLTOP_PLAIN_FRAMES=1``, read at import): every widget is rendered through Textual's
styles cache at every frame; the frames are the same (``tests/app/test_app_card_redraw.py``)."""


class KeptLines:
    """Mix in before a Textual widget: `render_lines` answers with its last lines while nothing
    that made them changed (see the module's docstring)."""

    _kept_lines: tuple[tuple, Strip | None, list[Strip]] | None = None
    """(what the lines depend on, the styles cache's first line of the crop, the lines)."""

    def render_lines(self, crop: Region) -> list[Strip]:
        """The widget's lines in ``crop`` (the last ones when nothing changed)."""
        if not KEEP_LINES:
            return super().render_lines(crop)  # type: ignore[misc]
        cache = self._styles_cache  # type: ignore[attr-defined]
        link = self.hover_style._link_id if self.auto_links else None  # type: ignore[attr-defined]
        key = (crop, self.region.size, self.background_colors, tuple(self.get_line_filters()), link)  # type: ignore[attr-defined]
        kept = self._kept_lines
        if (
            kept is not None
            and not cache._dirty_lines
            and kept[0] == key
            and kept[1] is cache._cache.get(crop.y)
        ):
            return kept[2]
        lines = super().render_lines(crop)  # type: ignore[misc]
        self._kept_lines = (key, cache._cache.get(crop.y), lines)
        return lines
