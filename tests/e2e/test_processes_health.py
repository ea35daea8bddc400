"""Tests moved out of test_health_engine.py: each starts a process (the unit tier starts none)."""

from __future__ import annotations

import subprocess
import sys


def test_health_layer_never_imports_textual_or_rich() -> None:
    code = (
        "import sys, rltop.health.engine, rltop.health.table, rltop.model.catalog\n"
        "bad = [m for m in ('textual', 'rich') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
