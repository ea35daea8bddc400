"""An MLflow tracking server (a real ``mlflow server`` started here on 127.0.0.1, its backend store a copy
of the real run's ``mlflow.db``): the run read through the REST API gives the event file's points and
verdicts; a poll asks only for the histories that moved; points logged by the real client while rltop
follows arrive once each; two processes logging runs of one name show as two runs of their experiment;
bad input is one line and exit 2; MLflow's own auth variables are sent. Last, the server is killed while
a run trains and started again: ``rltop tail`` neither crashes nor repeats itself (one clear line while
the server is away, one when it is back), keeps what it read, and reads every point logged after the
restart, each once (the module's last test: it kills the module's server).
"""

from __future__ import annotations

import json
import signal
import urllib.request

import pytest
from helpers.live import HttpServer, end_all, start_tail, wait_until
from helpers.mlflow import (
    RUN_NAME,
    SQLITE_EVENTS,
    MlflowServer,
    assert_same_points_as_the_event_file,
    findings,
    free_port,
    points_of_tail,
    said,
    server_copy,
    start_writer,
    step,
)
from helpers.snapshot import isolate_user_rules, run_cli

from rltop.ingest.follow.discovery import discover
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.mlflow import rest as mlflow_rest
from rltop.ingest.sources.mlflow import server as mlflow_server
from rltop.ingest.sources.mlflow.server_reader import MlflowServerReader

pytest.importorskip("mlflow")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module (starting one costs seconds)."""
    started = MlflowServer(server_copy(tmp_path_factory.mktemp("server"))).start()
    yield started
    started.stop()


@pytest.fixture(autouse=True)
def fresh_listing():
    """Each test lists the servers anew (a module's tests add runs to the same server)."""
    mlflow_server.forget_servers()
    yield
    mlflow_server.forget_servers()


def test_the_server_and_the_event_file_hold_the_same_points(server, monkeypatch) -> None:
    sent: list[tuple[str, str]] = []
    send = mlflow_rest.Client._send

    def recording(client, method: str, target: str, data: bytes | None) -> tuple[int, bytes]:
        sent.append((method, target.partition("?")[0]))
        return send(client, method, target, data)

    monkeypatch.setattr(mlflow_rest.Client, "_send", recording)
    runs = load([server.url]).store.runs
    assert {request for request in sent} == {  # read-only endpoints, nothing else
        ("POST", "/api/2.0/mlflow/experiments/search"),
        ("POST", "/api/2.0/mlflow/runs/search"),
        ("GET", "/api/2.0/mlflow/metrics/get-history"),
    }
    mine = runs[RUN_NAME]
    assert mine.source == "mlflow" and mine.scalar_count() == 1326
    assert_same_points_as_the_event_file(mine, next(iter(load([str(SQLITE_EVENTS)]).store.runs.values())))
    assert (mine.config["learning_rate"], mine.config["max_steps"]) == (0.0001, 40)


def test_the_same_verdict_as_the_event_file(server, capsys, tmp_path, monkeypatch) -> None:
    isolate_user_rules(monkeypatch, tmp_path)
    documents = []
    for target in (f"mlflow://127.0.0.1:{server.port}", str(SQLITE_EVENTS)):
        code, out, err = run_cli(capsys, "snapshot", "-f", "json", "--runs", "capable-auk|Dec04", target)
        assert code == 0, err  # a healthy run: a truncation warning, nothing critical
        documents.append(json.loads(out))
    assert documents[0]["runs"][0]["name"] == RUN_NAME
    assert findings(documents[0]) == findings(documents[1])


def test_a_poll_asks_only_for_the_histories_that_moved(server, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(mlflow_server, "FRESH", 0.0)  # every read asks for the runs' state
    writer = start_writer(server.url, "polls", "quiet-fox-1", 2, tmp_path)
    try:
        run_id = said(writer, "ready")[1]
        backend = mlflow_server.backend(server.url)
        path = next(p for p, ident in _run_files(backend).items() if ident == run_id)
        reader = MlflowServerReader(path)
        first = reader.read()
        assert first.decoded.scalars == {} and first.decoded.config["beta"] == 0.0
        requests = backend.client.requests
        assert reader.read().bytes_read == 0
        assert backend.client.requests - requests == 1  # one runs/search, no history
        for number in (1, 2):
            step(writer, number)
            requests = backend.client.requests
            read = reader.read()
            assert {tag: points.steps.tolist() for tag, points in read.decoded.scalars.items()} == {
                "loss": [number], "reward": [number],
            }  # fmt: skip
            assert backend.client.requests - requests == 3  # runs/search + the two histories that moved
        assert writer.wait(timeout=120) == 0
    finally:
        end_all(writer)


def test_points_logged_with_an_older_timestamp_are_counted_once(server, monkeypatch) -> None:
    monkeypatch.setattr(mlflow_server, "FRESH", 0.0)
    run_id = api(server.url, "runs/create", {"experiment_id": "0", "run_name": "late-clock"})["run"]["info"][
        "run_id"
    ]

    def log(step: int, timestamp: int) -> None:
        point = {"run_id": run_id, "key": "loss", "value": step, "timestamp": timestamp, "step": step}
        api(server.url, "runs/log-metric", point)

    log(1, 2000)
    log(2, 3000)
    backend = mlflow_server.backend(server.url)
    reader = MlflowServerReader(next(p for p, ident in _run_files(backend).items() if ident == run_id))
    assert reader.read().decoded.scalars["loss"].steps.tolist() == [1, 2]
    log(3, 1000)  # before the last point read: MLflow orders it first
    log(4, 4000)
    late = reader.read()
    assert late.decoded.scalars["loss"].steps.tolist() == [4]
    said_once = "1 point(s) logged with a timestamp before the last one read (another clock?): not read"
    assert late.problems == [f"{reader.path}: loss: {said_once}"]
    log(5, 5000)
    again = reader.read()
    assert again.decoded.scalars["loss"].steps.tolist() == [5] and again.problems == []


def api(url: str, endpoint: str, body: dict) -> dict:
    """One POST to the test's own server (the test logs; rltop only reads)."""
    request = urllib.request.Request(
        f"{url}/api/2.0/mlflow/{endpoint}", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read() or b"{}")


def _run_files(backend) -> dict[str, str]:
    backend.list_tree()
    return dict(backend._files)


def test_points_logged_while_rltop_follows_arrive_once_each(server, tmp_path) -> None:
    writer = tail = None
    try:
        writer = start_writer(server.url, "live", "calm-river-1", 3, tmp_path)
        said(writer, "ready")
        tail, out, err = start_tail("--poll", "0.2", "--runs", "calm-river", server.url)
        for number in range(1, 4):
            step(writer, number)
            out.wait(
                lambda lines, n=number: sum(f'"step": {n},' in line for line in lines) >= 2,
                f"the points of step {number}",
                timeout=120,
            )
        said(writer, "done")
        assert writer.wait(timeout=120) == 0
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0, err.lines
    finally:
        end_all(writer, tail)
    name = "live/calm-river-1"
    assert points_of_tail(out.lines) == sorted(
        [(name, "loss", s, 1.0 / s) for s in range(1, 4)] + [(name, "reward", s, s / 10) for s in range(1, 4)]
    )


def test_two_processes_logging_runs_of_one_name_show_as_two_runs_of_their_experiment(
    server, tmp_path
) -> None:
    api(
        server.url, "experiments/create", {"name": "seeds"}
    )  # two processes creating it at once race in MLflow
    writers = [start_writer(server.url, "seeds", "seed-run", 1, tmp_path) for _ in range(2)]
    try:
        ids = sorted(said(writer, "ready")[1] for writer in writers)
        for writer in writers:
            step(writer, 1)
            assert writer.wait(timeout=120) == 0
    finally:
        end_all(*writers)
    runs = [run for run in discover([server.url]).runs if run.name.startswith("seeds/")]
    assert sorted(run.name for run in runs) == [f"seeds/seed-run ({ident[:8]})" for ident in ids]
    assert {run.directory.rsplit("/", 1)[0] for run in runs} == {f"{server.url}/seeds"}
    loaded = load([server.url], runs="^seeds/").store.runs
    assert sorted(loaded) == sorted(run.name for run in runs)
    assert all(run.series["loss"].values.tolist() == [1.0] for run in loaded.values())


@pytest.mark.parametrize(
    "url, words",
    [
        ("http://", "not a tracking server URL"),
        ("http://127.0.0.1:notaport", "not a valid port"),
        ("refused", "cannot reach the storage: connection refused"),
        ("other", "not an MLflow tracking server"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(url, words, capsys) -> None:
    other = HttpServer() if url == "other" else None
    try:
        if url == "refused":
            url = f"http://127.0.0.1:{free_port()}"
        elif other is not None:
            url = other.url
        code, out, err = run_cli(capsys, "snapshot", url)
    finally:
        if other is not None:
            other.close()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err, err


def test_mlflow_auth_variables_are_sent(monkeypatch) -> None:
    other = HttpServer()
    try:
        monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "s3cret")
        with pytest.raises(mlflow_rest.NotMlflow):
            mlflow_rest.Client(other.url).search_experiments()
        monkeypatch.delenv("MLFLOW_TRACKING_TOKEN")
        monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", "ada")
        monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", "pw")
        with pytest.raises(mlflow_rest.NotMlflow):
            mlflow_rest.Client(other.url).search_experiments()
        wait_until(lambda: len(other.requests) == 2, "the two requests")
    finally:
        other.close()
    headers = [request["headers"].get("Authorization") for request in other.requests]
    assert headers == ["Bearer s3cret", "Basic YWRhOnB3"]
    assert [request["path"] for request in other.requests] == ["/api/2.0/mlflow/experiments/search"] * 2


def test_a_server_that_answers_5xx_is_tried_again_then_unreachable() -> None:
    failing = HttpServer(otherwise=503)
    try:
        with pytest.raises(mlflow_server.storage.Unreachable, match="HTTP 503"):
            mlflow_rest.Client(failing.url).search_experiments()
    finally:
        failing.close()
    assert failing.arrived == mlflow_rest.ATTEMPTS


RESTART_STEPS = 4


def test_a_server_killed_mid_run_and_restarted(server, tmp_path) -> None:
    # Last in the module: it kills the module's server (and starts it again, on the same store and port).
    writer = tail = None
    try:
        writer = start_writer(server.url, "restart", "brave-owl-7", RESTART_STEPS, tmp_path)
        said(writer, "ready")
        tail, out, err = start_tail("--poll", "0.2", "--runs", "brave-owl", server.url)
        for number in (1, 2):
            step(writer, number)
            out.wait(
                lambda lines, n=number: sum(f'"step": {n},' in line for line in lines) >= 2, f"step {number}"
            )
        server.stop()
        err.wait(lambda lines: any("cannot reach" in line for line in lines), "the unreachable line", 120)
        assert tail.poll() is None  # no crash
        server.start()  # the same store, the same address
        err.wait(lambda lines: any("reachable again" in line for line in lines), "the reachable line", 120)
        for number in range(3, RESTART_STEPS + 1):
            step(writer, number)
            out.wait(
                lambda lines, n=number: sum(f'"step": {n},' in line for line in lines) >= 2,
                f"step {number}",
                timeout=120,
            )
        said(writer, "done")
        assert writer.wait(timeout=120) == 0
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0, err.lines
    finally:
        end_all(writer, tail)
    name = "restart/brave-owl-7"
    assert points_of_tail(out.lines) == sorted(
        [(name, "loss", s, 1.0 / s) for s in range(1, RESTART_STEPS + 1)]
        + [(name, "reward", s, s / 10) for s in range(1, RESTART_STEPS + 1)]
    )
    down = [line for line in err.lines if "cannot reach" in line]
    assert len(down) == 1 and "connection refused" in down[0], err.lines
    assert len([line for line in err.lines if "reachable again" in line]) == 1
