"""rltop.report."""
