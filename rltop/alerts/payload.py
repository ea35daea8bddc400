"""What an alert says: the JSON payload, the ``RLTOP_*`` environment and the texts people read.

The payload is built once per event and every recipient uses it: ``rltop watch --format json``
prints it, an ``--on-alert`` command reads it on stdin (and the same facts as ``RLTOP_*``
variables), a raw-JSON webhook posts it, chat and desktop notifications show its texts.

JSON has no NaN: a non-finite ``value`` is the string ``"nan"``, ``"inf"`` or ``"-inf"``, as in
``rltop snapshot --format json``.

Every text in the payload is display-safe, whatever the names in the files hold: it goes through
`rltop.model.names.visible`, the escaping the terminal uses (a byte that is not UTF-8 is ``\\xNN``,
ESC ``\\x1b``, a right-to-left override ``\\u202e``; control, format, bidi and invisible characters
likewise). So the JSON is always valid UTF-8, an environment value never holds NUL, and no chat
message, notification or log line that shows a name can be reordered, restyled or retitled by it.
A name is shown as the dashboard shows it. What a script needs exactly is kept apart: the
directory's bytes, base64-encoded, in ``directory_b64`` (``RLTOP_DIRECTORY_RAW`` in a hook's
environment, where a value can be any bytes but NUL); ``directory`` is their display-safe form,
equal to them for every ordinary name.
"""

from __future__ import annotations

import base64
import os
import re
import socket
import time
from typing import Any

from rltop import __version__
from rltop.alerts.events import ESCALATION, FINISH, RECOVERY, STALL, AlertEvent
from rltop.ingest.storage import display as where
from rltop.model.durations import iso_utc
from rltop.model.names import display_message, visible
from rltop.model.run import Run
from rltop.model.values import json_number

# torch's SummaryWriter (what transformers uses): events.out.tfevents.<time>.<host>.<pid>.<n>[suffix];
# tensorboardX: events.out.tfevents.<time>.<host>[suffix] (no pid). Host names may hold dots.
_TORCH_NAME = re.compile(r"^events\.out\.tfevents\.\d+\.(?P<host>.+)\.(?P<pid>\d+)\.\d+(?:\..*)?$")
_ANY_NAME = re.compile(r"^events\.out\.tfevents\.\d+\.(?P<host>.+)$")
_EVENT_PREFIX = "events.out.tfevents."


def run_name_shown(run: Run | str) -> str:
    """The name alerts give a run when no display name was given: its name (the directory relative to
    the watched root)."""
    return run if isinstance(run, str) else run.name


def writer_process(directory: str) -> dict[str, Any] | None:
    """Host and pid of the process writing the newest event file of a run directory, from its name.

    ``same_host`` says whether that host is this one, and ``running`` whether the pid exists here
    (None when it cannot be known). None when the directory holds no event file or cannot be read.
    """
    try:
        with os.scandir(directory) as entries:
            files = [
                (entry.stat().st_mtime, entry.name)
                for entry in entries
                if entry.name.startswith(_EVENT_PREFIX) and entry.is_file()
            ]
    except OSError:
        return None
    if not files:
        return None
    name = max(files)[1]
    match = _TORCH_NAME.match(name)
    pid = int(match["pid"]) if match else None
    if match is None:
        match = _ANY_NAME.match(name)
    host = match["host"] if match else None
    same_host = host is not None and host == socket.gethostname()
    return {
        "file": name,
        "host": host,
        "pid": pid,
        "same_host": same_host,
        "running": _pid_running(pid) if same_host and pid is not None else None,
    }


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    except OSError:
        return False
    return True


def event_payload(
    event: AlertEvent, run: Run | None, now: float | None = None, display: str | None = None
) -> dict[str, Any]:
    """The JSON-ready payload of ``event`` (``run``: the store's entry, for directory and steps;
    ``display``: the run's display name, as the screen shows it)."""
    finding = event.finding
    now = time.time() if now is None else now
    single = True
    if finding is not None and run is not None and finding.tag in run.series:
        single = run.series[finding.tag].single_precision
    directory = where(run.directory) if run is not None and run.directory else None  # s3://… stays a URL
    payload: dict[str, Any] = {
        "event": event.kind,
        "level": event.level.label,
        "previous_level": event.previous_level.label if event.previous_level is not None else None,
        "run": event.run,
        "display_name": display or run_name_shown(run if run is not None else event.run),
        "directory": directory,
        "directory_b64": base64.b64encode(os.fsencode(directory)).decode("ascii") if directory else None,
        "rule": finding.rule if finding is not None else None,
        "title": finding.title if finding is not None else None,
        "tag": finding.tag if finding is not None and finding.tag else None,
        "tags": [tag for tag in event.tags if tag],
        "step": finding.step if finding is not None else None,
        "first_step": finding.first_step if finding is not None else None,
        "last_step": finding.last_step if finding is not None else None,
        "value": json_number(finding.value, single) if finding is not None else None,
        "message": finding.message if finding is not None else None,  # recovery, finish: see below
        "advice": finding.advice if finding is not None else None,
        "initial": event.initial,
        "run_step": run.last_step if run is not None else None,
        "run_findings": event.findings if event.kind == FINISH else None,
        "writer": writer_process(directory) if directory else None,
        "time": iso_utc(now),
        "time_unix": now,
        "generator": f"rltop {__version__}",
    }
    payload = display_safe(payload)
    if event.kind in (RECOVERY, FINISH):
        payload["message"] = _body(payload)  # what happened now, not the finding's old words
    return payload


def display_safe(value: Any) -> Any:
    """``value`` with every string in it (in lists and dicts too) made display-safe by `visible`."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [display_safe(item) for item in value]
    if isinstance(value, dict):
        return {key: display_safe(item) for key, item in value.items()}
    return value


def raw_directory(payload: dict[str, Any]) -> str | None:
    """The run directory's exact path (undecodable bytes as surrogate escapes, as `os.fsdecode` gives
    them), from ``directory_b64``; None when the payload names no directory."""
    encoded = payload.get("directory_b64")
    return os.fsdecode(base64.b64decode(encoded)) if encoded else None


def event_environment(payload: dict[str, Any]) -> dict[str, str]:
    """``RLTOP_EVENT``, ``RLTOP_RUN``, ``RLTOP_LEVEL``… for a hook (empty strings for missing values).

    Every value is display-safe text but ``RLTOP_DIRECTORY_RAW``, the directory's exact bytes (an
    environment value may hold any byte but NUL, which a path never holds; `subprocess` writes a
    surrogate escape back as its byte).
    """
    writer = payload.get("writer") or {}
    values = {
        "EVENT": payload["event"],
        "LEVEL": payload["level"],
        "PREVIOUS_LEVEL": payload["previous_level"],
        "RUN": payload["run"],
        "DISPLAY_NAME": payload["display_name"],
        "DIRECTORY": payload["directory"],
        "RULE": payload["rule"],
        "TITLE": payload["title"],
        "TAG": payload["tag"],
        "STEP": payload["step"],
        "FIRST_STEP": payload["first_step"],
        "LAST_STEP": payload["last_step"],
        "VALUE": payload["value"],
        "MESSAGE": payload["message"],
        "INITIAL": "1" if payload["initial"] else "0",
        "RUN_STEP": payload["run_step"],
        "HOST": writer.get("host"),
        "PID": writer.get("pid"),
        "SAME_HOST": "1" if writer.get("same_host") else "0",
    }
    environment = {f"RLTOP_{key}": _env_text(value) for key, value in values.items()}
    environment["RLTOP_DIRECTORY_RAW"] = raw_directory(payload) or ""
    return environment


def _env_text(value: object) -> str:
    # The payload's texts are display-safe already (no NUL, no surrogate); numbers become text.
    return "" if value is None else visible(str(value))


def label(payload: dict[str, Any]) -> str:
    """The event in one or two words: ``CRITICAL``, ``WARN→CRITICAL``, ``RECOVERED``, ``FINISHED``…"""
    kind, level = payload["event"], payload["level"].upper()
    if kind == RECOVERY:
        return "RECOVERED"
    if kind == FINISH:
        return "FINISHED"
    if kind == STALL:
        return f"STALLED {level}"
    if kind == ESCALATION and payload["previous_level"]:
        return f"{payload['previous_level'].upper()}→{level}"
    return level


def event_line(payload: dict[str, Any]) -> str:
    """One line for a log or a toast: label, run, and the message in display names (raw text:
    escape it); the payload's own ``message`` stays the engine's words."""
    head = f"{label(payload)} {payload['display_name']}"
    message = display_message(payload["message"] or "", payload["tag"] or "", "", payload["run"] or "",
                              payload["display_name"] or "")  # fmt: skip
    return f"{head}: {message}"


def _body(payload: dict[str, Any]) -> str:
    kind = payload["event"]
    if kind == FINISH:
        count = payload["run_findings"] or 0
        findings = f"{count} finding{'s' * (count > 1)}"
        verdict = f"final verdict {payload['level']} ({findings})" if count else "no finding"
        return f"finished at step {payload['run_step']}; {verdict}"
    if kind == RECOVERY:
        where = f" on {', '.join(payload['tags'])}" if payload["tags"] else ""
        first, last = payload["first_step"], payload["last_step"]
        span = f"steps {first}-{last}; " if first is not None else ""
        return f"{payload['title']} is back to normal{where} ({span}it reached {payload['level']})"
    return str(payload["message"])


def headline(payload: dict[str, Any]) -> str:
    """A short title for a notification: ``rltop: CRITICAL grpo_a: entropy collapse``."""
    what = payload["title"] if payload["event"] not in (FINISH, RECOVERY) and payload["title"] else ""
    return f"rltop: {label(payload)} {payload['display_name']}" + (f": {what}" if what else "")


def event_text(payload: dict[str, Any]) -> str:
    """A few lines for chat and desktop notifications: the log line, then the advice."""
    text = event_line(payload)
    if payload["event"] not in (FINISH, RECOVERY) and payload["advice"]:
        text += f"\n{payload['advice']}"
    return text
