"""Helpers of the MLflow tests: the real run's fixtures, a real ``mlflow server`` on 127.0.0.1, a writer
process logging with the real MLflow client step by step, and the comparisons with the event file."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np

from helpers.live import wait_until
from helpers.paths import FIXTURES

FIXTURES_MLFLOW = FIXTURES / "mlflow"
DATABASE = FIXTURES_MLFLOW / "sqlite" / "mlflow.db"
MLRUNS = FIXTURES_MLFLOW / "filestore" / "mlruns"
SQLITE_EVENTS = next((FIXTURES_MLFLOW / "sqlite" / "runs").iterdir())
FILESTORE_EVENTS = next((FIXTURES_MLFLOW / "filestore" / "runs").iterdir())
RUN_NAME = "Default/capable-auk-759"
PROFILING = "profiling/Time taken: GRPOTrainer."


def free_port() -> int:
    """A port nothing listens on now (the server binds it right after)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def healthy(url: str) -> bool:
    """True once the server answers its health endpoint."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


class MlflowServer:
    """``mlflow server`` on 127.0.0.1 with an SQLite backend store (a file the test owns)."""

    def __init__(self, database: Path, port: int | None = None) -> None:
        self.database = database
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> MlflowServer:
        """Start it and wait for its health endpoint (a state, not a duration)."""
        folder = self.database.parent
        log = folder / f"server-{self.port}.log"
        with open(log, "ab") as errors:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
                 "--workers", "1", "--backend-store-uri", f"sqlite:///{self.database}",
                 "--default-artifact-root", str(folder / "artifacts")],
                cwd=folder, stdout=subprocess.DEVNULL, stderr=errors,
                env={**os.environ, "MLFLOW_TRACKING_URI": "", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
                start_new_session=True,
            )  # fmt: skip
            # (No job execution: it starts 7 huey consumers, each importing mlflow, ~18 s of CPU per
            # start, for jobs the tracking API never runs.)
        wait_until(lambda: healthy(self.url) or self.process.poll() is not None, "mlflow server", 180)
        assert self.process.poll() is None, log.read_text()[-2000:]
        return self

    def stop(self) -> None:
        """Kill it (and its workers) and wait until it is gone."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        wait_until(lambda: not healthy(self.url), "the server to be gone", 60)


def server_copy(tmp: Path) -> Path:
    """A copy of the real run's database, for a server to use as its backend store."""
    target = tmp / "mlflow.db"
    shutil.copy(DATABASE, target)
    return target


WRITER = r"""
import sys
import mlflow

mlflow.set_tracking_uri(sys.argv[1])
mlflow.set_experiment(sys.argv[2])
steps = int(sys.argv[4])
with mlflow.start_run(run_name=sys.argv[3]) as run:
    mlflow.log_params({"learning_rate": "0.0001", "beta": "0.0", "max_steps": str(steps)})
    print("ready", run.info.run_id, flush=True)
    for step in range(1, steps + 1):
        sys.stdin.readline()
        mlflow.log_metrics({"loss": 1.0 / step, "reward": step / 10}, step=step)
        print("logged", step, flush=True)
print("done", flush=True)
"""


def start_writer(uri: str, experiment: str, run_name: str, steps: int, cwd: Path) -> subprocess.Popen:
    """A process logging ``loss`` and ``reward`` at steps 1..``steps`` with the real MLflow client, one
    step each time a line is written to its stdin."""
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, uri, experiment, run_name, str(steps)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd,
        env={**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true", "GIT_PYTHON_REFRESH": "quiet"},
    )  # fmt: skip


def said(process: subprocess.Popen, word: str) -> list[str]:
    """The writer's next line that starts with ``word``."""
    while True:
        line = process.stdout.readline()
        assert line, f"the writer ended before saying {word!r}"
        if line.startswith(word):
            return line.split()


def step(writer: subprocess.Popen, number: int) -> None:
    """Have the writer log step ``number`` and wait until it did."""
    writer.stdin.write("go\n")
    writer.stdin.flush()
    assert said(writer, "logged") == ["logged", str(number)]


def points_of_tail(lines: list[str]) -> list[tuple[str, str, int, float]]:
    """(run, tag, step, value) of every point ``rltop tail`` printed."""
    printed = [json.loads(line) for line in lines if line.startswith("{")]
    return sorted((p["run"], p["tag"], p["step"], p["value"]) for p in printed if "tag" in p)


def assert_same_points_as_the_event_file(mine, events) -> None:
    """The MLflow-read run holds the event file's points: the same steps and values (float32, as
    TensorBoard stores them) under the unprefixed keys, plus TRL's profiling timers only."""
    assert set(mine.series) - {tag.removeprefix("train/") for tag in events.series} == {
        tag for tag in mine.series if tag.startswith(PROFILING)
    }
    assert len([tag for tag in mine.series if tag.startswith(PROFILING)]) == 7
    for tag, theirs in events.series.items():
        ours = mine.series[tag.removeprefix("train/")]
        assert np.array_equal(ours.steps, theirs.steps), tag
        assert np.array_equal(
            ours.values.astype(np.float32), theirs.values.astype(np.float32), equal_nan=True
        ), tag
        assert np.all(np.abs(ours.wall_times - theirs.wall_times) < 5.0), tag


def findings(document: dict) -> list[dict]:
    """The findings of the only run of a snapshot document, tags without ``train/``, no run name."""
    (run,) = document["runs"]
    found = json.loads(json.dumps(run["findings"]).replace("train/", ""))
    for finding in found:
        finding.pop("run")
    return found
