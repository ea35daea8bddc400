"""The scrollable board of metric cards, grouped as the catalogue groups them.

It owns the layout decisions that depend on its width (how many card columns; the one-line form
under the narrow threshold, with one name column shared by every line) and keyboard movement:
arrows and hjkl move between cards by rows and columns, across groups, hidden cards skipped.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message

from rltop.ui.narrow import NARROW_FIXED
from rltop.ui.tag_filter import matches
from rltop.ui.widgets.metric_group import MetricGroup

if TYPE_CHECKING:  # cards draw with numpy; the board is built before numpy is imported
    from rltop.ui.widgets.metric_card import MetricCard
    from rltop.view.metric_view import MetricView

CARD_MIN_WIDTH = 30
"""Smallest card width (border included) in the wide layout; the column count follows from it."""


class MetricBoard(VerticalScroll, can_focus=False):
    """All cards of the current run."""

    BINDINGS = [
        Binding("up,k", "move('up')", "Up", show=False),
        Binding("down,j", "move('down')", "Down", show=False),
        Binding("left,h", "move('left')", "Left", show=False),
        Binding("right,l", "move('right')", "Right", show=False),
        Binding("home,g", "move('first')", "First", show=False),
        Binding("end,G", "move('last')", "Last", show=False),
    ]

    class LeftTop(Message):
        """Up was pressed on the first row: the screen may move focus to the alerts."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.compact = False
        self.columns = 1
        self.name_width = 16
        self.pattern: re.Pattern[str] | None = None
        self._order: list[str] = []

    # -- content -----------------------------------------------------------------------------------

    @property
    def groups(self) -> list[MetricGroup]:
        """The group widgets, in display order."""
        return list(self.query_children(MetricGroup))

    @property
    def cards(self) -> list[MetricCard]:
        """Every card, in display order (hidden ones included)."""
        return [card for group in self.groups for card in group.cards]

    def card(self, tag: str) -> MetricCard | None:
        """The card of ``tag``, if shown."""
        return next((card for card in self.cards if card.tag == tag), None)

    @property
    def focused_tag(self) -> str | None:
        """The tag of the card that has focus."""
        focused = self.screen.focused if self.is_attached else None
        return focused.tag if focused is not None and focused in self.cards else None

    async def show(self, grouped: list[tuple[str, list[MetricView]]], focus_tag: str | None = None) -> None:
        """Show these groups of cards: rebuilt when the tags changed, updated in place otherwise."""
        order = [model.tag for _, models in grouped for model in models]
        if order == self._order:
            by_tag = {card.tag: card for card in self.cards}
            for _, models in grouped:
                for model in models:
                    card = by_tag[model.tag]
                    if card.model is not model:
                        card.update_model(model)
            return
        from rltop.ui.widgets.metric_card import MetricCard

        previous_focus = focus_tag or self.focused_tag
        self._order = order
        self.name_width = self._name_width([m for _, models in grouped for m in models])
        groups = [
            MetricGroup(group, [MetricCard(m, self.compact, self.name_width) for m in models])
            for group, models in grouped
        ]
        with self.app.batch_update():
            await self.remove_children()
            await self.mount_all(groups)
            self._apply_columns()
            self._apply_filter()
        if previous_focus is not None:
            self.focus_tag(previous_focus)

    # -- filter and layout -------------------------------------------------------------------------

    def set_filter(self, pattern: re.Pattern[str] | None) -> tuple[int, int]:
        """Hide the cards whose tag does not match; return (shown, total)."""
        self.pattern = pattern
        return self._apply_filter()

    def _apply_filter(self) -> tuple[int, int]:
        shown = total = 0
        focus_lost = False
        for group in self.groups:
            visible_here = 0
            for card in group.cards:
                total += 1
                keep = matches(self.pattern, card.tag)
                if not keep and card.has_focus:
                    focus_lost = True
                card.display = keep
                visible_here += keep
            group.display = visible_here > 0
            shown += visible_here
        if focus_lost:
            self.focus_first()
        return shown, total

    def set_layout(self, width: int, compact: bool) -> None:
        """Choose columns (wide) or the one-line form (narrow) for a board ``width`` cells wide."""
        self.compact = compact
        self.columns = 1 if compact else max(1, (width - 2) // CARD_MIN_WIDTH)
        self.name_width = self._name_width([card.model for card in self.cards])
        self.set_class(compact, "-compact")
        self._apply_columns()

    def _apply_columns(self) -> None:
        for group in self.groups:
            group.set_columns(self.columns)
            for card in group.cards:
                card.set_compact(self.compact, self.name_width)

    def _name_width(self, models: list[MetricView]) -> int:
        """One name column for every narrow line: the longest label, within reason."""
        width = self.size.width or self.app.size.width
        room = max(8, int((width - 2 - NARROW_FIXED - 1) * 0.62))
        longest = max((len(m.label) for m in models), default=8)
        return max(6, min(longest, room))

    # -- focus and movement --------------------------------------------------------------------------

    def focus_tag(self, tag: str) -> bool:
        """Focus the card of ``tag`` if it is shown."""
        card = self.card(tag)
        if card is not None and card.display:
            card.focus()
            return True
        return False

    def focus_first(self) -> bool:
        """Focus the first visible card."""
        visible = self._visible_rows()
        if visible:
            visible[0][0][0].focus(scroll_visible=False)
            self.scroll_home(animate=False)
            return True
        return False

    def _visible_rows(self) -> list[list[list[MetricCard]]]:
        """Visible cards as groups -> rows -> cards."""
        result = []
        for group in self.groups:
            if not group.display:
                continue
            cards = [card for card in group.cards if card.display]
            rows = [cards[i : i + self.columns] for i in range(0, len(cards), self.columns)]
            if rows:
                result.append(rows)
        return result

    def action_move(self, direction: str) -> None:
        """Move focus to the neighbouring card in ``direction``."""
        rows = [row for group in self._visible_rows() for row in group]
        flat = [card for row in rows for card in row]
        if not flat:
            return
        current = self.screen.focused
        if current not in flat:
            flat[0].focus()
            return
        target = None
        if direction in ("left", "right"):
            index = flat.index(current) + (1 if direction == "right" else -1)
            target = flat[index] if 0 <= index < len(flat) else None
        elif direction == "first":
            target = flat[0]
        elif direction == "last":
            target = flat[-1]
        else:
            row_index = next(i for i, row in enumerate(rows) if current in row)
            column = rows[row_index].index(current)
            next_row = row_index + (1 if direction == "down" else -1)
            if 0 <= next_row < len(rows):
                target = rows[next_row][min(column, len(rows[next_row]) - 1)]
            elif direction == "up":
                self.post_message(self.LeftTop())
        if target is not None:
            target.focus()
            target.scroll_visible()
