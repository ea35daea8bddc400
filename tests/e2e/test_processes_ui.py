"""Tests moved out of test_ui_helpers.py: each starts a process (the unit tier starts none)."""

from __future__ import annotations


def test_the_first_frame_needs_no_numpy():
    """The app module and its dashboard import without numpy, so the screen paints before the
    heavy imports (time to first frame, benchmarks/bench_ui.py)."""
    import subprocess
    import sys

    code = (
        "import sys, argparse; import rltop.cli; rltop.cli.build_parser();"
        "from rltop.commands.app import make_app;"
        "make_app(argparse.Namespace(paths=['.'], tags=None, runs=None, poll=None, theme=None,"
        " run=None, rules=None));"
        "print('numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
