"""What a run's metrics say about its logged completions: the length cap and the clipped share.

The completions files hold text; the cap (``max_completion_length``) and TRL's
``completions/clipped_ratio`` count tokens. These lookups let the health rules and the screens
cross-check the two (`rltop.model.completions.cap_agrees`) without either knowing where the
numbers come from.
"""

from __future__ import annotations

import math

import numpy as np

from rltop.model.catalog import describe
from rltop.model.completions import StepSummary, cap_agrees
from rltop.model.run import Run

TRUNCATION = "truncation_ratio"  # the concept of completions/clipped_ratio


def length_cap(run: Run | None) -> int | None:
    """``max_completion_length`` of the run's config (GRPO/RLOO), None when it does not say."""
    config = run.config if run is not None else None
    value = (config or {}).get("max_completion_length")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def clipped_ratio(run: Run | None, summary: StepSummary) -> float | None:
    """``completions/clipped_ratio`` logged at the step (or at the generation it repeats)."""
    if run is None:
        return None
    for tag, series in run.series.items():
        info = describe(tag)
        if info.split != "train" or info.concept != TRUNCATION or not len(series):
            continue
        steps = series.steps
        for step in (summary.step, summary.repeats):
            if step is None:
                continue
            index = int(np.searchsorted(steps, step))
            if index < len(steps) and steps[index] == step:
                value = float(series.values_at(index))
                return value if math.isfinite(value) else None
    return None


def trusted_cap(run: Run | None, summary: StepSummary) -> int | None:
    """The length cap, when the text can tell which completions hit it (see `cap_agrees`)."""
    cap, ratio = length_cap(run), clipped_ratio(run, summary)
    if cap is None or ratio is None:
        return None
    return cap if cap_agrees(summary, cap, ratio) else None
