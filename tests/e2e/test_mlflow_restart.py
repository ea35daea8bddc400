"""An MLflow tracking server killed while a run trains, and started again: ``rltop tail`` neither crashes
nor repeats itself (one clear line while the server is away, one when it is back), keeps what it read,
and reads every point logged after the restart, each once. A module of its own: it kills its server.
"""

from __future__ import annotations

import signal

import pytest
from helpers.live import end_all, start_tail
from helpers.mlflow import MlflowServer, points_of_tail, said, server_copy, start_writer, step

pytest.importorskip("mlflow")

STEPS = 4


def test_a_server_killed_mid_run_and_restarted(tmp_path) -> None:
    database = server_copy(tmp_path)
    server = MlflowServer(database).start()
    writer = tail = None
    try:
        writer = start_writer(server.url, "restart", "brave-owl-7", STEPS, tmp_path)
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
        server = MlflowServer(database, server.port).start()  # the same store, the same address
        err.wait(lambda lines: any("reachable again" in line for line in lines), "the reachable line", 120)
        for number in range(3, STEPS + 1):
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
        server.stop()
    name = "restart/brave-owl-7"
    assert points_of_tail(out.lines) == sorted(
        [(name, "loss", s, 1.0 / s) for s in range(1, STEPS + 1)]
        + [(name, "reward", s, s / 10) for s in range(1, STEPS + 1)]
    )
    down = [line for line in err.lines if "cannot reach" in line]
    assert len(down) == 1 and "connection refused" in down[0], err.lines
    assert len([line for line in err.lines if "reachable again" in line]) == 1
