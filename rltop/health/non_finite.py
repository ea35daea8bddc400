"""Non-finite values (NaN, ±Inf) on any tag: immediate, critical, and latched once seen.

TRL drops a metric that is NaN on every sample (a missing point), so a NaN that reaches the event
file is a real one, and usually the first sign of a diverging update.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rltop.health.findings import Finding, Level, Stage

_NON_FINITE_ADVICE = (
    "A NaN or Inf usually follows an exploding update: lower the learning rate, clip gradients "
    "(max_grad_norm), check rewards for NaN/Inf, and resume from the last good checkpoint."
)


@dataclass
class NonFinite:
    """Non-finite points of one tag (immediate, critical, latched)."""

    count: int = 0
    first_step: int | None = None
    last_step: int | None = None
    last_value: float = float("nan")
    active: bool = False
    latched: bool = False


def count_non_finite(nf: NonFinite, steps: np.ndarray, values: np.ndarray, finite: np.ndarray) -> None:
    """Update the non-finite summary of a tag with new points."""
    if finite.all():
        nf.active = False
        return
    bad = np.flatnonzero(~finite)
    nf.count += len(bad)
    if nf.first_step is None:
        nf.first_step = int(steps[bad[0]])
    nf.last_step = int(steps[bad[-1]])
    nf.last_value = float(values[bad[-1]])
    nf.latched = True
    nf.active = not bool(finite[-1])


def non_finite_finding(run: str, tag: str, nf: NonFinite, acknowledged: bool = False) -> Finding:
    """The finding of a tag that had non-finite points (active while the newest one is)."""
    what = "NaN" if np.isnan(nf.last_value) else ("+Inf" if nf.last_value > 0 else "-Inf")
    many = f"{nf.count} non-finite points since step {nf.first_step}" if nf.count > 1 else "1 such point"
    state = "still non-finite" if nf.active else "finite again after it"
    message = (f"{tag} is {what} at step {nf.last_step} ({many}; critical at any NaN or ±Inf); "
               f"{state}.")
    return Finding(Level.CRITICAL, "non_finite", run, tag, nf.last_step, nf.last_value, message,
                   _NON_FINITE_ADVICE, first_step=nf.first_step, last_step=nf.last_step, active=nf.active,
                   title="non-finite value", episodes=1, stage=Stage.CAUSE,
                   acknowledged=acknowledged and not nf.active)
