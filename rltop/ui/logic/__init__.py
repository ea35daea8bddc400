"""Textual-free parts of the dashboard: decisions a test can make without a screen.

`repaint` (when the dashboard draws new data, and which parts), `rates` (points per second per
run). Nothing here imports textual or rich (tests/test_import_hygiene.py checks).
"""
