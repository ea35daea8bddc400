"""Keys that were on their way when the focus moved on go where the focus is now.

Textual hands each key to the widget focused at that moment, into that widget's own queue; the
key then bubbles up to the app, which looks up its binding along the widgets focused *then*. In a
burst (key auto-repeat, a quick ``/kl`` + Enter, keys typed while the screen is busy) several keys
are queued for one widget before the first is handled, and the first may move the focus: ``/``
opens the filter. The letters behind it then reached the app from the card they were queued for,
and were lost (the filter box never saw them); a ``q`` typed right after Enter landed in the
hidden box.

`KeyOrigin` marks each key with the widget it was handed to; `redirect_key` (called by the app
before it looks up a binding) sends a key whose widget no longer has the focus on to the widget
that has it now, or to the screen when nothing has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.widgets import Input

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import Widget

_ORIGIN = "_rltop_key_origin"


class KeyOrigin:
    """Mix in before a widget class (``class MetricCard(KeyOrigin, Widget, can_focus=True)``).

    A plain mixin, not a Widget: Textual gathers CSS and component classes along the widget classes.
    Textual calls the ``_on_key`` of every class along the MRO in turn, so this one only marks the
    key and the widget's own handling goes on.
    """

    def _on_key(self, event: events.Key) -> None:
        if not hasattr(event, _ORIGIN):
            setattr(event, _ORIGIN, self)


def redirect_key(screen: Screen, event: events.Key, origin: Widget | None = None) -> bool:
    """Send ``event`` on to the focused widget if the widget it was handed to (``origin``, else the
    one `KeyOrigin` noted) lost the focus since and the key means something else now: the focus is
    in a text box (the key types), or the key was for a text box (it now moves or quits). True when
    it was sent on (the caller ignores the key).

    Between cards and alerts nothing is needed: the app looks up a binding along the widgets
    focused now, so a burst of arrows moves one card per key anyway.
    """
    origin = origin if origin is not None else getattr(event, _ORIGIN, None)
    focused = screen.focused
    if origin is None or origin is focused or origin.screen is not screen:
        return False
    if not isinstance(focused, Input) and not isinstance(origin, Input):
        return False
    event.prevent_default()
    event.stop()
    # Forwarded, as Textual's App hands keys on: the app must not take it for a new key press.
    (focused or screen)._forward_event(events.Key(event.key, event.character))
    return True
