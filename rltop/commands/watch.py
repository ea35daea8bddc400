"""``rltop watch PATH...``: the dashboard's judgement without a screen, for nohup, systemd and cron.

It follows the runs as the dashboard does (the same `Watcher`) and judges them with the same
`HealthEngine`. Each new finding, escalation, recovery, stall and finished run is one line on
stderr (``--format json``: one JSON object a line on stdout, the hook payload); ``--on-alert``,
``--webhook`` and ``--notify`` pass the alerts on. It needs no terminal, reads nothing from stdin,
writes nothing into the log directory, and ends with exit code 0 on SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rltop.commands.alert_options import add_alert_options, alert_settings
from rltop.commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    add_filters,
    add_format,
    add_paths,
    add_poll,
    add_rules,
    error_line,
    install_stop_signals,
    note,
    warn,
)

if TYPE_CHECKING:
    from rltop.alerts.dispatch import Alerts
    from rltop.alerts.events import AlertEvent
    from rltop.ingest.feed import ChangeBatch
    from rltop.live.judged import JudgedStore

NAME = "watch"
CLOSE_GRACE = 3.0
"""Seconds running hooks and queued webhooks get to finish when watch ends."""

DESCRIPTION = """\
Follow the runs under PATH as the dashboard does and judge them with the same rules, without a
screen. Each new finding, change of level, recovery, stall and finished run is one line on stderr
(with --format json: a JSON object a line on stdout, the same payload hooks get). --on-alert,
--webhook and --notify pass alerts on. Runs until Ctrl-C or SIGTERM (exit 0); needs no terminal and
writes nothing into the log directory, so it runs under nohup or systemd.
"""

EPILOG = """\
what is reported: runs still being written when watch starts report what is wrong with them now;
finished or idle runs stay quiet until they change. Stalls are reported for runs that were written
while watching. One alert per run and rule per episode: twenty tags going NaN together is one alert.

examples:
  nohup rltop watch ./logs --on-alert ./stop_run.sh > watch.log 2>&1 &
  rltop watch ./logs --webhook env:SLACK_WEBHOOK_URL --alert-on warn
  rltop watch ./logs --format json | jq -c 'select(.level == "critical")'
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``watch``."""
    parser = sub.add_parser(
        NAME,
        help="headless: judge runs as they are written; print and pass on alerts",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_paths(parser)
    add_format(
        parser,
        ("text", "json"),
        help="text: one line per event on stderr (default); json: JSON lines on stdout",
    )
    add_filters(parser)
    add_poll(parser)
    add_rules(parser)
    add_alert_options(parser)
    return parser


class _Log:
    """Where watch writes: event lines (stderr or JSON on stdout) and problems; thread-safe."""

    def __init__(self, fmt: str) -> None:
        self.json = fmt == "json"
        self._lock = threading.Lock()

    def event(self, _event: AlertEvent, payload: dict[str, Any]) -> None:
        """One event: a line on stderr, or a JSON line on stdout."""
        from rltop.alerts.payload import event_line
        from rltop.view.text.safe import visible

        with self._lock:
            if self.json:
                # ASCII-only JSON (as `snapshot --format json`): safe on a terminal, still exact.
                sys.stdout.write(json.dumps(payload, ensure_ascii=True, allow_nan=False) + "\n")
                sys.stdout.flush()
            else:
                note(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {visible(event_line(payload))}")

    def note(self, message: str) -> None:
        """An informational line on stderr (escaped)."""
        from rltop.view.text.safe import visible

        with self._lock:
            note(visible(message))

    def warn(self, message: str) -> None:
        """A warning line on stderr (escaped)."""
        from rltop.view.text.safe import visible

        with self._lock:
            warn(visible(message))
            sys.stderr.flush()


class _Watch:
    """The main-thread loop: batches in, verdicts made, events out."""

    def __init__(self, log: _Log, judged: JudgedStore, alerts: Alerts) -> None:
        self.log = log
        self.judged = judged
        self.alerts = alerts
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()  # the watcher never waits for us
        self.stop = threading.Event()
        self._announced = False

    def on_signal(self, signum: int, frame: object) -> None:
        """SIGINT/SIGTERM: finish the current round, then end."""
        self.stop.set()

    def loop(self, alive: Callable[[], bool], where: str) -> bool:
        """Until asked to stop (True) or the watcher died (False)."""
        while not self.stop.is_set():
            try:
                batch = self.inbox.get(timeout=0.2)
            except queue.Empty:
                if not alive():
                    return False
                batch = None
            while batch is not None:  # apply everything that is waiting, then judge once
                self.take(batch)
                try:
                    batch = self.inbox.get_nowait()
                except queue.Empty:
                    batch = None
            if self.judged.caught_up:
                self.judge(where)
        return True

    def take(self, batch: ChangeBatch) -> None:
        """Apply a batch; say what happened to the files (never mixed into the JSON on stdout)."""
        from rltop.ingest.feed import APPEARED

        self.judged.apply(batch)
        for event in batch.events:
            if event.kind == APPEARED and batch.initial:
                continue  # runs found by the first read are not news
            if event.kind.severity == "warning":  # `EventKind.severity`: a file error
                self.log.warn(event.message)
            else:
                self.log.note(event.message)

    def judge(self, where: str) -> None:
        """Judge what changed, and the runs whose stall verdict the clock may have changed; tell."""
        judged = self.judged
        if judged.judge(judged.dirty | judged.stale_runs()):
            self.alerts.observe_store(judged.store, judged.health, True)
        if not self._announced:
            self._announced = True
            self.log.note(_start_line(len(self.judged.store.runs), where, self.alerts))


def _start_line(runs: int, where: str, alerts: Alerts) -> str:
    from rltop.alerts.settings import webhook_labels

    settings = alerts.settings
    told = [name for name, on in (("--on-alert", settings.command), ("--notify", settings.desktop)) if on]
    told += webhook_labels(settings.webhooks)
    passing = f"; alerts at {settings.alert_on.label} and worse go to {', '.join(told)}" if told else ""
    return f"watching {runs} run{'s' * (runs != 1)} under {where}{passing}"


def run(args: argparse.Namespace) -> int:
    """Watch until Ctrl-C or SIGTERM."""

    settings = alert_settings(args)  # a bad URL, a missing notify-send: exit 2 before anything starts
    from rltop.alerts.dispatch import Alerts
    from rltop.alerts.events import Gate
    from rltop.health.engine import HealthEngine
    from rltop.health.findings import Level
    from rltop.health.settings import load_rules
    from rltop.ingest.follow.watcher import Watcher
    from rltop.ingest.storage import display as display_root
    from rltop.live.judged import JudgedStore
    from rltop.view.names import store_display_names

    log = _Log(args.format)
    judged = JudgedStore(engine=HealthEngine(load_rules(args.rules)))
    alerts = Alerts(settings, log.warn, names=store_display_names)
    alerts.listen(Gate(Level.WARN), log.event)  # the log hears everything at warn and worse
    watch = _Watch(log, judged, alerts)
    previous = install_stop_signals(watch.on_signal)
    watcher = None
    try:
        watcher = Watcher(args.paths, watch.inbox.put, poll=args.poll, tags=args.tags, runs=args.runs)
        watcher.start()  # DiscoveryError (exit 2) for a path that does not exist
        where = ", ".join(display_root(path) for path in args.paths)
        if not watch.loop(lambda: watcher.running, where):
            error_line("watching stopped (see the warning above)")
            return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    finally:
        if watcher is not None:
            watcher.stop()
        alerts.close(CLOSE_GRACE)
        for line in alerts.summary():
            log.note(line)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK
