"""Health-engine benchmark: incremental re-judging per live batch, and bulk judging of whole logs.

    python benchmarks/bench_health.py             # 60 tags, 10k-step history, 300 live batches
    python benchmarks/bench_health.py --history 100000 --batches 500
    python benchmarks/bench_health.py --logs      # also bulk-judge the cached make_logs.py logs
    python benchmarks/bench_health.py --live-case # bench_live.py --cpu's run, judged as the dashboard does

Incremental: a run with 60 TRL tags (GRPO and PPO metrics, reward families: every tag gets its
rules) is judged once; then each batch appends ``--points`` new points to every tag (what one tail
batch brings) and ``HealthEngine.assess`` re-judges. Goal: <= 5 ms per batch (median and p95
printed). Baseline: judging the same run from scratch with a fresh engine, i.e. what a
non-incremental engine would pay per batch.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from live_writer import JUDGED_TAGS, live_tags  # noqa: E402
from make_logs import SIZES, log_dir  # noqa: E402

from rltop.health.engine import HealthEngine, assess_store  # noqa: E402
from rltop.model.run import Run  # noqa: E402

GOAL_MS = 5.0

# (tag, typical level, relative noise): every metric the rules judge, and their neighbours.
TAGS = [
    ("train/val/ratio", 1.0, 0.002),
    ("train/policy/approxkl_avg", 0.001, 0.5),
    ("train/policy/clipfrac_avg", 0.01, 0.5),
    ("train/val/clipfrac_avg", 0.1, 0.5),
    ("train/policy/entropy_avg", 2.0, 0.01),
    ("train/loss/value_avg", 0.2, 0.3),
    ("train/objective/kl", 3.0, 0.2),
    ("train/objective/scores", 0.5, 0.3),
    ("train/objective/rlhf_reward", 0.4, 0.3),
    ("train/objective/non_score_reward", -0.1, 0.3),
    ("train/objective/entropy", 60.0, 0.05),
    ("train/loss/policy_avg", -0.01, 1.0),
    ("train/val/ratio_var", 1e-6, 0.5),
    ("train/val/num_eos_tokens", 4.0, 0.3),
    ("train/lr", 1e-5, 0.0),
    ("train/eps", 10.0, 0.1),
    ("train/episode", 1.0, 0.0),
    ("train/entropy", 1.5, 0.01),
    ("train/kl", 0.05, 0.3),
    ("train/reward", 0.3, 0.3),
    ("train/reward_std", 0.4, 0.2),
    ("train/frac_reward_zero_std", 0.1, 0.8),
    ("train/completions/clipped_ratio", 0.1, 0.5),
    ("train/completions/mean_length", 200.0, 0.1),
    ("train/completions/min_length", 20.0, 0.2),
    ("train/completions/max_length", 512.0, 0.0),
    ("train/clip_ratio/region_mean", 0.01, 0.5),
    ("train/clip_ratio/low_mean", 0.005, 0.5),
    ("train/clip_ratio/high_mean", 0.005, 0.5),
    ("train/grad_norm", 0.7, 0.2),
    ("train/loss", 0.05, 1.0),
    ("train/learning_rate", 1e-6, 0.0),
    ("train/step_time", 30.0, 0.1),
    ("train/num_tokens", 1e6, 0.0),
    ("train/epoch", 0.5, 0.0),
]
for _index in range(len(TAGS), 60):  # reward-function families up to 60 tags
    TAGS.append((f"train/rewards/reward_fn_{_index // 2}/{'mean' if _index % 2 else 'std'}", 0.5, 0.3))


def values_for(level: float, noise: float, count: int, rng: np.random.Generator) -> np.ndarray:
    """Noisy values around a level, with occasional bursts so episodes open and close."""
    values = level * (1 + noise * rng.standard_normal(count))
    bursts = rng.random(count) < 0.01
    values[bursts] *= 8.0
    return values


def build_run(history: int, rng: np.random.Generator) -> Run:
    """A 60-tag run with ``history`` steps per tag."""
    run = Run("bench", "/bench")
    steps = np.arange(1, history + 1)
    walls = 1.8e9 + 2.0 * steps
    for tag, level, noise in TAGS:
        run.add_points(tag, steps, walls, values_for(level, noise, history, rng))
    return run


def incremental(history: int, batches: int, points: int) -> None:
    """Time live batches of ``points`` new points per tag on a run with ``history`` steps."""
    rng = np.random.default_rng(0)
    run = build_run(history, rng)
    engine = HealthEngine()
    started = time.perf_counter()
    engine.assess(run, now=run.last_point_wall_time)
    first = time.perf_counter() - started
    timings: list[float] = []
    cpu_timings: list[float] = []
    step = history
    for _ in range(batches):
        steps = np.arange(step + 1, step + points + 1)
        walls = 1.8e9 + 2.0 * steps
        for tag, level, noise in TAGS:
            run.add_points(tag, steps, walls, values_for(level, noise, points, rng))
        step += points
        started, cpu = time.perf_counter(), time.process_time()
        engine.assess(run, now=walls[-1] + 1.0)
        timings.append((time.perf_counter() - started) * 1000)
        cpu_timings.append((time.process_time() - cpu) * 1000)
    started = time.perf_counter()
    HealthEngine().assess(run, now=run.last_point_wall_time)
    scratch = (time.perf_counter() - started) * 1000
    # The first batch after a bulk load pays a one-off cost: every series (sized exactly by the
    # load) grows its arrays. It is reported apart from the steady state.
    first_batch, timings, cpu_timings = timings[0], timings[1:] or timings, cpu_timings[1:] or cpu_timings
    median = statistics.median(timings)
    p95 = float(np.percentile(timings, 95))
    verdict = "OK" if p95 <= GOAL_MS else "OVER GOAL"
    print(
        f"incremental re-judge, {len(TAGS)} tags, {points} new point(s) per tag per batch, "
        f"history {history} steps/tag, {batches} batches:"
    )
    print(
        f"  per batch: median {median:.2f} ms, p95 {p95:.2f} ms, max {max(timings):.2f} ms wall "
        f"(goal <= {GOAL_MS:.0f} ms: {verdict}); CPU median {statistics.median(cpu_timings):.2f} ms"
    )
    print(
        f"  baseline, judging the whole run from scratch: {scratch:.0f} ms "
        f"(incremental is {scratch / median:.0f}x faster); first full judgement {first * 1000:.0f} ms; "
        f"first batch after it {first_batch:.1f} ms (one-off array growth)"
    )


LIVE_CASE_TAGS = live_tags(50)  # the run live_writer.py logs for bench_live.py --cpu


def live_case(history: int, batches: int) -> None:
    """The run of ``bench_live.py --cpu`` (50 tags, 5 of them judged by rules, narrow columns) judged
    one step a batch the way the dashboard's `JudgedStore.judge` asks: verdict and stall time."""
    rng = np.random.default_rng(0)
    run = Run("live", "/live")
    steps = np.arange(1, history + 1)
    for index, tag in enumerate(LIVE_CASE_TAGS):
        level = 0.5 if tag in JUDGED_TAGS else 1.0 + 0.1 * np.sin(steps / 50 + index)
        values = (level + 0.01 * rng.standard_normal(history)).astype(np.float32).astype(np.float64)
        run.add_points(tag, steps, 1.8e9 + steps.astype(np.float64), values)
    engine = HealthEngine()
    judge = getattr(engine, "assess_with_stall_due", None)  # (an older checkout: the two calls it makes)
    if judge is None:

        def judge(run: Run, now: float) -> None:
            engine.assess(run, now)
            engine.next_stall_change(run, now)

    judge(run, 1.8e9 + history + 0.5)
    cpu_timings: list[float] = []
    for step in range(history + 1, history + batches + 1):
        for tag in LIVE_CASE_TAGS:
            value = np.float64(np.float32(0.5 + 0.01 * rng.standard_normal()))
            run.add_points(tag, np.array([step]), np.array([1.8e9 + step]), np.array([value]))
        cpu = time.process_time()
        judge(run, 1.8e9 + step + 0.5)
        cpu_timings.append((time.process_time() - cpu) * 1000)
    print(
        f"live case (bench_live --cpu): 50 tags (5 judged), history {history} steps, {batches} batches: "
        f"CPU per batch median {statistics.median(cpu_timings):.2f} ms, "
        f"p95 {float(np.percentile(cpu_timings, 95)):.2f} ms"
    )


def bulk_logs() -> None:
    """Judge the cached make_logs.py logs in one go, next to their load time."""
    from rltop.ingest.follow.loader import load

    for size in SIZES:
        directory = log_dir(size)
        if not (directory / "COMPLETE").exists():
            hint = " --large" if size == "large" else ""
            print(f"bulk {size}: no cached log (python benchmarks/make_logs.py{hint})")
            continue
        started = time.perf_counter()
        result = load([str(directory)])
        loaded = time.perf_counter() - started
        scalars = sum(run.scalar_count() for run in result.store.runs.values())
        started = time.perf_counter()
        assess_store(result.store)
        judged = time.perf_counter() - started
        print(
            f"bulk {size}: {scalars:,} scalars, load {loaded:.2f} s, health {judged:.2f} s "
            f"({judged / loaded:.2f}x the load, {scalars / judged / 1e6:.1f} M scalars/s)"
        )


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--history", type=int, default=10_000, help="steps per tag before the live batches")
    parser.add_argument("--batches", type=int, default=300, help="live batches to time")
    parser.add_argument("--points", type=int, default=1, help="new points per tag per batch")
    parser.add_argument("--logs", action="store_true", help="also bulk-judge the cached benchmark logs")
    parser.add_argument("--live-case", action="store_true", help="only bench_live.py --cpu's run (20k steps)")
    args = parser.parse_args()
    if args.live_case:
        live_case(20_000, args.batches)
        return
    incremental(args.history, args.batches, args.points)
    if args.points == 1:
        incremental(args.history, max(args.batches // 3, 1), 10)
    if args.logs:
        bulk_logs()


if __name__ == "__main__":
    main()
