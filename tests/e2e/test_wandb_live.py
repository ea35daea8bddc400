"""``rltop tail`` beside the real wandb SDK writing an offline run: every logged step printed once.

The SDK (wandb-core) writes its run file a 32 KiB block at a time, plus a flush now and then and
at ``finish()``: the writer logs until two blocks are on disk, waits until tail has printed some
of them (tail follows a file that is still being written), then logs the rest and finishes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from helpers.live import end_all, start_tail
from helpers.snapshot import isolate_user_rules, run_cli
from helpers.wandb_live import CRASHING, KEYS, RESUMING, UNSYNCED, WRITER, offline_env  # noqa: F401 (fixtures among them)


def test_tail_prints_each_step_of_a_live_wandb_run_once(tmp_path) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    expected_path = tmp_path / "expected.json"
    env = offline_env(tmp_path)
    writer = tail = None
    try:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(expected_path), json.dumps(KEYS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        paused = writer.stdout.readline().split()
        assert paused and paused[0] == "paused", paused
        tail, out, err = start_tail(str(root))
        # Points of the blocks on disk arrive while the writer still runs.
        out.wait(lambda lines: len(lines) >= len(KEYS), "the points of the first blocks", timeout=120)
        writer.stdin.write("go\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "done"
        assert writer.wait(timeout=120) == 0
        expected = sorted(tuple(point) for point in json.loads(expected_path.read_text()))
        out.wait(lambda lines: len(lines) >= len(expected), f"{len(expected)} points", timeout=120)
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0, err.lines
    finally:
        end_all(writer, tail)
    printed = [json.loads(line) for line in out.lines]
    run_id = next((root / "wandb").glob("offline-run-*")).name.rsplit("-", 1)[1]
    assert {point["run"] for point in printed} == {f"wandb/run-{run_id}"}
    got = sorted((point["tag"], point["step"], point["value"]) for point in printed)
    assert got == expected  # every logged point, exactly once
    steps = [point["step"] for point in printed if point["tag"] == KEYS[0]]
    assert steps == sorted(steps)
    assert not any("Traceback" in line for line in err.lines)


def test_a_crashed_wandb_run_is_critical_with_its_exit_code(tmp_path, capsys, monkeypatch) -> None:
    env = offline_env(tmp_path)
    crashed = subprocess.run(
        [sys.executable, "-c", CRASHING, str(tmp_path)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert crashed.returncode == 1
    isolate_user_rules(monkeypatch, tmp_path)
    code, out, err = run_cli(capsys, "snapshot", str(tmp_path / "wandb"), "--format", "json")
    assert code == 1, err  # a critical run fails the snapshot
    (run,) = json.loads(out)["runs"]
    assert run["exit_code"] == 1 and not run["finished"] and run["level"] == "critical"
    (finding,) = [f for f in run["findings"] if f["title"] == "crashed"]
    assert "exited with code 1" in finding["message"] and "stopped at step 5 of 100" in finding["message"]


def test_rows_without_their_step_metric_take_its_last_value(tmp_path) -> None:
    done = subprocess.run([sys.executable, "-c", UNSYNCED, str(tmp_path)], env=offline_env(tmp_path),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    from rltop.ingest.follow.loader import load

    (run,) = load([str(tmp_path / "wandb")]).store.runs.values()
    assert run.series["train/loss"].steps.tolist() == [1, 2, 3]
    # The first timer row comes before any global step: W&B's own row counter (_step 0) places it.
    assert run.series["profiling/Time taken: generate"].steps.tolist() == [0, 1, 2]


def test_a_resumed_wandb_run_is_one_run_whose_later_session_replaces_the_steps_it_logs_again(
    tmp_path,
) -> None:
    done = subprocess.run([sys.executable, "-c", RESUMING, str(tmp_path)], env=offline_env(tmp_path),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    folders = sorted(path.name for path in (tmp_path / "wandb").glob("offline-run-*-resumed1"))
    assert len(folders) == 2  # the SDK's two folders of one run id
    from rltop.ingest.follow.loader import load

    (run,) = load([str(tmp_path / "wandb")]).store.runs.values()
    assert run.name == "run-resumed1" and run.resumed_at == 3
    loss = run.series["train/loss"]
    assert loss.steps.tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert loss.values.tolist() == [1, 2, 13, 14, 15, 16, 17]  # steps 3..5 of the first session replaced
    assert [session.label for session in run.sessions] == folders
