"""``?``: every key, what the colours mean, where the thresholds come from."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = (
    ("↑ ↓ ← → / h j k l", "move between alerts and metrics"),
    ("Enter", "detail chart of the metric (or of the alert's metric)"),
    ("e", "completions at the alert's or cursor's step (Enter on an alert too)"),
    ("Esc", "back; on the dashboard: clear the filter"),
    ("/", "filter tags by regular expression (case-insensitive, like TensorBoard)"),
    ("a", "acknowledge: a critical that is over stays red until you press a on it"),
    ("r", "runs list; [ and ] switch to the previous/next run; a click on the overview shows that run"),
    ("v", "runs overview on/off (one line per run above the alerts)"),
    ("w", "show the worst run and follow the worst run again (the default, --follow worst)"),
    ("c", "chart grid above the cards on/off (terminals of at least 120 x 36)"),
    ("p", "pause / resume screen updates (data keeps arriving)"),
    ("t", "next theme"),
    ("Ctrl+P", "command palette (every action by name; Screenshot saves an SVG here)"),
    ("?", "this help (↓ / PgDn scrolls it)"),
    ("q, Ctrl+C", "quit, from every screen"),
)
"""The dashboard's keys: first, so that a short terminal shows them without scrolling."""

DETAIL_KEYS = (
    ("← → / mouse", "move the cursor (Shift: 10 points); below: every run's stored value there"),
    ("z / Z, [ / ]", "zoom to the last 50/25/10 % and back; zoom in/out around the cursor"),
    ("l / i", "log y (symlog when a value is ≤ 0); outliers in scaling on/off (1st–99th %)"),
    ("o", "tick the runs to overlay"),
    ("g / b", "seed group as mean and band, or its runs; band min–max or ±1 std"),
    ("s / S", "more / less smoothing (TensorBoard's debiased EMA, default 0.6)"),
    ("x", "x-axis step → time since start → wall time (runs aligned by step or by time)"),
    ("n / N", "next / previous metric"),
)
"""The detail chart's own keys (Enter on a metric)."""

LEVELS = (
    ("✖ CRIT", "a rule's critical threshold was crossed: act now"),
    ("▲ WARN", "drifting out of the healthy range: keep an eye on it"),
    ("● ok", "within the rule's thresholds (or no rule applies)"),
    ("×", "non-finite values (NaN/Inf): shown as marks and counted, never plotted"),
)


class HelpScreen(ModalScreen[None]):
    """Keys and colours."""

    BINDINGS = [
        Binding("escape,question_mark", "dismiss(None)", "Close"),
        # A modal screen hides the app's own keys: q must quit here too, as on every screen.
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self) -> None:
        super().__init__(id="help")

    def compose(self) -> ComposeResult:
        keys, detail_keys = _key_table(KEYS), _key_table(DETAIL_KEYS)
        levels = Table.grid(padding=(0, 2))
        levels.add_column(no_wrap=True)
        levels.add_column()
        for badge, meaning in LEVELS:
            levels.add_row(Text(badge), Text(meaning))
        with VerticalScroll(id="help-box"):
            yield Static(Text("rltop: keys", style="bold"))
            yield Static(keys)
            yield Static(Text("\nDetail chart", style="bold"))
            yield Static(detail_keys)
            yield Static(Text("\nHealth levels", style="bold"))
            yield Static(levels)
            yield Static(Text(
                "\nThresholds come from the health rules (defaults, ~/.config/rltop/rules.toml, "
                "--rules FILE). "
                "Mouse: click to focus, double-click to open. Esc closes this help."
            ))


def _key_table(keys: tuple[tuple[str, str], ...]) -> Table:
    """Two columns: the key in bold, what it does."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, meaning in keys:
        table.add_row(Text(key), Text(meaning))
    return table
