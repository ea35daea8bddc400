"""Layers point one way, and the layers below the screen never load a screen library.

Each Textual-free module is imported alone, in a fresh interpreter state: the core layers (ingest,
model, health), the view layer and the Textual-free parts of the UI load neither textual nor rich;
the report layer may load rich but never textual. One interpreter imports numpy and forks a child per
module (two at a time): each child is a fresh interpreter importing its module alone, and numpy's
import is paid once instead of once per module (18 s of the suite down to 5).

A static check of every ``import`` (at the top, in functions and under TYPE_CHECKING alike) keeps the
direction: ingest, model and health never import view, report, ui or commands; view never imports
report or ui; ui never imports report.
"""

from __future__ import annotations

import ast
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rltop

ROOT = Path(rltop.__file__).parent
CORE = ("ingest", "model", "health", "alerts", "live")
TEXTUAL_FREE_UI = ("rltop.ui.session", "rltop.ui.chart")  # plus every module of rltop.ui.logic
FORBIDDEN = {
    # layer (a dotted prefix under rltop) -> the layers it must never import
    "ingest": ("health", "live", "alerts", "view", "report", "ui", "commands", "cli"),
    "ingest.sources": ("ingest.follow",),  # a source kind knows nothing of how it is followed
    "model": ("ingest", "health", "live", "alerts", "view", "report", "ui", "commands", "cli"),
    "health": ("ingest", "live", "alerts", "view", "report", "ui", "commands", "cli"),
    "alerts": ("live", "view", "report", "ui", "commands", "cli"),
    "live": ("alerts", "view", "report", "ui", "commands", "cli"),
    "view": ("report", "ui", "commands", "cli"),
    "report": ("ui", "commands", "cli"),
    "ui": ("report", "commands", "cli"),
    "ui.logic": ("ui.app", "ui.screens", "ui.widgets"),
}


def layer_modules(*layers: str) -> list[str]:
    names = []
    for layer in layers:
        names.append(f"rltop.{layer}")
        for info in pkgutil.walk_packages([str(ROOT / layer.replace(".", "/"))], prefix=f"rltop.{layer}."):
            names.append(info.name)
    return names


# One interpreter that imported only numpy (a dependency of most modules, 0.1 s each time) forks a
# child per module: a child is a fresh interpreter but for numpy, and imports its module alone (numpy
# imports neither screen library, so it changes no answer). A parent that already held textual or rich
# would make every check meaningless: that is checked first.
FORK_SERVER = r"""
import importlib, json, os, sys, traceback

import numpy

SCREEN = ("textual", "rich")
assert not [m for m in SCREEN if m in sys.modules], "the fork server itself loaded a screen library"
modules, running, found = json.loads(sys.stdin.read()), {}, {}


def collect():
    pid, _ = os.wait()
    module, pipe = running.pop(pid)
    with os.fdopen(pipe, "rb") as answer:
        found[module] = json.loads(answer.read() or b'{"error": "the child died"}')


for module in modules:
    if len(running) >= 2:
        collect()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(module)
            answer = {"loaded": [m for m in SCREEN if m in sys.modules]}
        except BaseException:
            answer = {"error": traceback.format_exc()}
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    running[pid] = module, read
while running:
    collect()
print(json.dumps(found))
"""


CHECKED = layer_modules(*CORE, "view", "ui.logic") + list(TEXTUAL_FREE_UI)
REPORT = layer_modules("report")


@pytest.fixture(scope="module")
def loaded() -> dict[str, dict]:
    """module -> what importing it alone did: ``{"loaded": [screen libraries]}`` or ``{"error": …}``."""
    # One BLAS thread (what rltop asks for too): no idle BLAS workers in a process that forks.
    done = subprocess.run(
        [sys.executable, "-c", FORK_SERVER], input=json.dumps(CHECKED + REPORT), capture_output=True,
        text=True, timeout=600, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("module", CHECKED)
def test_module_imports_no_screen_library(module: str, loaded: dict[str, dict]) -> None:
    assert "error" not in loaded[module], f"{module} does not import: {loaded[module]['error']}"
    assert loaded[module]["loaded"] == [], f"{module} imported {', '.join(loaded[module]['loaded'])}"


@pytest.mark.parametrize("module", REPORT)
def test_report_module_may_use_rich_but_never_textual(module: str, loaded: dict[str, dict]) -> None:
    assert "error" not in loaded[module], f"{module} does not import: {loaded[module]['error']}"
    assert "textual" not in loaded[module]["loaded"], module


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) of every import statement in a file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(("rltop", *path.relative_to(ROOT).with_suffix("").parts[:-1]))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_point_one_way(layer: str) -> None:
    bad = []
    for path in sorted((ROOT / layer.replace(".", "/")).rglob("*.py")):
        for line, module in _imports(path):
            for forbidden in FORBIDDEN[layer]:
                if module == f"rltop.{forbidden}" or module.startswith(f"rltop.{forbidden}."):
                    bad.append(f"{path.relative_to(ROOT.parent)}:{line} imports {module}")
    assert bad == [], "\n".join(bad)


PACKAGES = sorted(path.parent for path in ROOT.rglob("__init__.py") if "themes" not in path.parts)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda path: str(path.relative_to(ROOT.parent)))
def test_package_docstrings_map_their_modules(package: Path) -> None:
    """Every package's docstring names each of its modules and subpackages (so the folder says what
    is in it, and a new module cannot go unmentioned)."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    members = [path.stem for path in package.glob("*.py") if path.stem != "__init__"]
    members += [path.name for path in package.iterdir() if (path / "__init__.py").is_file()]
    missing = [name for name in sorted(members) if not re.search(rf"[`.]{re.escape(name)}\b|\b{name}/", doc)]
    assert missing == [], f"{package.relative_to(ROOT.parent)} docstring does not name {missing}"


@pytest.mark.parametrize("layer", ["ingest", "health", "view"])
def test_top_levels_stay_small(layer: str) -> None:
    """At most 10 modules at the top of ingest, health and view: the rest lives in folders."""
    modules = [path.name for path in (ROOT / layer).glob("*.py") if path.name != "__init__.py"]
    assert len(modules) <= 10, modules


def test_the_modules_were_found() -> None:
    core = layer_modules(*CORE)
    assert "rltop.ingest.sources.tfevents.tfrecord.reader" in core and "rltop.model.series" in core
    assert "rltop.view.run_view" in layer_modules("view")
    for module in TEXTUAL_FREE_UI:
        assert (ROOT.parent / (module.replace(".", "/") + ".py")).is_file(), module


@pytest.mark.parametrize("users, seen", [(None, "1 None"), ("4", "4 4")])
def test_blas_stays_single_threaded_but_hooks_get_the_users_environment(users, seen):
    """rltop asks OpenBLAS for one thread (its idle workers spin); a hook it starts inherits the
    user's environment as it was."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if users is not None:
        env["OPENBLAS_NUM_THREADS"] = users
    code = (
        "import os, rltop; print(os.environ.get('OPENBLAS_NUM_THREADS'), "
        "rltop.inherited_environment().get('OPENBLAS_NUM_THREADS'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == seen
