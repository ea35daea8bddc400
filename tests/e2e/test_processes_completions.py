"""Tests moved out of test_completions_index.py: each starts a process (the unit tier starts none)."""

from __future__ import annotations


def test_pyarrow_loads_only_once_a_completions_file_is_read():
    import subprocess
    import sys

    code = (
        "import sys, rltop.ingest.follow.watcher, rltop.ingest.follow.loader, rltop.health.engine, "
        "rltop.view.completions, rltop.ingest.sources.completions; print('pyarrow' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr
