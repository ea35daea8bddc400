"""The scrollable board of metric cards, grouped as the catalogue groups them.

It owns the layout decisions that depend on its width: how many card columns (a group with fewer
cards than fit in a row spreads them over the whole width, rows balanced, so a wide terminal
shows wider cards rather than blank columns), the one-line form
under the narrow threshold with one name column shared by every line, and the labels the cards
show there (`rltop.view.names.metric_labels`: shortened from the shared parts inward, distinct; a
label that cannot fit without cutting a word, such as a reward function's name, gets a line of its
own above its values). Keyboard movement: arrows and hjkl move between cards by rows and columns,
across groups, hidden cards skipped, one card per key however fast the keys come.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from rltop.ui.kept_render import KeptLines
from rltop.ui.logic.narrow import NARROW_FIXED
from rltop.ui.logic.tag_filter import matches
from rltop.ui.messages import CursorMovedByUser
from rltop.ui.widgets.alert_item import AlertItem
from rltop.ui.widgets.metric_group import MetricGroup
from rltop.view.names import metric_labels
from rltop.view.text.cells import cell_len

if TYPE_CHECKING:  # cards draw with numpy; the board is built before numpy is imported
    from rltop.ui.widgets.metric_card import MetricCard
    from rltop.view.metric_view import MetricView

CARD_MIN_WIDTH = 30
"""Smallest card width (border included) in the wide layout; the column count follows from it."""
CARD_TITLE_MARGIN = 6
"""Cells of a card's top border that are not its title (corners, spaces, a bit of border)."""
NAME_SHARE = 0.62
"""Part of a narrow line (after the fixed columns) the name column may take by default."""
MIN_SPARK = 5
"""Narrowest sparkline a narrow line keeps when the name column widens for a name."""


def group_columns(columns: int, cards: int) -> int:
    """Columns for a group of ``cards`` when ``columns`` fit: rows balanced, no column left blank
    (3 cards where 6 fit: 3 wide ones; 7 cards: 4 + 3)."""
    if cards <= 0:
        return max(1, columns)
    rows = -(-cards // max(1, columns))
    return max(1, -(-cards // rows))


class MetricBoard(KeptLines, VerticalScroll, can_focus=False):
    """All cards of the current run."""

    BINDINGS = [
        Binding("up,k", "move('up')", "Up", show=False),
        Binding("down,j", "move('down')", "Down", show=False),
        Binding("left,h", "move('left')", "Left", show=False),
        Binding("right,l", "move('right')", "Right", show=False),
        Binding("home,g", "move('first')", "First", show=False),
        Binding("end,G", "move('last')", "Last", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.compact = False
        self.columns = 1
        self.name_width = 16
        self.width = 0
        self.pattern: re.Pattern[str] | None = None
        self._order: list[str] = []
        self._counts = (0, 0)
        self._by_tag: dict[str, MetricCard] = {}
        self._note_text = ""
        self._note = Static("", classes="board-note")

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

    def holds(self, widget: object) -> bool:
        """Whether ``widget`` is one of the board's cards (looked up by its tag: querying the groups
        for their cards at every repaint cost 2 ms)."""
        tag = getattr(widget, "tag", None)
        return isinstance(tag, str) and self._by_tag.get(tag) is widget

    @property
    def focused_tag(self) -> str | None:
        """The tag of the card that has focus."""
        focused = self.screen.focused if self.is_attached else None
        return focused.tag if focused is not None and self.holds(focused) else None

    async def show(self, grouped: list[tuple[str, list[MetricView]]], focus_tag: str | None = None) -> None:
        """Show these groups of cards: rebuilt when the tags changed, updated in place otherwise."""
        order = [model.tag for _, models in grouped for model in models]
        if order == self._order:
            by_tag = self._by_tag  # (kept: querying the groups for their cards at every repaint cost more)
            for _, models in grouped:
                for model in models:
                    card = by_tag[model.tag]
                    if card.model is not model:
                        card.update_model(model)
            return
        from rltop.ui.widgets.metric_card import MetricCard

        previous_focus = focus_tag or self.focused_tag
        self._order = order
        groups = [
            MetricGroup(group, [MetricCard(m, self.compact, self.name_width) for m in models])
            for group, models in grouped
        ]
        self._by_tag = {card.tag: card for group in groups for card in group.cards}
        self._note = Static(Text(self._note_text), classes="board-note")
        self._note.display = bool(self._note_text)
        with self.app.batch_update():
            await self.remove_children()
            await self.mount(self._note)
            await self.mount_all(groups)
            self._apply_columns()
            self._apply_filter()
        if previous_focus is not None:
            self.focus_tag(previous_focus)

    def show_empty_note(self, text: str) -> None:
        """One line in place of the cards (``no tag matches /zzz/ — Esc clears``); "" hides it."""
        if text != self._note_text:  # Static.update lays the screen out again: only on a change
            self._note_text = text
            self._note.update(Text(text))
        self._note.display = bool(text)

    # -- filter and layout -------------------------------------------------------------------------

    def set_filter(self, pattern: re.Pattern[str] | None) -> tuple[int, int]:
        """Hide the cards whose tag does not match; return (shown, total)."""
        self.pattern = pattern
        return self._apply_filter()

    def filter_counts(self) -> tuple[int, int]:
        """(cards the filter leaves, all cards)."""
        return self._counts

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
            group.set_columns(group_columns(self.columns, visible_here))
            shown += visible_here
        if focus_lost:
            self.focus_first()
        self._counts = (shown, total)
        return shown, total

    def set_layout(self, width: int, compact: bool) -> None:
        """Choose columns (wide) or the one-line form (narrow) for a board ``width`` cells wide."""
        self.compact = compact
        self.width = width
        self.columns = 1 if compact else max(1, (width - 2) // CARD_MIN_WIDTH)
        self.set_class(compact, "-compact")
        self._apply_columns()

    def _apply_columns(self) -> None:
        cards = self.cards
        labels = self._labels([card.model for card in cards])
        for group in self.groups:
            group.set_columns(group_columns(self.columns, sum(card.display for card in group.cards)))
        for card in cards:
            label = labels.get(card.tag, card.model.label)
            card.set_compact(self.compact, self.name_width, label)

    def _labels(self, models: list[MetricView]) -> dict[str, str]:
        """Tag -> the label its card shows at the current layout (sets `name_width` when narrow)."""
        if not models:
            return {}
        width = self.width or self.size.width or self.app.size.width
        names = [model.name for model in models]
        if not self.compact:
            # The narrowest card (the widest groups' columns) decides: labels stay alike across groups.
            card_width = (width - 2 - (self.columns - 1)) // self.columns
            labels = metric_labels(names, max(4, card_width - CARD_TITLE_MARGIN))
        else:
            line = width - 2 - 1  # board padding, the scrollbar
            room = max(8, int((line - NARROW_FIXED - 1) * NAME_SHARE))
            labels = metric_labels(names, room)
            need = max(cell_len(label) for label in labels.values())
            cap = max(room, line - NARROW_FIXED - 1 - MIN_SPARK)
            if need > room:
                # A name that cannot be cut (a reward function's) widens the column, up to a
                # sparkline of MIN_SPARK; the names that still do not fit get a line of their own.
                room = min(need, cap)
                labels = metric_labels(names, room)
            self.name_width = max(6, min(max(cell_len(label) for label in labels.values()), room))
        by_name = {model.name: model.tag for model in models}
        return {by_name[name]: label for name, label in labels.items()}

    # -- focus and movement --------------------------------------------------------------------------

    def focus_tag(self, tag: str) -> bool:
        """Focus the card of ``tag`` if it is shown."""
        card = self.card(tag)
        if card is not None and card.display:
            card.focus()
            return True
        return False

    def first_card(self) -> MetricCard | None:
        """The first card the filter leaves."""
        visible = self._visible_rows()
        return visible[0][0][0] if visible else None

    def focus_first(self) -> bool:
        """Focus the first visible card."""
        first = self.first_card()
        if first is None:
            return False
        first.focus(scroll_visible=False)
        self.scroll_home(animate=False)
        return True

    def _visible_rows(self) -> list[list[list[MetricCard]]]:
        """Visible cards as groups -> rows -> cards."""
        result = []
        for group in self.groups:
            if not group.display:
                continue
            cards = [card for card in group.cards if card.display]
            columns = group_columns(self.columns, len(cards))
            rows = [cards[i : i + columns] for i in range(0, len(cards), columns)]
            if rows:
                result.append(rows)
        return result

    def action_move(self, direction: str) -> None:
        """Move focus to the neighbouring card in ``direction``.

        The focus moves at once (`Screen.set_focus`), not after the events already queued: ten
        ↓ sent in one burst (key auto-repeat) must move ten cards, not one.
        """
        rows = [row for group in self._visible_rows() for row in group]
        flat = [card for row in rows for card in row]
        if not flat:
            return
        current = self.screen.focused
        if current not in flat:
            self._focus_now(flat[0])
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
            elif direction == "up":  # above the first row: the last alert (the focus chain's order)
                alerts = [widget for widget in self.screen.focus_chain if isinstance(widget, AlertItem)]
                if alerts:
                    self.screen.set_focus(alerts[-1])
                    self.post_message(CursorMovedByUser())
        if target is not None:
            self._focus_now(target)

    def _focus_now(self, card: MetricCard) -> None:
        self.screen.set_focus(card)
        card.scroll_visible(animate=False)
        self.post_message(CursorMovedByUser())
