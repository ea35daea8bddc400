"""``?``: every key (from the key table the footer and ``rltop app --help`` use too), what the
colours mean, where the thresholds come from."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rltop.ui.logic.keys import DASHBOARD_KEYS, DETAIL_KEYS, help_rows

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
        keys, detail_keys = _key_table(help_rows(DASHBOARD_KEYS)), _key_table(help_rows(DETAIL_KEYS))
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
            yield Static(
                Text(
                    "\nThresholds come from the health rules (defaults, ~/.config/rltop/rules.toml, "
                    "--rules FILE). "
                    "Mouse: click to focus, double-click to open. Esc closes this help."
                )
            )


def _key_table(keys: list[tuple[str, str]]) -> Table:
    """Two columns: the key in bold, what it does."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, meaning in keys:
        table.add_row(Text(key), Text(meaning))
    return table
