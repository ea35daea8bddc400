"""rltop.health."""
