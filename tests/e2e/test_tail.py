"""``rltop tail`` end to end: a real tensorboardX SummaryWriter in one process, ``python -m rltop tail``
in another. Every point written must be printed exactly once, in order per tag, including points
written while a new run directory and a restart's second event file appear; Ctrl-C and SIGTERM
end it with exit code 0 and no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers.live import Lines
from helpers.tail import NO_INOTIFY, PYTHON, ROOT, assert_exactly_once_in_order, scenario, start_tail, stop  # noqa: F401 (fixtures among them)


def test_native_every_point_once_in_order_then_ctrl_c(tmp_path):
    expected, printed, err, took, code = scenario(tmp_path, [], signal.SIGINT)
    assert_exactly_once_in_order(expected, printed)
    assert code == 0, err
    assert err == ["rltop: new run group/run_b (%s)" % (tmp_path / "logs" / "group" / "run_b")]
    assert took < 5  # the goal is < 1 s (see benchmarks/bench_tail.py); this only bounds a hang


def test_polling_every_point_once_in_order_then_sigterm(tmp_path):
    expected, printed, err, took, code = scenario(tmp_path, ["--poll", "0.1"], signal.SIGTERM)
    assert_exactly_once_in_order(expected, printed)
    assert code == 0, err
    assert err == ["rltop: new run group/run_b (%s)" % (tmp_path / "logs" / "group" / "run_b")]


def test_without_inotify_falls_back_to_polling_and_says_so_once(tmp_path):
    expected, printed, err, took, code = scenario(
        tmp_path, [], signal.SIGINT, bootstrap=NO_INOTIFY, empty_first=True
    )
    assert_exactly_once_in_order(expected, printed)
    assert code == 0, err
    fallback = [line for line in err if "polling every" in line]
    assert fallback == [
        "rltop: inotify watch limit reached (fs.inotify.max_user_watches = "
        f"{Path('/proc/sys/fs/inotify/max_user_watches').read_text().strip()}; raise it with: sudo sysctl "
        "fs.inotify.max_user_watches=524288); polling every 1 s instead (--poll SECONDS sets the interval)"
    ]
    waiting = [line for line in err if "waiting for" in line]
    assert waiting == [
        "rltop: no event files (events.out.tfevents.*), W&B run files (wandb/*run-*/run-*.wandb), "
        "MLflow databases (mlflow.db), trackio databases (<project>.db), MLflow file stores "
        "(mlruns/<experiment>/<run>/meta.yaml), veRL file logs (<project>/<experiment>.jsonl), "
        "veRL console logs (*.log, *.out… with step:N lines) or trainer_state.json "
        f"(checkpoint-*/trainer_state.json) under {tmp_path / 'logs'} yet; waiting for them"
    ]
    assert not [line for line in err if "Traceback" in line]


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_signal_while_waiting_exits_zero_without_traceback(tmp_path, how):
    tail = start_tail(tmp_path, "--format", "csv")
    out, err = Lines(tail.stdout), Lines(tail.stderr)
    err.wait(lambda lines: lines, "the waiting notice")
    stop(tail, how)
    assert tail.returncode == 0
    assert out.lines == ["run,tag,step,wall_time,value,session"]
    assert len(err.lines) == 1 and "waiting" in err.lines[0]


def test_csv_lines_match_export(trl_dir):
    path = trl_dir / "grpo_healthy"
    tail = start_tail(path, "--format", "csv", "--tags", "kl|reward$")
    out = Lines(tail.stdout)
    export = subprocess.run(
        [PYTHON, "-m", "rltop", "export", str(path), "--format", "csv", "--tags", "kl|reward$"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    out.wait(lambda lines: len(lines) >= len(export), "as many lines as export")
    stop(tail, signal.SIGINT)
    assert tail.returncode == 0
    assert out.lines[0] == export[0] and sorted(out.lines[1:]) == sorted(export[1:])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/dir"], "rltop: error: /no/such/dir: no such file or directory"),
        ([".", "--tags", "("], "rltop: error: invalid --tags regex '('"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(args, message):
    done = subprocess.run(
        [PYTHON, "-m", "rltop", "tail", *args], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_pipe_closed_by_reader_ends_quietly(trl_dir):
    tail = subprocess.Popen(
        f"{PYTHON} -m rltop tail {trl_dir} | head -n 3",
        shell=True,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    out, err = tail.communicate(timeout=30)
    assert len(out.splitlines()) == 3 and err == ""


def test_watcher_dying_ends_tail_with_exit_2(tmp_path, monkeypatch, capsys):
    from rltop.cli import main
    from rltop.ingest.follow import watcher

    def broken(self):
        raise RuntimeError("boom")

    monkeypatch.setattr(watcher._Follower, "_loop", broken)
    assert main(["tail", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-2:] == [
        "rltop: warning: watching stopped by an internal error (RuntimeError: boom); please report it",
        "rltop: error: tailing stopped (see the warning above)",
    ]
