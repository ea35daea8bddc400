"""One line of the alert strip: a metric's findings, one line at rest, everything when expanded.

A closed line is cut to its width without ever cutting the headline's number
(`rltop.view.text.headline.fit_alert`), and an episode that is over says ``(over)`` at every width.

The strip expands the most severe live alert by itself; the focused one expands instead once the
user moved there. A past episode (over and acknowledged, or a warning that cleared) is muted.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.widget import Widget

from rltop.health.findings import Finding
from rltop.ui.follow_focus import KeyOrigin
from rltop.ui.kept_render import KeptLines
from rltop.ui.logic.levels import LEVEL_CLASSES
from rltop.ui.messages import CursorMovedByUser, OpenCompletions, OpenDetail
from rltop.view.alerts import AlertView
from rltop.view.text.headline import fit_alert
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES, NOTE_ICON, NOTE_NAME
from rltop.view.text.safe import visible

PAST_CLASS = "-past"


CARD_SELECTOR = "MetricCard"
"""The cards below the alerts, by CSS type name (the card module loads numpy; this one must not)."""

NAME_ROOM = 32
"""Cells the closed line keeps for the message (which starts with the metric's name) before it
gives up its "(3 episodes)" note ("(over)" always stays)."""


class AlertItem(KeyOrigin, KeptLines, Widget, can_focus=True):
    """A focusable alert; Enter opens the detail of its metric (its completions, when logged)."""

    BINDINGS = [
        # Enter opens what the policy wrote when the run logged completions, else the detail: the
        # first binding whose action `check_action` allows runs (and only that one is in the footer).
        Binding("enter", "open_completions", "Completions"),
        Binding("enter", "open", "Detail"),
        Binding("e", "completions", "Completions", show=False),
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
    ]
    COMPONENT_CLASSES = {"alert-item--badge", "alert-item--advice"}

    def __init__(self, alert: AlertView, expanded: bool = False) -> None:
        super().__init__(classes=_classes(alert))
        self.alert = alert
        self.expanded = expanded
        """Show the whole message and the advice even without focus."""
        self.run_has_completions = False
        """Set by the strip from the run's view: Enter opens the completions instead of the detail."""
        self._kept_height: tuple[AlertView, int, int] | None = None  # (alert, width, open height)

    @property
    def finding(self) -> Finding:
        """The finding the line shows (the screen asks it for the metric under the cursor)."""
        return self.alert.finding

    @property
    def key(self) -> tuple[str, str]:
        """What identifies "the same alert" across updates: its metric (or run-wide rule)."""
        return self.alert.key

    def update_alert(self, alert: AlertView) -> None:
        """Show another alert (a newer judgement, or the alert now at this position)."""
        if shown_as(alert) != shown_as(self.alert):
            if _classes(alert) != _classes(self.alert):
                # (Only when they change: taking the classes off and on again costs a CSS pass of
                # the widget at every point, whose message "now 1.48 at step 2000" always changes.)
                self.set_class(False, *LEVEL_CLASSES.values(), PAST_CLASS)
                self.add_class(*_classes(alert).split())
            before = self._open_height() if self.is_open else 1
            self.alert = alert
            # A full layout pass costs far more than repainting a few lines, and an open alert's
            # text changes with every point ("now 1.48 at step 2000"): lay out only when its
            # height changes (a one-line alert keeps its height whatever its text).
            self.refresh(layout=self.is_open and self._open_height(remember=True) != before)
        else:
            self.alert = alert  # same text: keep the newest data, skip the repaint

    def set_expanded(self, expanded: bool) -> None:
        """Show the whole alert (or one line again)."""
        if expanded != self.expanded:
            was_open = self.is_open
            self.expanded = expanded
            # The focused alert is open either way: its height, and so the layout, stays.
            self.refresh(layout=self.is_open != was_open)

    @property
    def is_open(self) -> bool:
        """Showing everything: focused or expanded."""
        return self.has_focus or self.expanded

    def _open_height(self, remember: bool = False) -> int:
        """Lines the open alert takes at its current width (``remember``: kept for the next update,
        which would otherwise wrap the same text again to learn the height it had)."""
        width = max(1, self.content_size.width)
        kept = self._kept_height
        if not remember and kept is not None and kept[0] is self.alert and kept[1] == width:
            return kept[2]
        height = len(self.render().wrap(self.app.console, width))
        if remember:
            self._kept_height = (self.alert, width, height)
        return height

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line until focused or expanded, whatever the text: the one-line form is cut to the
        width it gets, so measuring it at another width (before a scrollbar appears, say) must not
        make it two lines tall."""
        if not self.is_open:
            return 1
        return super().get_content_height(container, viewport, width)

    def render(self) -> Text:
        """One line (cut between words, numbers whole) until open; then the message and the advice."""
        alert = self.alert
        level = alert.level
        icon, name = (NOTE_ICON, NOTE_NAME) if alert.is_note else (LEVEL_ICONS[level], LEVEL_NAMES[level])
        badge = f"{icon} {name:<4} "
        over = "" if alert.finding.active or alert.is_note else "(over)"
        notes = " ".join(note for note in (over, alert.fold_note) if note)
        if not self.is_open and self.content_size.width - len(badge) - len(notes) - 1 < NAME_ROOM:
            # A narrow pane: "(3 episodes)" goes, "(over)" stays: without it a latched critical
            # would read exactly like a live one.
            notes = over
        text = Text()
        text.append(badge, style=self.get_component_rich_style("alert-item--badge"))
        dim = self.get_component_rich_style("alert-item--advice")
        if notes:
            text.append(notes + " ", style=dim)
        message = visible(alert.message)
        if not self.is_open:
            room = max(1, self.content_size.width - text.cell_len)
            text.append(fit_alert(message, room))
            text.no_wrap = True
            return text
        text.append(message)
        if alert.finding.advice:
            text.append("\n→ ", style=dim)
            text.append(visible(alert.finding.advice), style=dim)
        for other in alert.others:
            over = "" if other.active else "(over) "
            text.append(f"\n· {LEVEL_NAMES[other.level]} {over}", style=dim)
            text.append(visible(other.message), style=dim)
        return text

    # Focus opens an alert, which an expanded alert already is: then only its style changes, and a
    # repaint does (a full layout pass of a large board costs ~0.1 s, the dashboard's first
    # focus on the worst alert paid it twice).
    def on_focus(self) -> None:
        self.refresh(layout=not self.expanded)
        self.scroll_visible()

    def on_blur(self) -> None:
        self.refresh(layout=not self.expanded)

    def has_completions(self) -> bool:
        """The alert's run logged completions (TRL ``log_completions``): the strip says so."""
        return self.run_has_completions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter is "Completions" on an alert of a run with completions, "Detail" on the others."""
        if action == "open_completions":
            return self.has_completions()
        if action == "open":
            return not self.has_completions()
        return True

    def action_open(self) -> None:
        """Enter: ask the screen for the detail view of this metric."""
        self.post_message(OpenDetail(self.finding.tag))

    def action_open_completions(self) -> None:
        """Enter on an alert of a run that logged completions: those at the alert's step."""
        self.action_completions()

    def action_completions(self) -> None:
        """``e``: what the policy wrote at the alert's step (or the nearest logged step)."""
        self.post_message(OpenCompletions(self.finding.step, self.finding.tag))

    def action_move(self, direction: int) -> None:
        """Up/down: the neighbouring alert; below the last one, the first metric card.

        The focus moves at once (`Screen.set_focus`), counted from where the focus *is*: keys of a
        burst queued behind this one then move on from there, key by key. The alerts and then the
        cards are the screen's focus chain, so "below the last alert" is the next card in it.
        """
        screen = self.screen
        current = screen.focused if isinstance(screen.focused, AlertItem) else self
        chain = screen.focus_chain
        alerts = [widget for widget in chain if isinstance(widget, AlertItem)]
        index = alerts.index(current) + direction if current in alerts else -1
        if 0 <= index < len(alerts):
            screen.set_focus(alerts[index])
        elif direction > 0:
            cards = set(screen.query(CARD_SELECTOR))
            first_card = next((widget for widget in chain if widget in cards), None)
            if first_card is not None:
                screen.set_focus(first_card)
                first_card.scroll_visible(animate=False)
        self.post_message(CursorMovedByUser())

    def on_click(self, event: Click) -> None:
        self.post_message(CursorMovedByUser())
        self.focus()
        if event.chain >= 2:  # a double click does what Enter does
            if self.has_completions():
                self.action_open_completions()
            else:
                self.action_open()


def _classes(alert: AlertView) -> str:
    return LEVEL_CLASSES[alert.level] + ("" if alert.live else f" {PAST_CLASS}")


def shown_as(alert: AlertView) -> tuple:
    """What an alert displays: a change elsewhere (a finding's value, say) needs no repaint."""
    return (
        alert.level,
        alert.live,
        alert.key,
        alert.message,
        alert.fold_note,
        alert.finding.advice,
        alert.finding.active,
        tuple((f.level, f.message, f.active) for f in alert.others),
    )
