"""The core layers never pull in the screen: each module imported alone, in a fresh interpreter."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import rltop

CORE = ("ingest", "model", "health", "alerts")
ROOT = Path(rltop.__file__).parent


def core_modules() -> list[str]:
    names = []
    for layer in CORE:
        names.append(f"rltop.{layer}")
        for info in pkgutil.walk_packages([str(ROOT / layer)], prefix=f"rltop.{layer}."):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module", core_modules())
def test_core_module_imports_no_screen_library(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "bad = sorted(m for m in ('textual', 'rich') if m in sys.modules); "
        "print(','.join(bad))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"{module} imported {done.stdout.strip()}"


def test_core_modules_were_found() -> None:
    modules = core_modules()
    assert "rltop.ingest.tfrecord.reader" in modules and "rltop.model.series" in modules
