"""Widgets of the dashboard, one a file; layout and colours live in ``rltop/ui/app.tcss``."""
