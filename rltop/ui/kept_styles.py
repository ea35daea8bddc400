"""Component styles a widget keeps until it is restyled, for the widgets that redraw at every point.

Textual forgets a widget's component styles at every refresh and finds each again through its
ancestors (about 0.1 ms each). A live card, the header or a chart asks for several at every new point
(issue 28's CPU goal), though they only change when the widget is restyled (focus, level, theme,
a layout class), which Textual says through `notify_style_update`.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style


class KeptComponentStyles:
    """Mix in before `Widget`: `get_component_rich_style` answers from what it found since the
    widget was last restyled."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kept_styles: dict[tuple[str, ...], Style] = {}

    def get_component_rich_style(
        self, *names: str, partial: bool = False, default: Style | None = None
    ) -> Style:
        """A component's Rich style, kept until the widget is restyled."""
        key = (*names, "partial") if partial else names
        style = self._kept_styles.get(key)
        if style is None:
            style = super().get_component_rich_style(*names, partial=partial, default=default)  # type: ignore[misc]
            self._kept_styles[key] = style
        return style

    def notify_style_update(self) -> None:
        """Restyled: the components are looked up again."""
        self._kept_styles.clear()
        super().notify_style_update()  # type: ignore[misc]
