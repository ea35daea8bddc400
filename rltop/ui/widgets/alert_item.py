"""One finding in the alert strip: one line at rest; the whole message and the advice while focused."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.widget import Widget

from rltop.health.findings import Finding, Level
from rltop.ui.levels import LEVEL_CLASSES
from rltop.ui.messages import OpenDetail
from rltop.view.marks import LEVEL_ICONS, LEVEL_NAMES
from rltop.view.safe_text import visible
from rltop.view.text_fit import cut_at_word

NARROW_ROOM = 60  # below this many cells for the message, a one-line alert drops "train/"


class AlertItem(Widget, can_focus=True):
    """A focusable finding; Enter opens the detail of its metric."""

    BINDINGS = [
        Binding("enter", "open", "Detail"),
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
    ]
    COMPONENT_CLASSES = {"alert-item--badge", "alert-item--advice"}

    def __init__(self, finding: Finding, expanded: bool = False) -> None:
        super().__init__(classes=LEVEL_CLASSES[Level(finding.level)])
        self.finding = finding
        self.expanded = expanded
        """Show the whole message and the advice even without focus."""

    @property
    def key(self) -> tuple[str, str]:
        """What identifies "the same alert" across updates: rule and tag."""
        return (self.finding.rule, self.finding.tag)

    def update_finding(self, finding: Finding) -> None:
        """Show another finding (a newer judgement, or the finding now at this position)."""
        if shown_as(finding) != shown_as(self.finding):
            self.set_class(False, *LEVEL_CLASSES.values())
            self.add_class(LEVEL_CLASSES[Level(finding.level)])
            self.finding = finding
            # A one-line alert keeps its height: no layout pass (a stall message changes every
            # minute, and a full layout costs far more than repainting one line).
            self.refresh(layout=self.has_focus or self.expanded)
        else:
            self.finding = finding  # same text: keep the newest data, skip the repaint

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line until focused or expanded, whatever the text: the one-line form is cut to the
        width it gets, so measuring it at another width (before a scrollbar appears, say) must not
        make it two lines tall."""
        if not (self.has_focus or self.expanded):
            return 1
        return super().get_content_height(container, viewport, width)

    def render(self) -> Text:
        """One line (cut at a word, with …) until focused; then the whole message and the advice."""
        finding = self.finding
        level = Level(finding.level)
        badge = f"{LEVEL_ICONS[level]} {LEVEL_NAMES[level]:<4} "
        message = visible(finding.message)
        # An episode that is over (a latched critical, the worst past warn) says so, as the
        # snapshot does: otherwise two lines about one metric read like a duplicate.
        over = "" if finding.active else "(over) "
        text = Text()
        text.append(badge, style=self.get_component_rich_style("alert-item--badge"))
        if over:
            text.append(over, style=self.get_component_rich_style("alert-item--advice"))
        if not (self.has_focus or self.expanded):
            room = max(1, self.content_size.width - len(badge) - len(over))
            if room < NARROW_ROOM and message.startswith("train/"):
                # A narrow pane: the train/ prefix says nothing there (eval/ is kept), and without
                # it the part of the tag that tells metrics apart fits.
                message = message.removeprefix("train/")
            text.append(cut_at_word(message, room))
            text.no_wrap = True
            return text
        text.append(message)
        if finding.advice:
            advice_style = self.get_component_rich_style("alert-item--advice")
            text.append("\n→ ", style=advice_style)
            text.append(visible(finding.advice), style=advice_style)
        return text

    def on_focus(self) -> None:
        self.refresh(layout=True)
        self.scroll_visible()

    def on_blur(self) -> None:
        self.refresh(layout=True)

    def action_open(self) -> None:
        """Enter: ask the screen for the detail view of this metric."""
        self.post_message(OpenDetail(self.finding.tag))

    def action_move(self, direction: int) -> None:
        """Up/down: the screen knows the neighbours (other alerts, then the metric cards)."""
        mover = getattr(self.screen, "move_from_alert", None)
        if mover is not None:
            mover(self, direction)

    def on_click(self, event: Click) -> None:
        self.focus()
        if event.chain >= 2:
            self.action_open()


def shown_as(finding: Finding) -> tuple:
    """What an alert displays of a finding: a change elsewhere (its value, say) needs no repaint."""
    return (Level(finding.level), finding.rule, finding.tag, finding.message, finding.advice, finding.active)
