"""Widgets and screens talk upward with messages: no `getattr` probing of the screen or the app.

A widget that asks ``getattr(self.screen, "move_from_alert", None)`` works only under one screen and
fails silently under another; a message (or Textual's own focus chain) says what happened and lets
whoever owns the decision take it (issue 29, "messages up instead of direct calls and getattr").
"""

from __future__ import annotations

import re
from pathlib import Path

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
