"""``rltop tail`` beside the real trackio package logging a run into its database: each step shows
up while training goes on, exactly once; the run's config arrives with it. In a folder shared by
two users, rltop reading as the second user never breaks the training: it creates nothing there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import other_user
from helpers.live import Lines, end_all, start_tail
from helpers.paths import REPO

ROOT = REPO  # the repository root

STEPS = 3

WRITER = r"""
import sys
import trackio

steps = int(sys.argv[1])
trackio.init(project="live", name="calm-river-1", config={"beta": 0.04, "max_steps": steps})
print("ready", flush=True)
for step in range(1, steps + 1):
    sys.stdin.readline()
    trackio.log({"train/loss": 1.0 / step, "train/reward": step / 10, "train/global_step": step})
    print("logged", step, flush=True)
trackio.finish()
print("done", flush=True)
"""


def said(process: subprocess.Popen, word: str) -> list[str]:
    """The next line of the writer's own that starts with ``word`` (trackio prints notices too)."""
    while True:
        line = process.stdout.readline()
        assert line, f"the writer ended before saying {word!r}"
        if line.startswith(word):
            return line.split()


def step_through(writer: subprocess.Popen, out: Lines) -> None:
    """Have the writer log each step, and wait until the tail printed its two points."""
    for step in range(1, STEPS + 1):
        writer.stdin.write("go\n")
        writer.stdin.flush()
        assert said(writer, "logged") == ["logged", str(step)]
        # The step reaches the database (trackio writes from a thread) and then the tail.
        out.wait(
            lambda lines, step=step: sum(f'"step": {step},' in line for line in lines) >= 2,
            f"the points of step {step}",
            timeout=120,
        )


def test_tail_shows_each_trackio_step_once_while_it_trains(tmp_path) -> None:
    trackio_dir = tmp_path / "trackio"
    env = {
        **os.environ,
        "TRACKIO_DIR": str(trackio_dir),
        "HF_HUB_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "0",
        "HF_HOME": str(tmp_path / "hf"),
    }
    writer = tail = None
    try:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(STEPS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        said(writer, "ready")
        trackio_dir.mkdir(exist_ok=True)
        tail, out, err = start_tail(str(trackio_dir))
        step_through(writer, out)
        said(writer, "done")
        assert writer.wait(timeout=120) == 0
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0, err.lines
    finally:
        end_all(writer, tail)
    printed = [json.loads(line) for line in out.lines]
    assert {point["run"] for point in printed} == {"live/calm-river-1"}
    got = sorted((point["tag"], point["step"], point["value"]) for point in printed)
    expected = sorted(
        [("train/loss", s, 1.0 / s) for s in range(1, STEPS + 1)]
        + [("train/reward", s, s / 10) for s in range(1, STEPS + 1)]
    )
    assert got == expected


WRITER_UID, READER_UID = 52001, 52002  # two users without passwd entries: nobody else's files


def trackio_env(trackio_dir: Path, home: Path, user: str) -> dict[str, str]:
    return {
        **other_user.user_env(home, user),
        "TRACKIO_DIR": str(trackio_dir),
        "HF_HUB_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "0",
        "HF_HOME": str(home / "hf"),
    }


def owned_home(parent: Path, name: str, uid: int) -> Path:
    home = parent / name
    home.mkdir()
    os.chown(home, uid, uid)
    return home


def rehearse(shared: Path) -> tuple[Path, Path, list[str]]:
    """Run the writer and ``rltop tail`` as root in a folder of their own, recording the modules
    each imports (`other_user.record`): (writer's modules, tail's modules, the files trackio
    leaves in a folder nobody else reads)."""
    writer_modules, tail_modules = shared / "writer.modules", shared / "tail.modules"
    folder = shared / "rehearsal"
    folder.mkdir()
    env = trackio_env(folder / "trackio", folder, "root")
    subprocess.run(
        other_user.record(writer_modules, "-c", WRITER, str(STEPS)),
        input="go\n" * STEPS, capture_output=True, text=True, env=env, cwd=folder, check=True, timeout=300,
    )  # fmt: skip
    tail = subprocess.Popen(
        other_user.record(tail_modules, "-m", "rltop", "tail", str(folder / "trackio")),
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        out = Lines(tail.stdout)
        out.wait(lambda lines: len(lines) >= 2 * STEPS, "the rehearsal's points", timeout=120)
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0
    finally:
        end_all(tail)
    return writer_modules, tail_modules, sorted(os.listdir(folder / "trackio"))


@pytest.mark.skipif(not other_user.is_root(), reason="switching users needs root")
def test_a_second_user_reading_the_shared_folder_never_breaks_the_training() -> None:
    # tmp_path's parents are root's alone: the shared folder is made where both users may go.
    shared = Path(tempfile.mkdtemp(prefix="rltop-shared-", dir="/tmp"))
    writer = tail = None
    try:
        shared.chmod(0o755)
        writer_modules, tail_modules, alone = rehearse(shared)
        trackio_dir = shared / "trackio"
        trackio_dir.mkdir()
        trackio_dir.chmod(0o777)  # a team's folder: every user may create files in it
        writer_home = owned_home(shared, "writer", WRITER_UID)
        reader_home = owned_home(shared, "reader", READER_UID)
        writer = subprocess.Popen(
            other_user.as_user(writer_modules, WRITER_UID, "-c", WRITER, str(STEPS)),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=trackio_env(trackio_dir, writer_home, "writer"), cwd=writer_home,
        )  # fmt: skip
        writer_err = Lines(writer.stderr)
        said(writer, "ready")
        tail = subprocess.Popen(
            other_user.as_user(tail_modules, READER_UID, "-m", "rltop", "tail", str(trackio_dir)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=other_user.user_env(reader_home, "reader"), cwd=reader_home,
        )  # fmt: skip
        out, err = Lines(tail.stdout), Lines(tail.stderr)
        step_through(writer, out)
        said(writer, "done")
        assert writer.wait(timeout=120) == 0
        writer_err.join()
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0, err.lines
        assert not [line for line in err.lines if "warning" in line or "error" in line], err.lines
        # The training never failed a write (trackio says so as a warning, and goes on without it).
        assert not [line for line in writer_err.lines if "arning" in line or "rror" in line], writer_err.lines
        # Nothing of the reader's in the folder: the files a training alone leaves, all the writer's.
        owners = {path.name: path.stat().st_uid for path in trackio_dir.iterdir()}
        assert sorted(owners) == alone and set(owners.values()) == {WRITER_UID}, owners
        printed = [json.loads(line) for line in out.lines]
        got = sorted((point["tag"], point["step"], point["value"]) for point in printed)
        assert got == sorted(
            [("train/loss", s, 1.0 / s) for s in range(1, STEPS + 1)]
            + [("train/reward", s, s / 10) for s in range(1, STEPS + 1)]
        )
    finally:
        end_all(writer, tail)
        shutil.rmtree(shared, ignore_errors=True)
