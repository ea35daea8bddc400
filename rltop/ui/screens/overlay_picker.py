"""``o`` on the detail screen: tick the runs the chart overlays (Space toggles, Enter or Esc closes).

The ticks are exactly what the chart draws besides the shown run: it opens with the runs drawn now
(the seed group's by default, none for a run without one), and closing hands back the ticked runs.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import SelectionList, Static
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import OptionDoesNotExist

from rltop.view.text.safe import visible

GROUP_NOTE = "  (seed group)"
"""After the name of a run of the shown run's seed group (drawn as the group's mean and band)."""


class TickList(SelectionList[str]):
    """A `SelectionList` whose unticked boxes are empty: Textual tells ticked from unticked by colour
    alone, which ``NO_COLOR`` (and a monochrome terminal) loses."""

    def render_line(self, y: int) -> Strip:
        """The line with the box's ``X`` blanked when the run is not ticked."""
        line = super().render_line(y)
        try:
            selection = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return line
        segments = list(line)
        if selection.value in self.selected or len(segments) < 2:
            return line
        if segments[1].text == ToggleButton.BUTTON_INNER:
            segments[1] = Segment(" " * len(segments[1].text), segments[1].style)
        return Strip(segments, line.cell_length)


class OverlayPicker(ModalScreen[frozenset[str]]):
    """A checklist of the other runs that log the metric; returns the runs ticked."""

    BINDINGS = [
        Binding("enter,escape,o", "done", "Done", priority=True),
        Binding("a", "all(True)", "All"),
        Binding("n", "all(False)", "None"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(
        self,
        shown_label: str,
        choices: list[tuple[str, str]],
        ticked: frozenset[str],
        group: frozenset[str] = frozenset(),
    ) -> None:
        """``choices``: (run, display name) of the other runs; ``ticked``: those drawn now;
        ``group``: the runs of the shown run's seed group."""
        super().__init__(id="overlay-picker")
        self.shown_label = shown_label
        self._choices = choices
        self.list = TickList(
            *[
                (Text(visible(label) + (GROUP_NOTE if run in group else "")), run, run in ticked)
                for run, label in choices
            ],
            id="picker-list",
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Static(Text(f"Runs on the chart besides {visible(self.shown_label)}", style="bold"))
            yield Static(Text("Space ticks or unticks · a all · n none · Enter done"), id="picker-help")
            yield self.list

    def on_mount(self) -> None:
        self.list.focus()

    def ticked(self) -> frozenset[str]:
        """The runs ticked now."""
        return frozenset(self.list.selected)

    def action_all(self, shown: bool) -> None:
        """``a`` / ``n``: tick or untick every run."""
        if shown:
            self.list.select_all()
        else:
            self.list.deselect_all()

    def action_done(self) -> None:
        """Close, handing back the ticked runs."""
        self.dismiss(self.ticked())
