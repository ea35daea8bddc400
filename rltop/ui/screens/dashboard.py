"""The default screen: header, runs overview, alert strip, metric board, filter bar and footer.

The app decides what to show (which run, its `RunView`, the header's text) and calls `show_run`,
`show_overview`, `show_header` and `show_waiting`; this screen only lays things out and turns keys
into requests. Under `NARROW_WIDTH` columns it switches to the one-line-per-metric layout; on large
terminals (`rltop.ui.logic.grid_layout`) a grid of real charts of the key values sits above the cards
(``c`` turns it off and on).

Focus is never given to the filter box by itself (it opens only on ``/``), so keys typed before
the first run appears reach the app: ``q`` quits from the waiting screen too.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from rltop.ui.kept_render import KeptLines
from rltop.ui.key_bindings import bindings
from rltop.ui.logic.grid_layout import alert_lines, grid_shape, no_grid_reason
from rltop.ui.logic.header_info import HeaderInfo
from rltop.ui.logic.keys import DASHBOARD_KEYS
from rltop.ui.logic.tag_filter import matches
from rltop.ui.messages import Acknowledge, CursorMovedByUser, FilterChanged, OpenCompletions
from rltop.ui.widgets.alert_item import AlertItem
from rltop.ui.widgets.alert_strip import AlertStrip
from rltop.ui.widgets.chart_grid import ChartGrid, GridPiece
from rltop.ui.widgets.filter_bar import FilterBar
from rltop.ui.widgets.header_bar import HeaderBar
from rltop.ui.widgets.metric_board import MetricBoard
from rltop.ui.widgets.runs_overview import RunsOverview
from rltop.ui.widgets.waiting_panel import WaitingPanel
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import visible

if TYPE_CHECKING:  # run views hold numpy series; this screen paints before numpy is imported
    from rltop.view.fleet import OverviewRow
    from rltop.view.run_view import RunView

NARROW_WIDTH = 70
"""Below this many columns the dashboard shows one line per metric."""
TALL_HEIGHT = 40
"""From this many rows on, wide cards get a two-row sparkline."""
OVERVIEW_SHARE = 5
"""The runs overview takes at most a fifth of the screen's lines (it scrolls to the selected run)."""


class KeptFooter(KeptLines, Footer):
    """The key bar (`KeptLines`: under the changed area at every live step, changed only by keys)."""


class DashboardScreen(KeptLines, Screen):
    """Every run at a glance, the selected one in full."""

    AUTO_FOCUS = None  # never the filter box: it opens on "/" only
    BINDINGS = bindings(DASHBOARD_KEYS)

    def __init__(self, reading: list[str] | None = None) -> None:
        """``reading``: the roots being read, shown from the very first frame."""
        super().__init__(id="dashboard")
        self._reading = reading
        self.filter_text = ""
        self.filter_pattern: re.Pattern[str] | None = None
        self.shown_run: str | None = None
        self.overview_hidden = False
        self._overview_rows: list[OverviewRow] = []
        self._needs_initial_focus = True
        self._automatic_focus = True
        """The focus was placed by rltop, not moved by the user: it follows what matters most."""
        self._layout_size = (0, 0)
        self.grid_hidden = False
        """``c`` turned the chart grid off."""
        self._shown_view: RunView | None = None

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="header")
        yield WaitingPanel(id="waiting")
        yield RunsOverview(id="overview")
        yield AlertStrip(id="alerts")
        yield ChartGrid(id="grid")
        yield MetricBoard(id="board")
        # Hidden from the start, not from on_mount: a preloaded run can be shown before the screen's
        # Mount, and the grid's height counts the filter bar's line while it is displayed.
        filter_bar = FilterBar(id="filter-bar")
        filter_bar.display = False
        yield filter_bar
        yield KeptFooter()

    @property
    def board(self) -> MetricBoard:
        """The metric cards."""
        return self.query_one(MetricBoard)

    @property
    def alerts(self) -> AlertStrip:
        """The alert strip."""
        return self.query_one(AlertStrip)

    @property
    def grid(self) -> ChartGrid:
        """The chart grid (shown on large terminals)."""
        return self.query_one(ChartGrid)

    @property
    def overview(self) -> RunsOverview:
        """The runs overview."""
        return self.query_one(RunsOverview)

    def on_mount(self) -> None:
        # A preloaded store can be shown before this screen is mounted: keep what is shown.
        self.show_overview(self._overview_rows)
        self.grid.display = self._shown_view is not None and self.grid.display
        self._apply_layout(self.app.size.width, self.app.size.height)
        if self._reading is not None:
            self.show_waiting(self._reading, loading=(0, 0))

    def on_resize(self, event: Resize) -> None:
        self._apply_layout(event.size.width, event.size.height)

    def on_screen_resume(self) -> None:
        self._sync_layout()

    def _sync_layout(self) -> None:
        """Re-check the layout against the real size (a resize can arrive before the first mount)."""
        width, height = self.app.size
        if self._layout_size != (width, height):
            self._apply_layout(width, height)

    @property
    def narrow(self) -> bool:
        """True while the one-line-per-metric layout is in use."""
        return self.has_class("-narrow")

    def _apply_layout(self, width: int, height: int) -> None:
        self._layout_size = (width, height)
        narrow = width < NARROW_WIDTH
        self.set_class(narrow, "-narrow")
        self.set_class(not narrow and height >= TALL_HEIGHT, "-tall")
        self.board.set_layout(width, narrow)
        self.overview.set_max_lines(max(2, height // OVERVIEW_SHARE))
        strip = self.alerts
        # Narrow: an expanded alert would fill the pane; every alert stays one line.
        strip.expand_top = not narrow
        strip.apply_expansion()
        footer = self.query_one(Footer)
        footer.show_command_palette = not narrow
        footer.compact = narrow
        if self._shown_view is not None:
            self.call_later(self._show_grid)

    # -- what the app calls ------------------------------------------------------------------------

    def show_header(self, info: HeaderInfo) -> None:
        """Update the header line (a no-op while the screen is not composed, or torn down on exit)."""
        try:
            header = self.query_one(HeaderBar)
        except NoMatches:
            return  # a repaint timer can fire while the app shuts down
        header.show(info)

    def show_overview(self, rows: list[OverviewRow]) -> None:
        """The runs overview: shown with more than one run, unless hidden with ``v``."""
        self._overview_rows = rows
        try:
            overview = self.overview
        except NoMatches:
            return
        overview.show(rows)
        overview.display = len(rows) > 1 and not self.overview_hidden and self.shown_run is not None

    def show_waiting(self, roots: list[str], note: str = "", loading: tuple[int, int] | None = None) -> None:
        """No run to show yet: where rltop looks and what it waits for, or how far the first read got."""
        panel = self.query_one(WaitingPanel)
        if loading is not None:
            panel.show_loading(roots, *loading)
        else:
            panel.show_waiting(roots, note)
        panel.display = True
        self.overview.display = False
        self.alerts.display = False
        self.board.display = False
        self.grid.display = False

    async def show_run(self, run: RunView, calm_text: str, focus_tag: str | None = None) -> None:
        """Show one run's alerts and cards (in place when it is the run already shown)."""
        self._sync_layout()
        # None while the app is closing (a late repaint). query_one: a query of every widget at
        # every repaint cost half a millisecond.
        with contextlib.suppress(NoMatches):
            self.query_one(WaitingPanel).display = False
        self.alerts.display = True
        self.board.display = True
        switched = run.name != self.shown_run
        self.shown_run = run.name
        self.show_overview(self._overview_rows)
        keep = focus_tag if switched else None
        top_before = self._top_alert_key()
        await self.alerts.show(run.alerts, calm_text, run.has_completions)
        self._shown_view = run
        await self._show_grid()
        await self.board.show(run.groups, keep)
        self._show_filter_status()
        if switched:
            self._automatic_focus = keep is None
        if self._needs_initial_focus or (switched and (self.focused is None or self._focus_is_dead())):
            self._needs_initial_focus = False
            self.call_after_refresh(self._initial_focus)
        elif switched and keep is not None and self.board.focused_tag != keep:
            self.call_after_refresh(self._refocus, keep)
        elif self._focus_is_dead():
            self.call_after_refresh(self._initial_focus)
        elif (
            self._automatic_focus
            and isinstance(self.focused, AlertItem)
            and (self._top_alert_key() != top_before)
        ):
            # rltop put the cursor on the worst alert; a worse one arrived: the cursor follows it.
            self.call_after_refresh(self._initial_focus)

    async def _show_grid(self) -> None:
        """The charts of the shown run's key values, when the terminal is large enough."""
        view = self._shown_view
        grid = self.grid
        width, height = self.app.size
        from rltop.view.chart.tags import chart_tags  # the view holds numpy series: loaded by now

        tags = chart_tags(view, lambda tag: matches(self.filter_pattern, tag)) if view is not None else []
        shown = view is not None and not self.grid_hidden
        shape = grid_shape(width, height, len(tags), self._room(view)) if shown else (0, 0, 0)
        if view is None or shape[0] == 0:
            grid.display = False
            return
        pieces = []
        for tag in tags[: shape[0] * shape[1]]:
            metric = view.metric(tag)
            value = format_short(metric.stats.last) if metric.stats.count else "–"
            pieces.append(
                GridPiece(tag, metric.label, value, metric.level, self.app.grid_chart(view.name, tag))
            )
        grid.display = True
        await grid.show(pieces, shape)

    def _room(self, view: RunView) -> int:
        """Lines left below the header, the runs overview and the alerts (and above the footer)."""
        height = self.app.size.height
        overview = self.overview
        used = 1 + 1 + alert_lines(height, len(view.alerts), not self.narrow)  # header, footer, alerts
        if overview.display:
            used += min(len(self._overview_rows), overview.max_lines)
        if self.query_one(FilterBar).display:
            used += 1
        return height - used

    async def action_toggle_grid(self) -> None:
        """``c``: the chart grid off / on. When it is on but cannot be drawn (a small terminal, or the
        alerts and the overview leave too few lines), says why instead of doing nothing."""
        if self.grid_hidden or self.grid.display:
            self.grid_hidden = not self.grid_hidden
            await self._show_grid()
        if self.grid_hidden or self.grid.display:
            return
        width, height = self.app.size
        view = self._shown_view
        reason = "no run to chart yet"
        if view is not None:
            from rltop.view.chart.tags import chart_tags  # the view holds numpy series: loaded by now

            tags = chart_tags(view, lambda tag: matches(self.filter_pattern, tag))
            reason = no_grid_reason(width, height, len(tags), self._room(view)) or reason
        self.notify(reason, timeout=4, markup=False)

    def _top_alert_key(self) -> tuple[str, str] | None:
        top = next((alert for alert in self.alerts.alerts if alert.live), None)
        return top.key if top is not None else None

    def _focus_is_dead(self) -> bool:
        """Focus sits on an alert or card that is no longer shown: keys would go nowhere."""
        focused = self.focused
        if focused is None:
            return False
        if not focused.is_attached:
            return True
        if isinstance(focused, AlertItem):
            return focused not in self.alerts.items
        if self.board in focused.ancestors:  # a card (not imported here: it pulls in numpy)
            return not self.board.holds(focused)
        return False

    def _initial_focus(self) -> None:
        # Wide: the worst live alert (the strip expands it with its advice). Narrow: an expanded
        # alert would fill the screen, so the cursor starts on the metrics.
        if self.narrow:
            if not self.board.focus_first():
                self.alerts.focus_first()
        elif not self.alerts.focus_first():
            self.board.focus_first()

    def _refocus(self, tag: str) -> None:
        if not self.board.focus_tag(tag) and (self.focused is None or self._focus_is_dead()):
            self._initial_focus()

    @property
    def focused_tag(self) -> str | None:
        """The metric under the cursor (a card, or the alert of a metric)."""
        focused = self.focused
        if focused is not None and self.board.holds(focused):
            return focused.tag
        if isinstance(focused, AlertItem):
            return focused.finding.tag
        return None

    # -- keys and messages -------------------------------------------------------------------------

    @on(CursorMovedByUser)
    def _user_moved_cursor(self, event: CursorMovedByUser) -> None:
        """The user moved the cursor: from now on it stays where they put it."""
        event.stop()
        self._automatic_focus = False

    def action_filter(self) -> None:
        """``/``: open the tag filter."""
        before = self.focused
        self.query_one(FilterBar).open(
            self.filter_text, done=lambda text, pattern: self._filter_done(text, pattern, before)
        )

    def _filter_done(
        self, text: str, pattern: re.Pattern[str] | None, before: Widget | None
    ) -> Widget | None:
        """The bar closed: the final filter applies now. The cursor goes back to the card it was on
        if the filter leaves it (or to its alert when the filter was cleared), else to the first
        card left, else to the alerts."""
        self._set_filter(text, pattern)
        if before is not None and before.is_attached:
            if before in self.board.cards and before.display:
                return before
            if isinstance(before, AlertItem) and not text:
                return before
        first = self.board.first_card()
        if first is not None:
            return first
        items = self.alerts.items
        return items[0] if items else None

    async def action_toggle_overview(self) -> None:
        """``v``: hide or show the runs overview (the chart grid takes the lines it frees, or gives
        them back)."""
        self.overview_hidden = not self.overview_hidden
        self.show_overview(self._overview_rows)
        if self._shown_view is not None:
            await self._show_grid()

    def action_completions(self) -> None:
        """``e``: the completions at the focused alert's step (else at the newest logged step)."""
        focused = self.focused
        if isinstance(focused, AlertItem):
            self.post_message(OpenCompletions(focused.finding.step, focused.finding.tag))
        else:
            self.post_message(OpenCompletions(None, self.focused_tag))

    def action_acknowledge(self) -> None:
        """``a``: clear the focused metric's latched criticals that are over (red until seen)."""
        self.post_message(Acknowledge(self.focused_tag))

    def action_clear_filter(self) -> None:
        """Esc on the dashboard: drop the filter."""
        if self.filter_text:
            self._set_filter("", None)

    @on(FilterBar.Changed)
    def _filter_changed(self, event: FilterBar.Changed) -> None:
        self._set_filter(event.text, event.pattern)

    def _set_filter(self, text: str, pattern: re.Pattern[str] | None) -> None:
        self.filter_text = text
        self.filter_pattern = pattern
        self.board.set_filter(pattern)
        self._show_filter_status()
        if self._shown_view is not None:
            self.call_later(self._show_grid)
        self.post_message(FilterChanged(text))  # the header and the detail screen's metric order follow

    def _show_filter_status(self) -> None:
        """``5 of 31 tags`` in the filter bar; on the board, what to do when nothing matches."""
        shown, total = self.board.filter_counts()
        text = self.filter_text
        try:
            self.query_one(FilterBar).set_status(f"{shown} of {total} tags" if text else "")
        except NoMatches:
            return  # the app is shutting down
        empty = f"no tag matches /{visible(text)}/ — Esc clears" if text and total and not shown else ""
        self.board.show_empty_note(empty)

    def visible_tags(self) -> list[str]:
        """The tags of the cards the filter leaves, in display order."""
        return [card.tag for card in self.board.cards if card.display]
