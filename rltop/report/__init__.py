"""rltop.report: Rich renderables and exporters of the snapshot (text, Markdown, JSON, CSV, SVG, HTML)."""

import sys as _sys

from rltop.view import safe_text

# `rltop.report.safe_text` moved to `rltop.view.safe_text` (the dashboard needs it too, and the UI
# must not import the report layer). Old imports keep working: the module is registered under its
# old name too, so `from rltop.report.safe_text import visible` finds the very same functions.
_sys.modules[f"{__name__}.safe_text"] = safe_text
