"""Tests moved out of test_storage.py: each starts a process (the unit tier starts none)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers.paths import REPO

ROOT = REPO
BLOCKER = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}")
sys.meta_path.insert(0, Blocker())
from rltop.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("blocked", "argv", "extra"),
    [
        ({"s3fs"}, ["s3://x/"], "pip install 'rltop[s3]'"),
        ({"s3fs", "fsspec"}, ["snapshot", "s3://x/logs"], "pip install 'rltop[s3]'"),
        ({"s3fs"}, ["tail", "s3://x/"], "pip install 'rltop[s3]'"),
        ({"s3fs"}, ["watch", "s3://x/"], "pip install 'rltop[s3]'"),
        ({"gcsfs"}, ["export", "gs://x/"], "pip install 'rltop[gcs]'"),
    ],
)
def test_a_url_without_its_extra_says_what_to_install(blocked, argv, extra):
    done = subprocess.run(
        [sys.executable, "-c", BLOCKER.format(blocked=sorted(blocked)), *argv],
        capture_output=True, text=True, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("rltop: error: ") and extra in line and "Traceback" not in done.stderr
