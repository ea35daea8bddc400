"""Every key of the dashboard and the detail chart, in one table: the bindings (and so the footer),
the ``?`` help and ``rltop app --help`` are all made from it, so they cannot disagree.

No Textual here: ``rltop --help`` lists the keys without loading the screen library.
`rltop.ui.key_bindings` turns the rows into Textual bindings.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    """One binding, and how the help writes it."""

    keys: str
    """Textual key names, comma-separated (``up,k``)."""
    action: str
    """The Textual action (``cursor(-1)``); "" for a row that only documents keys bound elsewhere."""
    label: str = ""
    """The footer's word for it."""
    show: bool = False
    """Listed in the footer (most important first: a 40-column pane shows only the first few)."""
    display: str | None = None
    """How the footer writes the key (``?``, ``←→``)."""
    help: str = ""
    """What ``?`` and ``--help`` say it does; "" for a binding that another row already explains."""
    help_keys: str = ""
    """How ``?`` and ``--help`` write the key (default: the key names)."""
    scope: str = "screen"
    """"app" (bound on the app: every screen), "screen" (bound on the table's screen) or "widget"
    (bound on the focused card or alert, documented here)."""
    priority: bool = False

    @property
    def shown_keys(self) -> str:
        """The key as the help writes it."""
        return self.help_keys or self.display or self.keys.replace(",", " / ")


# fmt: off
DASHBOARD_KEYS: tuple[Key, ...] = (
    Key("question_mark", "help", "Help", True, "?", "this help (↓ / PgDn scrolls it)", "?", "app"),
    Key("q", "quit", "Quit", True, help="quit, from every screen", help_keys="q, Ctrl+C", scope="app"),
    Key("ctrl+c", "quit", "Quit", scope="app", priority=True),
    Key("", "", help="move between alerts and metrics", help_keys="↑ ↓ ← → / h j k l", scope="widget"),
    Key("", "", help="detail chart of the metric (or of the alert's metric)", help_keys="Enter",
        scope="widget"),
    Key("slash", "filter", "Filter", True, "/",
        "filter tags by regular expression (case-insensitive, like TensorBoard)"),
    Key("r", "runs", "Runs", True, help="runs list; [ and ] switch to the previous/next run; a click on "
        "the overview shows that run", scope="app"),
    Key("p", "pause", "Pause", True, help="pause / resume screen updates (data keeps arriving)",
        scope="app"),
    Key("t", "next_theme", "Theme", True, help="next theme", scope="app"),
    Key("e", "completions", "Completions",
        help="completions at the alert's or cursor's step (Enter on an alert too); says so when the "
        "run logged none"),
    Key("escape", "clear_filter", "Clear filter", help="back; on the dashboard: clear the filter",
        help_keys="Esc"),
    Key("a", "acknowledge", "Acknowledge", help="acknowledge: a critical that is over stays red until "
        "you press a on it"),
    Key("v", "toggle_overview", "Overview", help="runs overview on/off (one line per run above the "
        "alerts)"),
    Key("w", "app.follow_worst", "Worst run", help="show the worst run and follow the worst run again "
        "(the default, --follow worst)"),
    Key("left_square_bracket", "app.cycle_run(-1)", "Prev run", display="["),
    Key("right_square_bracket", "app.cycle_run(1)", "Next run", display="]"),
    Key("d", "config_diff", "Diff", help="compare the runs: the settings that differ with each run's "
        "verdict, and which difference goes with the failure (also on the runs list)", scope="app"),
    Key("b", "group_by", "Group by", help="group the runs overview by a setting that differs (each press: "
        "the next one, then off), each group with its worst level; seed groups stay together",
        scope="app"),
    Key("c", "toggle_grid", "Charts", help="chart grid above the cards on/off (terminals of at least "
        "120 x 36; says why when there is no room)"),
    Key("", "", help="command palette (every action by name; Screenshot saves an SVG here)",
        help_keys="Ctrl+P", scope="widget"),
)
"""The dashboard's keys (and the app's, which work on every screen), in help order."""

DETAIL_KEYS: tuple[Key, ...] = (
    Key("escape", "app.pop_screen", "Back", True),
    Key("left", "cursor(-1)", "Cursor", True, "←→",
        "move the cursor (Shift: 10 points; Home/End; the mouse); below: every run's stored value there",
        "← → / mouse"),
    Key("right", "cursor(1)", "Cursor"),
    Key("shift+left", "cursor(-10)"),
    Key("shift+right", "cursor(10)"),
    Key("home", "cursor_end(-1)"),
    Key("end", "cursor_end(1)"),
    Key("z", "zoom(1)", "Zoom", True, help="zoom to the last 50/25/10 % and back; zoom in/out around "
        "the cursor", help_keys="z / Z, [ / ]"),
    Key("Z", "zoom(-1)", "Zoom out"),
    Key("left_square_bracket", "zoom_cursor(0.5)", "Zoom in", display="["),
    Key("right_square_bracket", "zoom_cursor(2)", "Zoom out", display="]"),
    Key("l", "log_y", "Log y", True, help="log y (symlog when a value is ≤ 0); outliers in scaling "
        "on/off (1st–99th %)", help_keys="l / i"),
    Key("i", "outliers", "Outliers"),
    Key("o", "pick_runs", "Overlay", True, help="tick the runs to draw besides this one (its seed group "
        "is ticked until you change it; the ticks are what is drawn)"),
    Key("f", "fit", "Fit x", help="x range of this run (longer runs cut, said on the chart) or of "
        "every run drawn"),
    Key("g", "group", "Group", help="seed group as mean and band, or its runs; band min–max or ±1 std",
        help_keys="g / b"),
    Key("b", "band", "Band"),
    Key("s", "smoothing(1)", "Smoothing", True, help="more / less smoothing (TensorBoard's debiased "
        "EMA, default 0.6)", help_keys="s / S"),
    Key("S", "smoothing(-1)", "Less smoothing"),
    Key("x", "x_axis", "X axis", True, help="x-axis step → time since start → wall time (runs aligned "
        "by step or by time)"),
    Key("e", "completions", "Completions", help="completions at the cursor's step"),
    Key("n", "step_metric(1)", "Next", True, help="next / previous metric", help_keys="n / N"),
    Key("N", "step_metric(-1)", "Previous"),
    Key("up,k", "scroll_info(-1)", "Scroll up", help="scroll the explanation below the chart",
        help_keys="↑ ↓ / PgUp PgDn"),
    Key("down,j", "scroll_info(1)", "Scroll down"),
    Key("pageup", "scroll_info(-5)"),
    Key("pagedown", "scroll_info(5)"),
)
"""The detail chart's own keys (Enter on a metric), in footer and help order."""
# fmt: on


def help_rows(table: tuple[Key, ...]) -> list[tuple[str, str]]:
    """(key as written, what it does) of every row that has something to say."""
    return [(key.shown_keys, key.help) for key in table if key.help]


def keys_text(width: int = 100) -> str:
    """The keys of both tables as plain text for ``rltop app --help``."""
    lines = []
    for title, table in (
        ("keys (dashboard; ? in the app shows them too):", DASHBOARD_KEYS),
        ("keys of the detail chart (Enter on a metric):", DETAIL_KEYS),
    ):
        rows = help_rows(table)
        column = max(len(shown) for shown, _ in rows) + 2
        lines.append(title)
        for shown, meaning in rows:
            wrapped = textwrap.wrap(meaning, max(20, width - column - 2))
            lines.append(f"  {shown.ljust(column)}{wrapped[0]}")
            lines += [" " * (column + 2) + more for more in wrapped[1:]]
        lines.append("")
    return "\n".join(lines)
