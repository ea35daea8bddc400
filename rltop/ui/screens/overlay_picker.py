"""``o`` on the detail screen: tick the runs the chart overlays (Space toggles, Enter or Esc closes)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static

from rltop.view.safe_text import visible


class OverlayPicker(ModalScreen[set[str]]):
    """A checklist of the other runs that log the metric; returns the runs left unticked."""

    BINDINGS = [
        Binding("enter,escape,o", "done", "Done", priority=True),
        Binding("a", "all(True)", "All"),
        Binding("n", "all(False)", "None"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, shown_label: str, choices: list[tuple[str, str]], hidden: set[str]) -> None:
        """``choices``: (run, display name) of the other runs; ``hidden``: those unticked now."""
        super().__init__(id="overlay-picker")
        self.shown_label = shown_label
        self._choices = choices
        self._others_hidden = {name for name in hidden if name not in {run for run, _ in choices}}
        self.list = SelectionList[str](
            *[(Text(visible(label)), run, run not in hidden) for run, label in choices], id="picker-list"
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Static(Text(f"Runs on the chart besides {visible(self.shown_label)}", style="bold"))
            yield Static(Text("Space ticks or unticks · a all · n none · Enter done"), id="picker-help")
            yield self.list

    def on_mount(self) -> None:
        self.list.focus()

    def hidden(self) -> set[str]:
        """The runs unticked now (and those hidden earlier that this metric does not have)."""
        ticked = set(self.list.selected)
        return {run for run, _ in self._choices if run not in ticked} | self._others_hidden

    def action_all(self, shown: bool) -> None:
        """``a`` / ``n``: tick or untick every run."""
        if shown:
            self.list.select_all()
        else:
            self.list.deselect_all()

    def action_done(self) -> None:
        """Close, handing back the unticked runs."""
        self.dismiss(self.hidden())
