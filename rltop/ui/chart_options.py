"""The detail chart's settings that the keys cycle through (kept apart from the numpy drawing code)."""

from __future__ import annotations

X_MODES = ("step", "relative", "wall")
"""The x axes the ``x`` key cycles through."""
X_LABELS = {"step": "step", "relative": "time since start", "wall": "wall time"}
DEFAULT_SMOOTHING = 0.6
"""TensorBoard's default smoothing weight."""
SMOOTHING_STEPS = (0.0, 0.6, 0.8, 0.9, 0.95, 0.99)
"""Smoothing weights ``s``/``S`` step through."""
