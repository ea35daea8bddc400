"""Logs on object storage, end to end: the rltop commands against a real S3 server on 127.0.0.1.

The server is moto's server mode (``moto[server]``, in the test extra), started by the fixture
below on a free port and waited for by polling the port. rltop runs as a subprocess and finds the
server only through the standard ``AWS_ENDPOINT_URL`` variable, as a user's S3-compatible store.
Stopping the server mid-tail and starting it again on the same port keeps its objects (moto's
state lives in this process), exactly like a store that was unreachable for a while.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers.paths import FIXTURES, REPO, TRL

from rltop.ingest.sources.tfevents.tfrecord.writer import encode_event, frame_record, scalar_value

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")

ROOT = REPO  # the repository root
BUCKET = "rltop-logs"
DEADLINE = 60.0  # generous: a loaded machine is slow, and every wait ends on a state, not a duration


class RequestLog(logging.Handler):
    """Every request the server answered: (method, path, status), from werkzeug's access log."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, str, str]] = []
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if '"' not in message:
            return
        request = message.split('"')[1].split()
        status = message.split('"')[2].split()[0] if len(message.split('"')) > 2 else ""
        if len(request) >= 2:
            with self._lock:
                self.requests.append((request[0], request[1], status))

    def snapshot(self) -> list[tuple[str, str, str]]:
        with self._lock:
            return list(self.requests)


class S3Server:
    """moto's S3 server on 127.0.0.1, stoppable and restartable on its port (its objects stay)."""

    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_MAX_ATTEMPTS": "1",  # botocore's own retries off: rltop's back-off is what is tested
            "PYTHONPATH": str(ROOT),
        }
        self.log = RequestLog()
        werkzeug = logging.getLogger("werkzeug")
        werkzeug.addHandler(self.log)
        werkzeug.setLevel(logging.INFO)
        werkzeug.propagate = False
        self._server = None
        self.start()
        self.client = boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
            region_name="us-east-1",
        )  # fmt: skip
        self.client.create_bucket(Bucket=BUCKET)

    def start(self) -> None:
        self._server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        deadline = time.monotonic() + DEADLINE
        while True:  # the port accepts connections: the server is up
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def put(self, key: str, body: bytes) -> None:
        self.client.put_object(Bucket=BUCKET, Key=key, Body=body)

    def upload_tree(self, local: Path, prefix: str) -> None:
        for path in sorted(local.rglob("*")):
            if path.is_file():
                self.put(f"{prefix}/{path.relative_to(local).as_posix()}", path.read_bytes())


@pytest.fixture(scope="module")
def s3():
    server = S3Server()
    yield server
    server.stop()
    logging.getLogger("werkzeug").removeHandler(server.log)


def rltop(s3: S3Server, *argv: str, timeout: float = DEADLINE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rltop", *argv], capture_output=True, text=True, env=s3.env, timeout=timeout,
        stdin=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip


def local_rltop(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "rltop", *argv], capture_output=True, text=True, env=env,
                          timeout=DEADLINE, stdin=subprocess.DEVNULL, cwd=ROOT)  # fmt: skip


def side_by_side(
    s3: S3Server, remote: tuple[str, ...], local: tuple[str, ...]
) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """``rltop *remote`` against the server and ``rltop *local`` on disk, run at the same time
    (independent processes: the local one needs nothing of the server)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        on_s3, on_disk = pool.submit(rltop, s3, *remote), pool.submit(local_rltop, *local)
        return on_s3.result(), on_disk.result()


@pytest.fixture(scope="module")
def uploaded(s3):
    s3.upload_tree(TRL, "trl")
    return f"s3://{BUCKET}/trl"


def test_export_from_s3_is_the_export_from_disk(s3, uploaded):
    remote, disk = side_by_side(s3, ("export", uploaded), ("export", str(TRL)))
    assert remote.returncode == disk.returncode == 0, remote.stderr
    assert remote.stdout == disk.stdout and len(remote.stdout.splitlines()) > 10_000
    jsonl, disk = side_by_side(
        s3, ("export", f"{uploaded}/", "--format", "jsonl", "--runs", "ppo"),
        ("export", str(TRL), "--format", "jsonl", "--runs", "ppo"),
    )  # fmt: skip
    assert jsonl.stdout == disk.stdout


def test_snapshot_from_s3_is_the_snapshot_from_disk(s3, uploaded):
    remote, disk = side_by_side(
        s3, ("snapshot", uploaded, "--format", "json", "--fail-on", "never"),
        ("snapshot", str(TRL), "--format", "json", "--fail-on", "never"),
    )  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    ours, theirs = json.loads(remote.stdout), json.loads(disk.stdout)
    assert ours["paths"] == [uploaded] and ours["level"] == theirs["level"]
    for run in ours["runs"] + theirs["runs"]:
        run.pop("directory")
        run.pop("staleness_seconds")  # "now" differs between the two commands
        for session in run["sessions"]:
            session.pop("directory")  # an s3:// URL against a local path
    assert ours["runs"] == theirs["runs"] and len(ours["runs"]) == 7
    text = rltop(s3, "snapshot", f"{uploaded}/ppo_healthy", "--width", "100", "--fail-on", "never")
    assert "PPO · finished at step 150" in text.stdout and "trainer_state.json also present" in text.stdout


def test_checkpoints_alone_on_s3(s3):
    for step in (100, 200):
        state = TRL / "grpo_healthy" / f"checkpoint-{step}" / "trainer_state.json"
        s3.put(f"checkpoints/out/checkpoint-{step}/trainer_state.json", state.read_bytes())
    done = rltop(s3, "snapshot", f"s3://{BUCKET}/checkpoints", "--format", "json", "--fail-on", "never")
    (run,) = json.loads(done.stdout)["runs"]
    assert (run["name"], run["last_step"], run["source"]["kind"]) == ("out", 200, "trainer_state")


def test_a_wandb_run_file_on_s3_is_the_one_on_disk(s3):
    wandb = FIXTURES / "wandb" / "wandb_grpo" / "wandb"
    s3.upload_tree(wandb, "wandb-runs/wandb")
    remote, disk = side_by_side(
        s3, ("export", f"s3://{BUCKET}/wandb-runs/wandb", "--format", "jsonl"),
        ("export", str(wandb), "--format", "jsonl"),
    )  # fmt: skip
    assert remote.returncode == disk.returncode == 0, remote.stderr
    assert remote.stdout == disk.stdout and len(remote.stdout.splitlines()) > 500


def test_a_missing_bucket_and_a_bad_endpoint_are_one_line_errors(s3):
    env = {**s3.env, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}  # nothing listens there
    argv = [sys.executable, "-m", "rltop", "snapshot", f"s3://{BUCKET}/trl"]
    with ThreadPoolExecutor(max_workers=1) as pool:  # (its retries mostly wait: meanwhile, the other)
        unreachable = pool.submit(
            subprocess.run, argv, capture_output=True, text=True, env=env, timeout=DEADLINE, cwd=ROOT
        )
        missing = rltop(s3, "snapshot", "s3://no-such-bucket-here/x")
        down = unreachable.result()
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no such file" in missing.stderr
    assert down.returncode == 2 and down.stderr.count("\n") == 1 and "cannot reach the storage" in down.stderr


def scalar(step: int) -> bytes:
    return frame_record(encode_event(1.7e9 + step, step, scalar_value("train/loss", step / 10)))


HEAD = frame_record(encode_event(1.7e9, 0, file_version="brain.Event:2"))


class Tail:
    """``rltop tail`` as a subprocess: its stdout and stderr lines, gathered as they come."""

    def __init__(self, s3: S3Server, *paths: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rltop", "tail", *paths, "--poll", "0.2"], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=s3.env, cwd=ROOT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        self.out: queue.SimpleQueue = queue.SimpleQueue()
        self.lines: list[dict] = []
        self.errors: list[str] = []
        threading.Thread(target=self._pump, args=(self.process.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.process.stderr, False), daemon=True).start()

    def _pump(self, stream, data: bool) -> None:
        for line in stream:
            if data:
                self.lines.append(json.loads(line))
            else:
                self.errors.append(line.rstrip("\n"))

    def steps(self, run: str) -> list[int]:
        return [line["step"] for line in list(self.lines) if line["run"] == run]

    def wait(self, condition, what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not condition():
            assert self.process.poll() is None, f"tail ended: {self.errors}"
            assert time.monotonic() < deadline, f"timed out waiting for {what}: {self.errors}"
            time.sleep(0.02)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(DEADLINE)


def test_tail_follows_s3_through_an_outage_while_a_local_run_streams(s3, tmp_path):
    key = "live/remote/events.out.tfevents.1700000000.host"
    body = HEAD + b"".join(scalar(step) for step in range(1, 6))
    s3.put(key, body)
    local = tmp_path / "local" / "events.out.tfevents.1700000000.host"
    local.parent.mkdir()
    local.write_bytes(HEAD + scalar(1))
    tail = Tail(s3, f"s3://{BUCKET}/live", str(local.parent))
    try:
        tail.wait(
            lambda: tail.steps("live/remote") == [1, 2, 3, 4, 5] and tail.steps("local") == [1], "history"
        )
        # A longer object replaces the old one (how logs reach a store): exactly the new points, once.
        body += b"".join(scalar(step) for step in (6, 7, 8))
        s3.put(key, body)
        tail.wait(lambda: tail.steps("live/remote") == list(range(1, 9)), "the appended points")
        # Idle polls only ask for metadata: no byte of the unchanged object is downloaded again.
        seen = len(s3.log.snapshot())
        path = f"/{BUCKET}/{key}"
        tail.wait(
            lambda: sum(1 for r in s3.log.snapshot()[seen:] if r[:2] == ("HEAD", path)) >= 5, "idle polls"
        )
        assert not [r for r in s3.log.snapshot()[seen:] if r[0] == "GET" and r[1] == path]
        # The store goes away: one warning, quiet retries, and the local run keeps streaming.
        s3.stop()
        tail.wait(lambda: any("cannot reach the storage" in line for line in tail.errors), "the warning")
        for step in (2, 3):
            with open(local, "ab") as handle:
                handle.write(scalar(step))
            tail.wait(
                lambda step=step: tail.steps("local")[-1:] == [step], f"local step {step} during the outage"
            )
        # It comes back with what it had, plus more: "reachable again" once, and only the new points.
        s3.start()
        body += b"".join(scalar(step) for step in (9, 10))
        s3.put(key, body)
        tail.wait(
            lambda: tail.steps("live/remote") == list(range(1, 11)), "the points written during the outage"
        )
        tail.wait(lambda: any("reachable again" in line for line in tail.errors), "the all-clear")
    finally:
        code = tail.stop()
    assert code == 0
    assert tail.steps("live/remote") == list(range(1, 11)) and tail.steps("local") == [1, 2, 3]
    warnings = [line for line in tail.errors if "cannot reach the storage" in line]
    assert len(warnings) == 1 and warnings[0].startswith(f"rltop: warning: s3://{BUCKET}/live: cannot reach")
    assert len([line for line in tail.errors if "reachable again" in line]) == 1
    assert not [line for line in tail.errors if "Traceback" in line]


def test_completions_from_s3_are_the_completions_from_disk(s3):
    """TRL's completions/*.parquet under an s3:// output_dir: indexed and read through fsspec."""
    collapse = ROOT / "tests" / "fixtures" / "trl2" / "grpo_collapse"
    s3.upload_tree(collapse, "completions_run")
    url = f"s3://{BUCKET}/completions_run"
    for argv in (("--step", "58", "--format", "jsonl"), ("--step", "20", "--sort", "reward")):
        remote, disk = side_by_side(s3, ("completions", url, *argv), ("completions", str(collapse), *argv))
        assert remote.returncode == 0 == disk.returncode, remote.stderr
        assert remote.stdout == disk.stdout and remote.stderr == disk.stderr
    assert len(remote.stdout.splitlines()) > 16 and "step 34 ·" in remote.stdout
