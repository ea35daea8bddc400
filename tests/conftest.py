"""Shared test fixtures: the copied real TRL runs under tests/fixtures/trl.

Plain helpers (paths, builders, readers) live in the `helpers` package; this file only registers
pytest fixtures. The test tiers: ``unit/`` (no subprocess, terminal or server: seconds), ``app/``
(Textual pilot and SVG snapshots), ``e2e/`` (processes, tmux, real SDKs, local servers, and the
long fuzzing runs). ``pytest`` runs them all; ``pytest tests/unit`` the fast tier alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.paths import TRL
from helpers.tree import tree  # noqa: F401 (a fixture, registered for every test)
from helpers.watcher import stop_all  # noqa: F401 (a fixture, registered for every test)


@pytest.fixture
def trl_dir() -> Path:
    """The directory holding every copied TRL fixture run (read-only use)."""
    return TRL


@pytest.fixture
def trl_copy(tmp_path: Path):
    """Copy one fixture run into a temporary directory (for tests that modify files)."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(TRL / name, target)
        return target

    return copy
