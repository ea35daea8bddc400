"""How the dashboard's code is put together, checked (issue 29).

Widgets and screens talk upward with messages: no `getattr` probing of the screen or the app.

A widget that asks ``getattr(self.screen, "move_from_alert", None)`` works only under one screen and
fails silently under another; a message (or Textual's own focus chain) says what happened and lets
whoever owns the decision take it (issue 29, "messages up instead of direct calls and getattr").

Test apps are built through the CLI's own parser and factory (`helpers.ui.cli_app`), so a test sees
the options a user passes, checked as the command line checks them.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.paths import REPO

import rltop.ui

UI = Path(rltop.ui.__file__).parent
PROBE = re.compile(r"getattr\(\s*self\.(screen|app)\b")


def test_no_widget_or_screen_probes_its_screen_or_app_with_getattr():
    offenders = [
        f"{path.relative_to(UI)}:{number}: {line.strip()}"
        for folder in ("widgets", "screens")
        for path in sorted((UI / folder).glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PROBE.search(line)
    ]
    assert offenders == []


def test_test_apps_are_built_by_the_cli_factory():
    factory = REPO / "tests" / "helpers" / "ui.py"
    direct = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        if path not in (factory, Path(__file__))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "RltopApp(" in line
    ]
    assert direct == []
