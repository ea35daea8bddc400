"""The alert payload: valid JSON (non-finite values as strings), RLTOP_* variables, the writer's pid."""

from __future__ import annotations

import base64
import json
import os
import socket

import numpy as np
import pytest

from rltop.alerts.events import FINDING, FINISH, RECOVERY, AlertEvent
from rltop.alerts.payload import (
    event_environment,
    event_line,
    event_payload,
    headline,
    run_name_shown,
    writer_process,
)
from rltop.health.findings import Finding, Level
from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter
from rltop.model.run import Store

NAN_FINDING = Finding(
    Level.CRITICAL,
    "non_finite",
    "grpo/a",
    "train/loss",
    12,
    float("nan"),
    "train/loss is NaN at step 12.",
    "Lower the learning rate.",
    first_step=12,
    last_step=12,
    active=True,
    title="non-finite value",
)


def test_payload_fields_and_json_without_nan(tmp_path):
    store = Store()
    run = store.run("grpo/a", str(tmp_path / "grpo" / "a"))
    run.add_points("train/loss", np.array([11, 12]), np.array([1.0, 2.0]), np.array([1.0, np.nan]))
    payload = event_payload(
        AlertEvent(FINDING, "grpo/a", Level.CRITICAL, NAN_FINDING, tags=("train/loss",)),
        run,
        now=1_800_000_000.0,
    )
    text = json.dumps(payload, allow_nan=False)  # raises on NaN: the payload must not hold one
    back = json.loads(text)
    assert back["value"] == "nan"
    assert {
        key: back[key]
        for key in (
            "event",
            "level",
            "run",
            "display_name",
            "rule",
            "tag",
            "step",
            "first_step",
            "message",
            "advice",
        )
    } == {
        "event": "finding",
        "level": "critical",
        "run": "grpo/a",
        "display_name": "grpo/a",
        "rule": "non_finite",
        "tag": "train/loss",
        "step": 12,
        "first_step": 12,
        "message": "train/loss is NaN at step 12.",
        "advice": "Lower the learning rate.",
    }
    assert back["directory"] == str(tmp_path / "grpo" / "a")
    assert back["time"] == "2027-01-15T08:00:00Z" and back["run_step"] == 12
    assert back["writer"] is None  # no event file in that directory


@pytest.mark.parametrize("value, shown", [(float("inf"), "inf"), (float("-inf"), "-inf"), (0.1, 0.1)])
def test_values_in_json(value, shown):
    finding = Finding(Level.CRITICAL, "non_finite", "r", "t", 1, value, "m", "a")
    payload = event_payload(AlertEvent(FINDING, "r", Level.CRITICAL, finding), None)
    assert json.loads(json.dumps(payload, allow_nan=False))["value"] == shown


def test_environment_carries_the_same_facts_and_survives_nul():
    finding = Finding(
        Level.CRITICAL, "non_finite", "bad\x00name", "train/loss", 3, 1.5, "m", "a", first_step=2
    )
    payload = event_payload(AlertEvent(FINDING, "bad\x00name", Level.CRITICAL, finding), None)
    env = event_environment(payload)
    assert env["RLTOP_EVENT"] == "finding" and env["RLTOP_LEVEL"] == "critical"
    assert env["RLTOP_RUN"] == "bad\\x00name" and env["RLTOP_TAG"] == "train/loss"
    assert env["RLTOP_STEP"] == "3" and env["RLTOP_FIRST_STEP"] == "2" and env["RLTOP_VALUE"] == "1.5"
    assert env["RLTOP_PID"] == "" and env["RLTOP_SAME_HOST"] == "0"
    assert all("\x00" not in value for value in env.values())


def test_writer_process_from_the_newest_event_file(tmp_path):
    run_dir = tmp_path / "run"
    with EventWriter(run_dir) as writer:
        writer.add_scalar("train/loss", 1.0, 1)
    found = writer_process(str(run_dir))
    assert found["pid"] == os.getpid() and found["host"] == socket.gethostname()
    assert found["same_host"] is True and found["running"] is True
    newer = run_dir / "events.out.tfevents.1900000000.node01.cluster.local.4242.7"
    newer.write_bytes(b"")
    os.utime(newer, (2e9, 2e9))
    found = writer_process(str(run_dir))
    assert (found["host"], found["pid"], found["same_host"]) == ("node01.cluster.local", 4242, False)
    assert found["running"] is None  # another host: cannot know
    tbx = tmp_path / "tbx"
    tbx.mkdir()
    (tbx / "events.out.tfevents.1900000000.gpu-7").write_bytes(b"")  # tensorboardX: no pid
    assert (writer_process(str(tbx))["host"], writer_process(str(tbx))["pid"]) == ("gpu-7", None)
    assert writer_process(str(tmp_path / "missing")) is None


def test_texts_of_each_kind():
    store = Store()
    run = store.run("a", "/x/a")
    run.add_points("train/loss", np.array([1, 30]), np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    finding = NAN_FINDING
    found = event_payload(AlertEvent(FINDING, "a", Level.CRITICAL, finding), run)
    assert event_line(found) == "CRITICAL a: train/loss is NaN at step 12."
    assert headline(found) == "rltop: CRITICAL a: non-finite value"
    escalated = event_payload(AlertEvent("escalation", "a", Level.CRITICAL, finding, Level.WARN), run)
    assert event_line(escalated).startswith("WARN→CRITICAL a: ")
    recovered = event_payload(AlertEvent(RECOVERY, "a", Level.CRITICAL, finding, tags=("train/loss",)), run)
    assert event_line(recovered) == (
        "RECOVERED a: non-finite value is back to normal on train/loss (steps 12-12; it reached critical)"
    )
    assert recovered["message"] == event_line(recovered).split(": ", 1)[1]
    finished = event_payload(AlertEvent(FINISH, "a", Level.WARN, findings=2), run)
    assert event_line(finished) == "FINISHED a: finished at step 30; final verdict warn (2 findings)"
    assert finished["rule"] is None and finished["value"] is None


def test_display_name_defaults_to_the_run_name():
    store = Store()
    assert run_name_shown(store.run("grpo/seed1", "/x")) == "grpo/seed1" == run_name_shown("grpo/seed1")


def test_payload_display_name_is_the_one_the_screen_shows(tmp_path):
    """Alerts name a run as the dashboard and the snapshot do (shared folders and sessions dropped)."""
    from rltop.alerts.dispatch import Alerts
    from rltop.alerts.events import Gate
    from rltop.alerts.settings import AlertSettings
    from rltop.health.engine import HealthEngine
    from rltop.view.names import store_display_names

    store = Store()
    for seed in (1, 2):
        name = f"exp/seed_{seed}/runs/Dec01_10-00-0{seed}_vm"
        run = store.run(name, str(tmp_path / name))
        values = np.ones(20)
        values[-1] = np.nan if seed == 2 else 1.0
        run.add_points("train/loss", np.arange(1, 21), 1.8e9 + np.arange(20.0), values)
    payloads: list[dict] = []
    alerts = Alerts(AlertSettings(), lambda line: None, names=store_display_names)
    alerts.listen(Gate(Level.CRITICAL), lambda _event, payload: payloads.append(payload))
    engine = HealthEngine()
    alerts.observe_store(store, {name: engine.assess(run) for name, run in store.runs.items()}, True)
    (payload,) = payloads
    assert payload["run"] == "exp/seed_2/runs/Dec01_10-00-02_vm"
    assert payload["display_name"] == "exp/seed_2"  # a lone seed_2 keeps its parent


def test_a_remote_run_keeps_its_url():
    """A run read from object storage is named by its URL, not made into a local path."""
    store = Store()
    run = store.run("exp/run", "s3://bucket/exp/run")
    payload = event_payload(AlertEvent(FINISH, "exp/run", Level.OK), run)
    assert payload["directory"] == "s3://bucket/exp/run" and payload["writer"] is None
    assert base64.b64decode(payload["directory_b64"]) == b"s3://bucket/exp/run"
