"""`Alerts`: verdicts in, every recipient told (hooks, webhooks, desktop, and the caller's own).

``rltop watch`` and the dashboard build one `Alerts` from the command line (`AlertSettings`) and
feed it every new `RunHealth`. The tracker turns verdicts into events; each recipient has its own
`Gate` (its level, its once-per-episode memory) and is only handed what passes it. Nothing here
blocks: commands and webhooks run in their own threads, and the caller's listeners (the watch log,
the dashboard's bell) are plain callbacks on the caller's thread.

A channel that fails never takes the others down, nor the caller: whatever a hook, a webhook or the
desktop notification raises on an alert is said once per kind (`Problems`) and the next channel is
told all the same. The payload is display-safe (`rltop.alerts.payload`), so no name can make a
channel fail in the first place.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from rltop.alerts.events import FINISH, RECOVERY, AlertEvent, AlertTracker, Gate
from rltop.alerts.hooks import CommandRunner
from rltop.alerts.payload import event_environment, event_payload, event_text, headline
from rltop.alerts.problems import Problems
from rltop.alerts.settings import AlertSettings
from rltop.alerts.webhooks import WebhookSender
from rltop.health.engine import RunHealth
from rltop.health.findings import Level
from rltop.model.run import Run, Store

NOTIFY_SEND = "notify-send"

Listener = Callable[[AlertEvent, dict[str, Any]], None]


class Alerts:
    """The tracker, a gate per recipient and the recipients; see the module docstring."""

    def __init__(
        self,
        settings: AlertSettings,
        report: Callable[[str], None],
        escape: Callable[[str], str] = str,
        names: Callable[[Store], Mapping[str, str]] | None = None,
    ) -> None:
        """``report`` receives one-line failure reports (from any thread); ``names`` gives the runs'
        display names (what the screen calls them, `rltop.view.names.run_display_names`; the run names
        without it). ``escape`` is applied once more to the desktop notification's texts; the payload
        is display-safe already, so `visible` there changes nothing."""
        self.settings = settings
        self._name_runs = names
        self._names: dict[str, str] = {}
        self._named: frozenset[str] = frozenset()
        self.tracker = AlertTracker()
        self.problems = Problems(report)
        self.escape = escape
        self._recipients: list[tuple[Gate, Listener]] = []
        self._runners: list[CommandRunner] = []
        self._sender: WebhookSender | None = None
        self._last: dict[str, RunHealth] = {}
        self._started = False  # the first read is over
        if settings.command:
            self._hook = self._runner("--on-alert command", settings.hook_timeout)
            self.listen(Gate(settings.alert_on), self._channel("--on-alert command", self._run_hook))
        if settings.webhooks:
            sender = self._sender = WebhookSender(list(settings.webhooks), self.problems)
            self.listen(Gate(settings.alert_on), self._channel("--webhook", lambda _e, p: sender.send(p)))
        if settings.desktop:
            self._notify = self._runner(NOTIFY_SEND, min(settings.hook_timeout, 10.0))
            self.listen(Gate(settings.alert_on), self._channel(NOTIFY_SEND, self._desktop))

    def _runner(self, who: str, timeout: float) -> CommandRunner:
        runner = CommandRunner(who, timeout, self.problems)
        self._runners.append(runner)
        return runner

    def _channel(self, who: str, deliver: Listener) -> Listener:
        """``deliver``, with whatever it raises said once per kind and kept from the caller."""

        def guarded(event: AlertEvent, payload: dict[str, Any]) -> None:
            try:
                deliver(event, payload)
            except Exception as error:  # one channel's failure must not cost the others their alert
                name = type(error).__name__
                said = f"{who} could not take an alert of run {payload.get('run')} ({name}: {error})"
                self.problems.failed(who, name, said)

        return guarded

    def listen(self, gate: Gate, listener: Listener) -> None:
        """Call ``listener(event, payload)`` for every event ``gate`` admits (on the observing thread)."""
        self._recipients.append((gate, listener))

    # -- input ------------------------------------------------------------------------------------------

    def observe(self, run: Run, health: RunHealth, caught_up: bool = True) -> list[AlertEvent]:
        """Judge the change from the previous verdict on ``run`` and tell every recipient."""
        self._last[run.name] = health
        events = self.tracker.observe(run, health, caught_up)
        for event in events:
            self._tell(event, run)
        return events

    def observe_store(
        self, store: Store, health: Mapping[str, RunHealth], caught_up: bool
    ) -> list[AlertEvent]:
        """Every run whose verdict is new since the last call (the dashboard's session as it is)."""
        if caught_up and not self._started:
            self._started = True
            self.tracker.present_at_start(store.runs)
        events = []
        if self._name_runs is not None and self._named != frozenset(store.runs):
            self._named = frozenset(store.runs)  # display names depend on every run shown together
            self._names = dict(self._name_runs(store))
        for gone in [name for name in self._last if name not in store.runs]:
            self.forget(gone)
        for name, verdict in health.items():
            run = store.runs.get(name)
            if run is not None and self._last.get(name) is not verdict:
                events.extend(self.observe(run, verdict, caught_up))
        return events

    def forget(self, run: str) -> None:
        """A run disappeared: nothing more is said about it."""
        self._last.pop(run, None)
        self.tracker.forget(run)
        for gate, _listener in self._recipients:
            gate.forget(run)

    def _tell(self, event: AlertEvent, run: Run) -> None:
        payloads: dict[str, dict[str, Any]] = {}  # one payload per kind the gates make of the event
        for gate, listener in self._recipients:
            admitted = gate.admit(event)
            if admitted is None:
                continue
            payload = payloads.get(admitted.kind)
            if payload is None:
                display = self._names.get(run.name)
                try:
                    payload = payloads[admitted.kind] = event_payload(admitted, run, display=display)
                except Exception as error:  # a bug here must not end watch: say it, go on
                    name = type(error).__name__
                    said = f"an alert of run {event.run} could not be described ({name}: {error})"
                    self.problems.failed("alerts", name, said)
                    return
            listener(admitted, payload)

    # -- recipients ---------------------------------------------------------------------------------------

    def _run_hook(self, _event: AlertEvent, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode() + b"\n"
        self._hook.start(self.settings.command or "", data, event_environment(payload), run=payload["run"])

    def _desktop(self, event: AlertEvent, payload: dict[str, Any]) -> None:
        urgent = event.kind not in (RECOVERY, FINISH) and event.level == Level.CRITICAL
        # Notification servers read a little HTML in the body: names from files must stay text.
        title, body = (
            html.escape(self.escape(text), quote=False) for text in (headline(payload), event_text(payload))
        )
        urgency = "critical" if urgent else "normal"
        argv = [NOTIFY_SEND, "--app-name=rltop", f"--urgency={urgency}", title, body]
        self._notify.start(argv, run=payload["run"])

    # -- end ------------------------------------------------------------------------------------------------

    @property
    def running(self) -> int:
        """Commands running or waiting for their turn (tests wait for 0)."""
        return sum(runner.running for runner in self._runners)

    def close(self, grace: float = 2.0) -> None:
        """Let running and waiting commands and queued webhooks finish within ``grace`` seconds, then
        stop them. The channels wind down side by side: a hook that hangs costs the webhooks no time."""
        closers = [runner.close for runner in self._runners]
        if self._sender is not None:
            closers.append(self._sender.close)
        threads = [
            threading.Thread(target=close, args=(grace,), name="rltop-alerts-close") for close in closers
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def summary(self) -> list[str]:
        """Lines for the end: recipients that failed more than once."""
        return self.problems.summary()
