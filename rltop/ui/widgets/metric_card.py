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
from textual._compositor import MapGeometry
from textual.binding import Binding
from textual.css.styles import RenderStyles
from textual.dom import DOMNode, NoScreen
from textual.errors import NoWidget
from textual.events import Click
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from rltop.health.findings import Level
from rltop.ui.follow_focus import KeyOrigin
from rltop.ui.kept_styles import KeptComponentStyles
from rltop.ui.line_strips import Line, LineStrips
from rltop.ui.logic.levels import LEVEL_CLASSES, LEVEL_KEYS
from rltop.ui.logic.narrow import NARROW_FIXED, VALUE_WIDTH
from rltop.ui.messages import OpenDetail
from rltop.view.chart.spark import spark_rows
from rltop.view.metric_view import MetricView
from rltop.view.text.cells import cell_len, pad_cells
from rltop.view.text.fit import elide_name
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES, TREND_MARKS, had_badge
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import visible


class MetricCard(KeyOrigin, KeptComponentStyles, Widget, can_focus=True):
    """Draws a `MetricView`; Enter (or a double click) asks for the detail screen."""

    BINDINGS = [Binding("enter", "open", "Detail")]
    # Not COMPONENT_CLASSES: Textual styles every declared component of a widget each time it
    # restyles it (six style passes a card, 360 for a 60-card board at start-up, most of the cost
    # of mounting it), though a card off screen never draws. A card styles a component when it
    # first draws it, and again after each restyle (`notify_style_update`).
    COMPONENTS = frozenset(
        {
            "metric-card--ok",
            "metric-card--warn",
            "metric-card--crit",
            "metric-card--value",
            "metric-card--dim",
            "metric-card--nonfinite",
        }
    )

    def __init__(
        self, model: MetricView, compact: bool = False, name_width: int = 16, label: str | None = None
    ) -> None:
        super().__init__(classes=LEVEL_CLASSES[model.level])
        self.model = model
        self.compact = compact
        self.name_width = name_width
        self.label = model.label if label is None else visible(label)
        """The name as the board fits it to the layout (`rltop.view.names.metric_labels`), safe to print."""
        self._spark_cache: tuple[tuple[int, int], int, np.ndarray] | None = None
        self._line_strips = LineStrips(self)
        self._shown: tuple[tuple[int, int], list[Line]] | None = None
        """(content size, lines) drawn: a new model redraws only the lines that differ."""
        self._strips: dict[int, Strip] = {}
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
        self._forget_lines()
        super().notify_style_update()
        if styled:
            self.refresh()

    @property
    def tag(self) -> str:
        """The full tag this card shows."""
        return self.model.tag

    def update_model(self, model: MetricView) -> None:
        """Show a newer model of the same tag: only the lines whose text changed are redrawn (a new
        point usually changes the numbers line, and the sparkline only when a glyph moves)."""
        previous = self.model
        if model.level != previous.level:
            self.set_class(False, *LEVEL_CLASSES.values())
            self.add_class(LEVEL_CLASSES[model.level])
        self.model = model
        if (model.level, model.mark, model.name) != (previous.level, previous.mark, previous.name):
            self._apply_titles()
        shown = self._shown
        if shown is None:
            return  # not drawn since it was last asked to be: it draws the newest model when shown
        geometry = self._geometry()  # (once: the size and the visibility both come from it)
        size = geometry.region.shrink(self.styles.gutter).size if geometry is not None else Size(0, 0)
        if shown[0] != (size.width, size.height) or not (geometry and geometry.visible_region.area):
            # Drawn at another size, or scrolled out of sight: drawn whole when it is next shown.
            self._forget_lines()
            self.refresh()
            return
        lines = self._build_lines(size.width, size.height)
        self._shown = (shown[0], lines)
        for y, (before, now) in enumerate(zip(shown[1], lines)):
            if before != now:
                self._strips.pop(y, None)
                self.refresh(Region(0, y, size.width, 1))

    def _geometry(self) -> MapGeometry | None:
        """Where the card was at the last screen update (None: not on a screen)."""
        try:
            return self.screen.find_widget(self)
        except (NoScreen, NoWidget):
            return None

    def set_compact(self, compact: bool, name_width: int, label: str | None = None) -> None:
        """Switch between the card and the one-line form; ``label``: the name the board fitted."""
        shown = self.label if label is None else visible(label)
        if (compact, name_width, shown) != (self.compact, self.name_width, self.label):
            self.compact = compact
            self.name_width = name_width
            self.label = shown
            self._forget_lines()
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
        columns = self.model.columns(max(1, width))
        self._spark_cache = (version, width, columns)
        return columns

    # -- drawing ---------------------------------------------------------------------------------
    # The card draws its lines itself (Textual's line API): each line is a list of (text, style)
    # runs, turned into a strip the way Textual turns a Rich Text into strips (same segments, same
    # styles), so a card looks the same; what it saves is the conversion of the whole card at every
    # new point, and the lines that did not change are not redrawn at all.

    def render(self) -> Text:
        """The card or the line as Rich text, for the current size (what `render_line` draws)."""
        size = self.content_size
        lines = self._lines(size.width, size.height)
        parts = [Text.assemble(*((part, style or "") for part, style in runs)) for runs in lines]
        text = Text("\n").join(parts)
        text.no_wrap, text.overflow = True, "crop"
        return text

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the card's content."""
        size = self.content_size
        lines = self._lines(size.width, size.height)  # (forgets the strips of another size)
        strip = self._strips.get(y)
        if strip is None:
            if y < len(lines):
                strip = self._line_strips.strip(lines[y], y)
            else:
                strip = Strip.blank(size.width, self.visual_style.rich_style)
            self._strips[y] = strip
        return strip

    def _lines(self, width: int, height: int) -> list[Line]:
        """The lines for a content area of ``width`` x ``height`` (kept until the model changes)."""
        shown = self._shown
        if shown is None or shown[0] != (width, height):
            self._strips.clear()
            shown = self._shown = ((width, height), self._build_lines(width, height))
        return shown[1]

    def _forget_lines(self) -> None:
        self._shown = None
        self._strips.clear()
        self._line_strips.forget()

    def _build_lines(self, width: int, height: int) -> list[Line]:
        width = max(1, width)
        if self.compact:
            return self._line_form(width)
        return self._card_form(width, max(1, height))

    def _level_style(self) -> Style:
        return self.get_component_rich_style(f"metric-card--{LEVEL_KEYS[self.model.level]}")

    def _card_form(self, width: int, height: int) -> list[Line]:
        stats = self.model.stats
        spark_height = max(1, height - 1)
        if stats.count:
            lines = [
                self._spark(row) for row in spark_rows(self._columns(width), spark_height, self.model.band)
            ]
        else:
            dim = self.get_component_rich_style("metric-card--dim")
            lines = [[("no points yet", dim)] for _ in range(spark_height)]
        return [*lines, self._stats_line(width)]

    def _spark(self, row: str) -> Line:
        """Runs of ordinary glyphs in the level colour, non-finite marks in the alarm colour."""
        level_style = self._level_style()
        nonfinite = self.get_component_rich_style("metric-card--nonfinite")
        line: Line = []
        for index, chunk in enumerate(row.split("×")):
            if index:
                line.append(("×", nonfinite))
            if chunk:
                line.append((chunk, level_style))
        return line

    def _stats_line(self, width: int) -> Line:
        """``1.93 ▲  ×2  min 0.94  max 1.75``, shortened to fit, never cutting a number."""
        stats = self.model.stats
        dim = self.get_component_rich_style("metric-card--dim")
        bad = self.get_component_rich_style("metric-card--nonfinite")
        line = _Line()
        line.add(format_short(stats.last), self.get_component_rich_style("metric-card--value"))
        line.add(" " + TREND_MARKS.get(stats.trend, " "))
        if stats.non_finite:
            for mark in (f"  ×{stats.non_finite} non-finite", f"  ×{stats.non_finite}"):
                if line.length + len(mark) <= width:
                    line.add(mark, bad)
                    break
        if stats.count > 1 and stats.min is not None:
            # The longest form that fits: labelled, then a bare range, then fewer digits.
            for digits in (4, 3, 2):
                low, high = format_short(stats.min, digits), format_short(stats.max, digits)
                labelled = [("  ", None), ("min ", dim), (low, None), ("  max ", dim), (high, None)]
                bare = [("  ", None), (low, None), ("…", dim), (high, None)]
                fits = [runs for runs in (labelled, bare) if line.length + _length(runs) <= width]
                choice = fits[0] if fits else None
                if choice is not None:
                    for part, style in choice:
                        line.add(part, style)
                    break
        return line.runs

    def _line_form(self, width: int) -> list[Line]:
        """``name  ▁▂▃▅▇  1.93 ▲ CRIT`` in aligned columns, padded in cells (wide characters too).

        A name longer than the column (one that cannot be cut: a reward function's) is the first
        of two lines, the values the second, aligned with the other rows.
        """
        stats = self.model.stats
        name_width = max(4, min(self.name_width, width - NARROW_FIXED - 4))
        spark_width = max(0, width - name_width - 1 - NARROW_FIXED)
        lines = []
        line = _Line()
        if self.two_line:
            lines.append([(self.label, None)])
            line.add(" " * name_width)
        else:
            label = self.label if cell_len(self.label) <= name_width else elide_name(self.label, name_width)
            line.add(pad_cells(label, name_width))
        line.add(" ")
        if stats.count and spark_width:
            for part, style in self._spark(
                spark_rows(self._columns(spark_width), 1, self.model.band)[0].ljust(spark_width)
            ):
                line.add(part, style)
        else:
            line.add(" " * spark_width)
        value = format_short(stats.last) if stats.count else "–"
        if stats.non_finite and stats.last is not None and stats.last == stats.last:
            value = f"×{stats.non_finite} {value}" if len(value) + 3 <= VALUE_WIDTH else value
        line.add(" ")
        line.add(value.rjust(VALUE_WIDTH)[-VALUE_WIDTH:], self.get_component_rich_style("metric-card--value"))
        line.add(" ")
        line.add(TREND_MARKS.get(stats.trend, " "))
        line.add(" ")
        level = self.model.level
        if level == Level.OK and self.model.mark > Level.OK:
            # "ok" plus the mark of the episode that was not acknowledged yet (4 cells, like the badge)
            mark = self.get_component_rich_style(f"metric-card--{LEVEL_KEYS[self.model.mark]}")
            line.add("ok", self.get_component_rich_style("metric-card--dim"))
            line.add(f"{LEVEL_ICONS[self.model.mark]} ", mark)
        else:
            quiet = self.get_component_rich_style("metric-card--dim")
            line.add(f"{LEVEL_NAMES[level]:<4}", self._level_style() if level > Level.OK else quiet)
        return [*lines, line.runs]

    def on_resize(self) -> None:
        self._apply_titles()

    def action_open(self) -> None:
        """Enter: open the detail screen."""
        self.post_message(OpenDetail(self.tag))

    def on_click(self, event: Click) -> None:
        self.focus()
        if event.chain >= 2:
            self.action_open()


class _Line:
    """A line being built, with Rich Text's merging: plain text appended next to plain text is one
    run (as one unstyled stretch of a Text is one segment), each styled append a run of its own."""

    __slots__ = ("runs", "length")

    def __init__(self) -> None:
        self.runs: Line = []
        self.length = 0

    def add(self, part: str, style: Style | None = None) -> None:
        """Append ``part`` (nothing for an empty string, as Text.append)."""
        if not part:
            return
        self.length += len(part)
        if style is None and self.runs and self.runs[-1][1] is None:
            self.runs[-1] = (self.runs[-1][0] + part, None)
        else:
            self.runs.append((part, style))


def _length(runs: Line) -> int:
    return sum(len(part) for part, _ in runs)
