"""rltop.ui."""
