"""The ``/`` tag filter: a regular expression, applied as you type, like TensorBoard's filter box."""

from __future__ import annotations

import re
from collections.abc import Callable

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from rltop.ui.follow_focus import KeyOrigin, redirect_key
from rltop.ui.logic.tag_filter import compile_tag_filter

Pattern = re.Pattern[str] | None
Done = Callable[[str, Pattern], Widget | None]
"""Called when the bar closes with the filter kept (text, pattern); returns the widget to focus."""


class FilterInput(KeyOrigin, Input):
    """The filter's text box, in step with the keys however fast they come.

    Textual's Input types a letter as soon as it gets it, but acts on Enter, Esc or Backspace only
    once the key has gone round to the app's bindings: in a burst ("ratio", Enter, q) the q was
    typed into the box before Enter closed it. Here every key acts at once, in the order of the
    keys, and a key that still arrives once the bar is closed goes on to where the focus is now.
    """

    async def _on_key(self, event: events.Key) -> None:
        # (Textual then calls the _on_key of the classes below in turn, unless this one prevented
        # the default.) has_focus follows only once the Blur event is handled: ask the screen.
        bar = self.parent
        if self.screen.focused is not self:
            redirect_key(self.screen, event, origin=self)
            return
        if not isinstance(bar, FilterBar):
            return
        if event.key in ("enter", "escape"):
            event.stop()
            event.prevent_default()
            bar.close(keep=event.key == "enter")
        elif not event.is_printable:
            # The box's own keys (backspace, arrows, home…): here, in order with the letters.
            for binding in self._bindings.key_to_bindings.get(event.key, ()):
                if await self.app.run_action(binding.action, self):
                    event.stop()
                    event.prevent_default()
                    return


class FilterBar(Horizontal):
    """``/ [regex input] 5 of 31 tags``; Enter keeps the filter, Esc clears it.

    The filter applies as you type (`Changed`); closing calls the screen's ``done`` at once, with
    the final filter, and gives the focus to what it returns, so the keys typed right after
    Enter already act on the filtered cards.
    """

    class Changed(Message):
        """The filter changed (``pattern`` None = show everything)."""

        def __init__(self, text: str, pattern: Pattern) -> None:
            super().__init__()
            self.text = text
            self.pattern = pattern

    BINDINGS = [Binding("escape", "clear", "Clear filter", show=True)]  # (the box acts on it first)

    _done: Done | None = None
    _pattern: Pattern = None
    _status_text: str | None = None  # what the status note shows (None: not set yet)

    def compose(self) -> ComposeResult:
        yield Static("/", classes="filter-slash")
        box = FilterInput(placeholder="regex, e.g. ratio|entropy", id="filter-input", select_on_focus=False)
        # Focusable only while open: keys typed anywhere else must never land in a hidden filter.
        box.can_focus = False
        yield box
        yield Static("", id="filter-status")

    @property
    def input(self) -> Input:
        """The text box."""
        return self.query_one("#filter-input", Input)

    def open(self, text: str, done: Done | None = None) -> None:
        """Show the bar with ``text`` in it and focus the box (at once: what is typed right after
        ``/`` is the filter); ``done`` is called when it closes."""
        self._done = done
        self._pattern = _compile(text)
        self.display = True
        box = self.input
        box.can_focus = True
        box.value = text
        box.cursor_position = len(text)
        self.screen.set_focus(box)

    def close(self, keep: bool = True) -> None:
        """Hide the bar, keeping the filter (Enter) or clearing it (Esc); the box lets go of the
        focus at once, to the widget ``done`` returns."""
        box = self.input
        if not keep:
            box.value = ""
        text = box.value
        pattern = _compile(text) if _valid(text) else self._pattern  # a broken regex: the last good one
        self.display = False
        box.can_focus = False
        done, self._done = self._done, None
        target = done(text if _valid(text) else _source(pattern), pattern) if done is not None else None
        if self.screen.focused is box:
            usable = target is not None and target.is_attached and target.focusable
            self.screen.set_focus(target if usable else None)

    def action_clear(self) -> None:
        """Esc: empty filter, bar closed."""
        self.close(keep=False)

    def set_status(self, text: str, error: bool = False) -> None:
        """The note right of the input: match count or the regex error."""
        if text != self._status_text:  # Static.update lays the screen out again: only on a change
            self._status_text = text
            self.query_one("#filter-status", Static).update(Text(text))
        self.set_class(error, "-invalid")

    @on(Input.Changed, "#filter-input")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        if not self.display:
            return  # closed meanwhile: close() applied the final filter already
        try:
            pattern = compile_tag_filter(event.value)
        except re.error as error:
            self.set_status(f"invalid regex: {error}", error=True)
            return  # keep showing the last valid filter
        self._pattern = pattern
        self.post_message(self.Changed(event.value, pattern))


def _valid(text: str) -> bool:
    try:
        compile_tag_filter(text)
    except re.error:
        return False
    return True


def _compile(text: str) -> Pattern:
    return compile_tag_filter(text) if _valid(text) else None


def _source(pattern: Pattern) -> str:
    return pattern.pattern if pattern is not None else ""
