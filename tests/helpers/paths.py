"""Where the tests' fixtures live: one definition for every test module."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository root (README, docs, the package)."""
FIXTURES = REPO / "tests" / "fixtures"
"""Real logs copied for the tests (each folder has a README of how they were made)."""
TRL = FIXTURES / "trl"
TRL_RUNS = (
    "grpo_healthy",
    "grpo_liger_cpu_crash",
    "grpo_truncated",
    "grpo_unstable",
    "grpo_with_eval",
    "ppo_healthy",
    "ppo_unstable",
)


def trl_event_file(name: str) -> Path:
    """The single event file of one copied TRL fixture run."""
    (found,) = sorted((TRL / name).glob("runs/*/events.out.tfevents.*"))
    return found
