"""``rltop tail`` beside the real wandb SDK writing an offline run: every logged step printed once.

The SDK (wandb-core) writes its run file a 32 KiB block at a time, plus a flush now and then and
at ``finish()``: the writer logs until two blocks are on disk, waits until tail has printed some
of them (tail follows a file that is still being written), then logs the rest and finishes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from live_helpers import end_all, start_tail
from test_snapshot_helpers import isolate_user_rules, run_cli

KEYS = [f"train/metric_{index:02d}" for index in range(24)]

WRITER = r"""
import glob, json, os, sys
import wandb

root, expected_path = sys.argv[1], sys.argv[2]
keys = json.loads(sys.argv[3])
run = wandb.init(project="rltop-live", mode="offline", dir=root, config={"beta": 0.04, "max_steps": 160})
run.define_metric("train/global_step")
run.define_metric("*", step_metric="train/global_step", step_sync=True)  # as transformers' WandbCallback
written = []

def log(step):
    row = {key: step + index / 100 for index, key in enumerate(keys)}
    run.log({**row, "train/global_step": step})
    written.extend([key, step, value] for key, value in row.items())

def file_size():
    files = glob.glob(os.path.join(root, "wandb", "offline-run-*", "run-*.wandb"))
    return os.path.getsize(files[0]) if files else 0

step = 0
while file_size() < 2 * 32768:  # logs until two whole blocks are on disk
    step += 1
    log(step)
    if step >= 100000:
        raise SystemExit("the run file does not grow")
print("paused", step, flush=True)
sys.stdin.readline()
for later in range(step + 1, step + 40):
    log(later)
run.finish()
with open(expected_path, "w") as handle:
    json.dump(written, handle)
print("done", flush=True)
"""


def offline_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a wandb SDK run that stays on this machine and out of the user's config."""
    return {
        **os.environ,
        "WANDB_MODE": "offline",
        "WANDB_SILENT": "true",
        "WANDB_DISABLE_GIT": "true",
        "WANDB_CONFIG_DIR": str(tmp_path / "config"),
        "WANDB_CACHE_DIR": str(tmp_path / "cache"),
    }


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


CRASHING = r"""
import sys
import wandb

config = {"beta": 0.04, "max_steps": 100}
run = wandb.init(project="rltop-crash", mode="offline", dir=sys.argv[1], config=config)
run.define_metric("train/global_step")
run.define_metric("*", step_metric="train/global_step")
for step in range(1, 6):
    run.log({"train/loss": 1.0 / step, "train/global_step": step})
raise RuntimeError("CUDA out of memory (simulated)")
"""


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


UNSYNCED = r"""
import sys
import wandb

run = wandb.init(project="rltop-steps", mode="offline", dir=sys.argv[1])
run.define_metric("train/global_step")
run.define_metric("*", step_metric="train/global_step", step_sync=False)
for step in range(1, 4):
    run.log({"profiling/Time taken: generate": step / 100})  # as TRL's profiling timers log
    run.log({"train/loss": 1.0 / step, "train/global_step": step})
run.finish()
"""


def test_rows_without_their_step_metric_take_its_last_value(tmp_path) -> None:
    done = subprocess.run([sys.executable, "-c", UNSYNCED, str(tmp_path)], env=offline_env(tmp_path),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    from rltop.ingest.follow.loader import load

    (run,) = load([str(tmp_path / "wandb")]).store.runs.values()
    assert run.series["train/loss"].steps.tolist() == [1, 2, 3]
    # The first timer row comes before any global step: W&B's own row counter (_step 0) places it.
    assert run.series["profiling/Time taken: generate"].steps.tolist() == [0, 1, 2]


RESUMING = r"""
import sys, time
import wandb

# Preempted after step 5, resumed from the checkpoint at step 2: the second session logs 3..7.
for session, (start, stop) in enumerate([(1, 6), (3, 8)]):
    if session:  # the SDK names a run folder to the second: a resume within it would share it
        began = int(time.time())
        while int(time.time()) == began:
            time.sleep(0.01)
    run = wandb.init(project="rltop-resume", mode="offline", dir=sys.argv[1], id="resumed1", resume="allow")
    run.define_metric("train/global_step")
    run.define_metric("*", step_metric="train/global_step")
    for step in range(start, stop):
        run.log({"train/loss": session * 10 + step, "train/global_step": step})
    run.finish()
"""


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
