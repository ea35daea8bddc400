"""Shared test fixtures: the copied real TRL runs under tests/fixtures/trl.

Plain helpers (paths, builders, readers) live in the `helpers` package; this file only registers
pytest fixtures. The test tiers: ``unit/`` (no subprocess, terminal or server: seconds), ``app/``
(Textual pilot and SVG snapshots), ``e2e/`` (processes, tmux, real SDKs, local servers, and the
long fuzzing runs). ``pytest`` runs them all; ``pytest tests/unit`` the fast tier alone.
"""

from __future__ import annotations

import compileall
import gc
import shutil
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO, TRL
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


def pytest_sessionstart(session: pytest.Session) -> None:
    """Write rltop's bytecode once, before any test starts rltop in a fresh process, and let pytest
    keep the test modules it compiles.

    An editable checkout has none, and where PYTHONDONTWRITEBYTECODE is set (this machine sets it)
    every ``python -m rltop``, tmux dashboard and import check would compile each module it loads
    again: about 5 s of CPU in test_hostile_names, test_snapshot_cli and test_frictions alone. (What
    ``pip install`` does for an installed package; ``benchmarks/bytecode.py`` does it for the
    benchmarks.) Likewise pytest would rewrite and compile every test module at each run (4 to 5 s of
    the collection's 9). Python checks each file's timestamp, so a changed module is never run stale;
    the processes the tests start keep the variable as it was.
    """
    compileall.compile_dir(str(REPO / "rltop"), quiet=1)
    sys.dont_write_bytecode = False


def pytest_collection_finish(session: pytest.Session) -> None:
    """Let the garbage collector of this process skip what lives for the whole session.

    The imports (numpy, Textual, Rich, the SDKs) and the collected tests are frozen out of the
    collector's scans, and a young generation of 10,000 objects instead of 700 makes its passes rarer:
    the app tier builds large widget trees, and each full pass walked every object of the session.
    Measured: the app tier spent 30 s of its 139 in the collector, 12 s of 126 after; the unit tier
    3.0 s, 0.7 s after. Only when garbage is collected changes (the processes the tests start keep
    Python's defaults); no test depends on it (none looks at gc, weakrefs or memory).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
