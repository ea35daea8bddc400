"""One metric: a bordered card (wide layout) or a single line (narrow layout).

Wide::

    ╭ val/ratio ─────────────────╮
    │ ▁▁▂▅█▇▃▂▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁ │
    │ 1 ─  min 0.94  max 1.75    │
    ╰─────────────────────── CRIT╯

Narrow (one line, columns aligned across rows by the board)::

    val/ratio    ▁▂▃▅▇  1.93 ▲ CRIT

The sparkline comes from the shared spike-preserving downsampler, for the width the card has now;
non-finite points are a mark in the line and a count (`×3`), never a number handed to a renderer.
"""

from __future__ import annotations

import numpy as np
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.css.styles import RenderStyles
from textual.dom import DOMNode
from textual.events import Click
from textual.widget import Widget

from rltop.health.findings import Level
from rltop.model.downsample import sparkline_values
from rltop.ui.follow_focus import KeyOrigin
from rltop.ui.levels import LEVEL_CLASSES, LEVEL_KEYS
from rltop.ui.messages import OpenDetail
from rltop.ui.narrow import NARROW_FIXED, VALUE_WIDTH
from rltop.view.cells import cell_len, pad_cells
from rltop.view.marks import LEVEL_ICONS, LEVEL_NAMES, TREND_MARKS, had_badge
from rltop.view.metric_view import MetricView
from rltop.view.numbers import format_short
from rltop.view.safe_text import visible
from rltop.view.spark import spark_rows
from rltop.view.text_fit import elide_name


class MetricCard(KeyOrigin, Widget, can_focus=True):
    """Draws a `MetricView`; Enter (or a double click) asks for the detail screen."""

    BINDINGS = [Binding("enter", "open", "Detail")]
    # Not COMPONENT_CLASSES: Textual styles every declared component of a widget each time it
    # restyles it (six style passes a card, 360 for a 60-card board at start-up, most of the cost
    # of mounting it), though a card off screen never draws. A card styles a component when it
    # first draws it, and again after each restyle (`notify_style_update`).
    COMPONENTS = frozenset({
        "metric-card--ok",
        "metric-card--warn",
        "metric-card--crit",
        "metric-card--value",
        "metric-card--dim",
        "metric-card--nonfinite",
    })

    def __init__(self, model: MetricView, compact: bool = False, name_width: int = 16,
                 label: str | None = None) -> None:
        super().__init__(classes=LEVEL_CLASSES[model.level])
        self.model = model
        self.compact = compact
        self.name_width = name_width
        self.label = model.label if label is None else visible(label)
        """The name as the board fits it to the layout (`rltop.view.names.metric_labels`), safe to print."""
        self._spark_cache: tuple[tuple[int, int], int, np.ndarray] | None = None
        self._apply_titles()

    def get_component_styles(self, *names: str) -> RenderStyles:
        """A component's styles, styled on first use (as Textual styles declared components)."""
        for name in names:
            if name in self.COMPONENTS and name not in self._component_styles:
                node = DOMNode(classes=name)
                node._attach(self)
                self.app.stylesheet.apply(node, animate=False)
                self._component_styles[name] = node.styles
        return super().get_component_styles(*names)

    def notify_style_update(self) -> None:
        # Restyled (focus, level, theme): the components are styled again when drawn. Textual
        # repaints a widget whose declared components changed; the card repaints on any restyle
        # that drops styled components (a theme may change only the colours the card draws in).
        styled = bool(self._component_styles)
        self._component_styles.clear()
        super().notify_style_update()
        if styled:
            self.refresh()

    @property
    def tag(self) -> str:
        """The full tag this card shows."""
        return self.model.tag

    def update_model(self, model: MetricView) -> None:
        """Show a newer model of the same tag (titles and classes only change with the level)."""
        previous = self.model
        if model.level != previous.level:
            self.set_class(False, *LEVEL_CLASSES.values())
            self.add_class(LEVEL_CLASSES[model.level])
        self.model = model
        if (model.level, model.mark, model.label) != (previous.level, previous.mark, previous.label):
            self._apply_titles()
        if self.region.height:  # off-screen cards repaint when they scroll into view
            self.refresh()

    def set_compact(self, compact: bool, name_width: int, label: str | None = None) -> None:
        """Switch between the card and the one-line form; ``label``: the name the board fitted."""
        shown = self.label if label is None else visible(label)
        if (compact, name_width, shown) != (self.compact, self.name_width, self.label):
            self.compact = compact
            self.name_width = name_width
            self.label = shown
            self._apply_titles()
            self.refresh(layout=True)

    @property
    def two_line(self) -> bool:
        """Narrow and the name longer than the column: the name gets a line of its own."""
        return self.compact and cell_len(self.label) > self.name_width

    def _apply_titles(self) -> None:
        self.set_class(self.two_line, "-two-line")
        if self.compact:
            self.border_title = None
            self.border_subtitle = None
            return
        room = self.outer_size.width - 6  # corners, the spaces around the title, a bit of border
        label = self.label if room <= 0 or cell_len(self.label) <= room else elide_name(self.label, room)
        self.border_title = Text(label)
        level = self.model.level
        if level > Level.OK:
            self.border_subtitle = Text(LEVEL_NAMES[level])
        else:  # back to normal, but an episode nobody acknowledged yet keeps its mark
            self.border_subtitle = Text(had_badge(self.model.mark)) if self.model.mark > Level.OK else None

    def _columns(self, width: int) -> np.ndarray:
        """Sparkline columns for ``width`` cells, cached until the series or the width changes."""
        version = self.model.version
        cache = self._spark_cache
        if cache is not None and cache[0] == version and cache[1] == width:
            return cache[2]
        columns = sparkline_values(self.model.series.values, max(1, width))
        self._spark_cache = (version, width, columns)
        return columns

    def render(self) -> Text:
        """The card or the line, for the current size."""
        width = max(1, self.content_size.width)
        if self.compact:
            return self._render_line(width)
        return self._render_card(width, max(1, self.content_size.height))

    def _level_style(self) -> Style:
        return self.get_component_rich_style(f"metric-card--{LEVEL_KEYS[self.model.level]}")

    def _render_card(self, width: int, height: int) -> Text:
        stats = self.model.stats
        spark_height = max(1, height - 1)
        text = Text(no_wrap=True, overflow="crop")
        if stats.count:
            rows = spark_rows(self._columns(width), spark_height, self.model.band)
            for line in rows:
                self._append_spark(text, line)
                text.append("\n")
        else:
            dim = self.get_component_rich_style("metric-card--dim")
            text.append("no points yet\n" * spark_height, style=dim)
        text.append_text(self._stats_line(width))
        return text

    def _append_spark(self, text: Text, line: str) -> None:
        level_style = self._level_style()
        nonfinite = self.get_component_rich_style("metric-card--nonfinite")
        # Runs of ordinary glyphs in the level colour, non-finite marks in the alarm colour.
        for index, chunk in enumerate(line.split("×")):
            if index:
                text.append("×", style=nonfinite)
            if chunk:
                text.append(chunk, style=level_style)

    def _stats_line(self, width: int) -> Text:
        """``1.93 ▲  ×2  min 0.94  max 1.75``, shortened to fit, never cutting a number."""
        stats = self.model.stats
        dim = self.get_component_rich_style("metric-card--dim")
        bad = self.get_component_rich_style("metric-card--nonfinite")
        line = Text(no_wrap=True, overflow="crop")
        line.append(format_short(stats.last), style=self.get_component_rich_style("metric-card--value"))
        line.append(" " + TREND_MARKS.get(stats.trend, " "))
        if stats.non_finite:
            for mark in (f"  ×{stats.non_finite} non-finite", f"  ×{stats.non_finite}"):
                if len(line) + len(mark) <= width:
                    line.append(mark, style=bad)
                    break
        if stats.count > 1 and stats.min is not None:
            # The longest form that fits: labelled, then a bare range, then fewer digits.
            for digits in (4, 3, 2):
                low, high = format_short(stats.min, digits), format_short(stats.max, digits)
                labelled = Text.assemble("  ", ("min ", dim), low, ("  max ", dim), high)
                bare = Text.assemble("  ", low, ("…", dim), high)
                choice = next((t for t in (labelled, bare) if len(line) + len(t) <= width), None)
                if choice is not None:
                    line.append_text(choice)
                    break
        return line

    def _render_line(self, width: int) -> Text:
        """``name  ▁▂▃▅▇  1.93 ▲ CRIT`` in aligned columns, padded in cells (wide characters too).

        A name longer than the column (one that cannot be cut: a reward function's) is the first
        of two lines, the values the second, aligned with the other rows.
        """
        stats = self.model.stats
        name_width = max(4, min(self.name_width, width - NARROW_FIXED - 4))
        spark_width = max(0, width - name_width - 1 - NARROW_FIXED)
        text = Text(no_wrap=True, overflow="crop")
        if self.two_line:
            text.append(self.label)
            text.append("\n" + " " * name_width)
        else:
            label = self.label if cell_len(self.label) <= name_width else elide_name(self.label, name_width)
            text.append(pad_cells(label, name_width))
        text.append(" ")
        if stats.count and spark_width:
            line = spark_rows(self._columns(spark_width), 1, self.model.band)[0]
            self._append_spark(text, line.ljust(spark_width))
        else:
            text.append(" " * spark_width)
        value = format_short(stats.last) if stats.count else "–"
        if stats.non_finite and stats.last is not None and stats.last == stats.last:
            value = f"×{stats.non_finite} {value}" if len(value) + 3 <= VALUE_WIDTH else value
        text.append(" ")
        text.append(value.rjust(VALUE_WIDTH)[-VALUE_WIDTH:], style=self.get_component_rich_style(
            "metric-card--value"))
        text.append(" ")
        text.append(TREND_MARKS.get(stats.trend, " "))
        text.append(" ")
        level = self.model.level
        if level == Level.OK and self.model.mark > Level.OK:
            # "ok" plus the mark of the episode that was not acknowledged yet (4 cells, like the badge)
            mark = self.get_component_rich_style(f"metric-card--{LEVEL_KEYS[self.model.mark]}")
            text.append("ok", style=self.get_component_rich_style("metric-card--dim"))
            text.append(f"{LEVEL_ICONS[self.model.mark]} ", style=mark)
            return text
        text.append(f"{LEVEL_NAMES[level]:<4}", style=self._level_style() if level > Level.OK else
                    self.get_component_rich_style("metric-card--dim"))
        return text

    def on_resize(self) -> None:
        self._apply_titles()

    def action_open(self) -> None:
        """Enter: open the detail screen."""
        self.post_message(OpenDetail(self.tag))

    def on_click(self, event: Click) -> None:
        self.focus()
        if event.chain >= 2:
            self.action_open()
