"""The alert strip: the run's findings, worst first, above the metrics."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from rltop.health.findings import Finding, Level
from rltop.ui.widgets.alert_item import AlertItem, shown_as


class AlertStrip(VerticalScroll, can_focus=False):
    """Shows `AlertItem`s for every warn/critical finding, or one calm line when there are none.

    Updates reuse the existing alert widgets (new findings are written into them in order, extra
    ones are appended or removed at the end), so the focused alert is never unmounted while the
    user reads it: a removed focused widget would send the focus, and the scroll, elsewhere.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._findings: list[Finding] = []
        self._healthy_text: str | None = None

    @property
    def items(self) -> list[AlertItem]:
        """The alert widgets, in display order."""
        return list(self.query_children(AlertItem))

    async def show(self, findings: list[Finding], healthy_text: str) -> None:
        """Display ``findings`` (already worst first); focus follows the alert it was on.

        Removals and mounts are awaited: focus must never be left on an alert that is about to be
        removed (keys sent to a detached widget are lost, and the app would stop answering).
        """
        alerts = [f for f in findings if Level(f.level) > Level.OK]
        if [shown_as(f) for f in alerts] == [shown_as(f) for f in self._findings] and (
            healthy_text == self._healthy_text
        ):
            self._findings = alerts
            for item, finding in zip(self.items, alerts):
                item.finding = finding
            return
        self._findings, self._healthy_text = alerts, healthy_text
        self.set_class(bool(alerts), "-alerts")
        items = self.items
        focused = next((item for item in items if item.has_focus), None)
        focused_key = focused.key if focused is not None else None
        with self.app.batch_update():
            if not alerts:
                await self.remove_children()
                await self.mount(Static(Text(healthy_text), classes="alert-healthy"))
                return
            await self.query_children(".alert-healthy").remove()
            extra = items[len(alerts):]
            if focused in extra and len(alerts) > 0:
                items[len(alerts) - 1].focus(scroll_visible=False)
            if extra:
                await self.remove_children(extra)
            for item, finding in zip(items, alerts):
                item.update_finding(finding)
            new_items = [AlertItem(finding) for finding in alerts[len(items):]]
            if new_items:
                await self.mount_all(new_items)
        if focused_key is not None:
            keys = [(f.rule, f.tag) for f in alerts]
            if focused_key in keys:
                target = keys.index(focused_key)
                widgets = items[: len(alerts)] + new_items
                self.call_after_refresh(widgets[target].focus)

    def focus_first(self) -> bool:
        """Focus the worst alert; False when there is none."""
        items = self.items
        if items:
            items[0].focus()
            return True
        return False

    def focus_last(self) -> bool:
        """Focus the last alert; False when there is none."""
        items = self.items
        if items:
            items[-1].focus()
            return True
        return False
