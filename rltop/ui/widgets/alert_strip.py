"""The alert strip: one line per metric with a finding, what matters now first, above the metrics."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.containers import VerticalScroll
from textual.events import DescendantBlur, DescendantFocus
from textual.widgets import Static

from rltop.ui.kept_render import KeptLines
from rltop.ui.widgets.alert_item import AlertItem, shown_as
from rltop.view.alerts import AlertView


class AlertStrip(KeptLines, VerticalScroll, can_focus=False):
    """Shows an `AlertItem` per `AlertView`, or one calm line when there is none.

    Updates reuse the existing alert widgets (new alerts are written into them in order, extra
    ones are appended or removed at the end), so the focused alert is never unmounted while the
    user reads it: a removed focused widget would send the focus, and the scroll, elsewhere.

    With `expand_top` (the wide layout) the most severe live alert shows its whole message and
    advice, unless the focus is on another alert: then that one does.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._alerts: list[AlertView] = []
        self._calm_text: str | None = None
        self.expand_top = True

    @property
    def items(self) -> list[AlertItem]:
        """The alert widgets, in display order."""
        return list(self.query_children(AlertItem))

    @property
    def alerts(self) -> list[AlertView]:
        """The alerts shown, in display order."""
        return list(self._alerts)

    async def show(self, alerts: list[AlertView], calm_text: str, has_completions: bool = False) -> None:
        """Display ``alerts`` (already in order); focus follows the alert it was on.
        ``has_completions``: the run logged completions, which Enter on an alert then opens.

        Removals and mounts are awaited: focus must never be left on an alert that is about to be
        removed (keys sent to a detached widget are lost, and the app would stop answering).
        """
        if [shown_as(a) for a in alerts] == [shown_as(a) for a in self._alerts] and (
            calm_text == self._calm_text
        ):
            self._alerts = alerts
            for item, alert in zip(self.items, alerts):
                item.alert = alert
            self._say_completions(has_completions)
            return
        self._alerts, self._calm_text = alerts, calm_text
        self.set_class(bool(alerts), "-alerts")
        items = self.items
        focused = next((item for item in items if item.has_focus), None)
        focused_key = focused.key if focused is not None else None
        new_items: list[AlertItem] = []
        with self.app.batch_update():
            if not alerts:
                await self.remove_children()
                await self.mount(Static(Text(calm_text), classes="alert-healthy"))
                return
            await self.query_children(".alert-healthy").remove()
            extra = items[len(alerts) :]
            if focused in extra:
                items[len(alerts) - 1].focus(scroll_visible=False)
            if extra:
                await self.remove_children(extra)
            for item, alert in zip(items, alerts):
                item.update_alert(alert)
            new_items = [AlertItem(alert) for alert in alerts[len(items) :]]
            if new_items:
                await self.mount_all(new_items)
            self._say_completions(has_completions)
            self.apply_expansion()
        if focused_key is not None:
            keys = [alert.key for alert in alerts]
            if focused_key in keys:
                widgets = items[: len(alerts)] + new_items
                self.call_after_refresh(widgets[keys.index(focused_key)].focus)

    def _say_completions(self, has_completions: bool) -> None:
        """Tell the alerts whether their run has completions; the footer's Enter follows."""
        changed = False
        for item in self.items:
            changed |= item.run_has_completions != has_completions
            item.run_has_completions = has_completions
        if changed and self.screen.focused in self.items:
            self.screen.refresh_bindings()

    def apply_expansion(self) -> None:
        """Expand the most severe live alert, unless another alert has the focus."""
        items = self.items
        focused = any(item.has_focus for item in items)
        top = next((item for item in items if item.alert.live), None)
        for item in items:
            item.set_expanded(self.expand_top and not focused and item is top)

    @on(DescendantFocus)
    @on(DescendantBlur)
    def _focus_moved(self) -> None:
        self.apply_expansion()

    def focus_first(self) -> bool:
        """Focus the most severe live alert (else the first one); False when there is none."""
        items = self.items
        target = next((item for item in items if item.alert.live), items[0] if items else None)
        if target is None:
            return False
        target.focus()
        return True

    def focus_last(self) -> bool:
        """Focus the last alert; False when there is none."""
        items = self.items
        if items:
            items[-1].focus()
            return True
        return False
