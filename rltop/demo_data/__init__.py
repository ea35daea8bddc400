"""The bundled demo: two real TRL runs and the machinery that replays them as if training were live.

``runs/ppo_unstable`` (PPOTrainer, lr 1e-2 and 16 PPO epochs: ratio drift, then entropy collapse)
and ``runs/grpo_healthy`` (GRPOTrainer, a run that learns) are copied unchanged from the project's
test fixtures. `rltop.demo_data.replay` writes them again, step by step, with
`rltop.ingest.sources.tfevents.tfrecord.writer`, so ``rltop demo`` shows points arriving and alarms firing.
"""

from __future__ import annotations

from pathlib import Path

RUNS_DIR = Path(__file__).parent / "runs"
DEMO_RUNS = ("ppo_unstable", "grpo_healthy")
DEFAULT_SPEED = 2.0
"""Training steps written per second and per run by default."""


def bundled_event_file(name: str) -> Path:
    """The event file of one bundled demo run."""
    (found,) = sorted((RUNS_DIR / name).glob("events.out.tfevents.*"))
    return found
