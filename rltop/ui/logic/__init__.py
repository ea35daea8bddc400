"""Textual-free parts of the dashboard: decisions a test can make without a screen.

`repaint` (when the dashboard draws new data, and which parts), `rates` (points per second per
run), `keys` (every key in one table: bindings, footer, help), `header_info` (what the header shows),
`grid_layout` (how many charts fit), `chart_sources` (which runs a chart overlays), `levels` and
`narrow` (the CSS class of a level, the cells of the narrow layout), `tag_filter` (the ``/`` filter).
Nothing here imports textual or rich (tests/e2e/test_import_hygiene.py checks).
"""
