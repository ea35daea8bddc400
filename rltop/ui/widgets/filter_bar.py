"""The ``/`` tag filter: a regular expression, applied as you type, like TensorBoard's filter box."""

from __future__ import annotations

import re

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from rltop.ui.tag_filter import compile_tag_filter


class FilterBar(Horizontal):
    """``/ [regex input] 5 of 31 tags``; Enter keeps the filter, Esc clears it."""

    BINDINGS = [Binding("escape", "clear", "Clear filter", show=True)]

    class Changed(Message):
        """The filter changed (``pattern`` None = show everything)."""

        def __init__(self, text: str, pattern: re.Pattern[str] | None) -> None:
            super().__init__()
            self.text = text
            self.pattern = pattern

    class Closed(Message):
        """The bar was closed (Enter or Esc); focus should go back to the metrics."""

    def compose(self) -> ComposeResult:
        yield Static("/", classes="filter-slash")
        box = Input(placeholder="regex, e.g. ratio|entropy", id="filter-input", select_on_focus=False)
        # Focusable only while open: keys typed anywhere else must never land in a hidden filter.
        box.can_focus = False
        yield box
        yield Static("", id="filter-status")

    @property
    def input(self) -> Input:
        """The text box."""
        return self.query_one("#filter-input", Input)

    def open(self, text: str) -> None:
        """Show the bar with ``text`` in it and focus the input."""
        self.display = True
        box = self.input
        box.can_focus = True
        box.value = text
        box.cursor_position = len(text)
        # At once, not after the keys already queued: what is typed right after "/" is the filter.
        self.screen.set_focus(box)

    def close(self) -> None:
        """Hide the bar; the focus goes back to the metrics (`Closed`).

        The box lets go of the focus at once: a key typed right after Enter (``q``) must reach the
        app, not the hidden box.
        """
        self.display = False
        box = self.input
        box.can_focus = False
        if box.has_focus:
            self.screen.set_focus(None)
        self.post_message(self.Closed())

    def set_status(self, text: str, error: bool = False) -> None:
        """The note right of the input: match count or the regex error."""
        self.query_one("#filter-status", Static).update(Text(text))
        self.set_class(error, "-invalid")

    @on(Input.Changed, "#filter-input")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        try:
            pattern = compile_tag_filter(event.value)
        except re.error as error:
            self.set_status(f"invalid regex: {error}", error=True)
            return  # keep showing the last valid filter
        self.post_message(self.Changed(event.value, pattern))

    @on(Input.Submitted, "#filter-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.close()

    def action_clear(self) -> None:
        """Esc: empty filter, bar closed."""
        self.input.value = ""
        self.post_message(self.Changed("", None))
        self.close()
