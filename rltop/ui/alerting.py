"""The dashboard's alerts: `rltop.alerts` for hooks and webhooks, plus the bell and the window title.

The app calls `DashboardAlerts.observe` on the UI thread after every judgement, `tick` once a
second and `close` when it ends. A new alert at ``--alert-on`` or worse rings the terminal bell
(BEL through Textual's `App.bell`): tmux then flags the window when the pane is not in view, which
is how a hidden pane asks for attention. The terminal title shows the worst level over all runs
(``✖ rltop: 1 CRIT``): Textual 8's `App.title` only feeds its Header widget and writes no escape
sequence, so the OSC 2 sequence goes through the app's driver, the path `App.bell` uses. The
title stack (XTWINOPS 22/23) gives the terminal its own title back on exit where it is supported.
Hook and webhook failures arrive from their threads through a queue and become toasts on `tick`.
"""

from __future__ import annotations

import queue
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rltop.alerts.dispatch import Alerts
from rltop.alerts.events import ESCALATION, FINDING, STALL, AlertEvent, Gate
from rltop.health.engine import RunHealth
from rltop.health.findings import Level
from rltop.view.names import store_display_names
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES
from rltop.view.text.safe import visible

if TYPE_CHECKING:
    from textual.app import App

    from rltop.alerts.settings import AlertSettings
    from rltop.model.run import Store

SAVE_TITLE, RESTORE_TITLE = "\x1b[22;2t", "\x1b[23;2t"


def title_text(verdicts: Iterable[RunHealth]) -> str:
    """``✖ rltop: 1 CRIT, 2 WARN``; ``● rltop: ok``; ``rltop`` before any run has points."""
    levels = Counter(health.level for health in verdicts if not health.empty)
    if not levels:
        return "rltop"
    worst = max(levels)
    counts = [
        f"{levels[level]} {LEVEL_NAMES[level]}" for level in (Level.CRITICAL, Level.WARN) if levels[level]
    ]
    return f"{LEVEL_ICONS[worst]} rltop: {', '.join(counts) or 'ok'}"


class DashboardAlerts:
    """What the dashboard tells outside its screen; see the module docstring."""

    def __init__(self, app: App, settings: AlertSettings) -> None:
        self.app = app
        self.title = settings.title
        self._problems: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.alerts = Alerts(settings, self._problems.put, escape=visible, names=store_display_names)
        if settings.bell:
            self.alerts.listen(Gate(settings.alert_on, recoveries=False, finishes=False), self._ring)
        self.shown_title: str | None = None
        self.rang = 0  # bells rung (tests)

    def observe(self, store: Store, health: dict[str, RunHealth], caught_up: bool) -> None:
        """After a judgement: tell what changed, and update the title."""
        self.alerts.observe_store(store, health, caught_up)
        if self.title:
            self._set_title(title_text(health.values()))

    def tick(self) -> None:
        """Once a second: failures of hooks and webhooks become toasts."""
        while True:
            try:
                problem = self._problems.get_nowait()
            except queue.Empty:
                return
            self.app.notify(visible(problem), severity="warning", markup=False, timeout=10)

    def close(self) -> None:
        """The dashboard ends: let hooks finish briefly, give the terminal its title back."""
        self.alerts.close(grace=1.0)
        if self.shown_title is not None:
            self._write(RESTORE_TITLE)

    def _ring(self, event: AlertEvent, _payload: dict[str, Any]) -> None:
        if event.kind in (FINDING, ESCALATION, STALL):
            self.rang += 1
            self.app.bell()

    def _set_title(self, text: str) -> None:
        if text == self.shown_title:
            return
        if self.shown_title is None:
            self._write(SAVE_TITLE)
        self.shown_title = text
        self._write(f"\x1b]2;{text}\x07")

    def _write(self, sequence: str) -> None:
        """Raw bytes to the terminal through Textual's driver (nothing in headless tests)."""
        driver = getattr(self.app, "_driver", None)
        if driver is not None and not self.app.is_headless:
            driver.write(sequence)
