"""Display names that keep what tells runs and metrics apart, and text that fits in terminal cells."""

from __future__ import annotations

import re

import pytest

from rltop.ingest.follow.loader import load
from rltop.view.names import is_session_folder, metric_labels, metric_names, run_display_names
from rltop.view.text.cells import cell_len, pad_cells
from rltop.view.text.fit import cut_at_word, cut_middle, fit_path, word_cuts

ROOT = "/home/me/logs"


def names_of(*paths: str) -> list[str]:
    """Display names of runs in these directories (under ROOT), in the same order."""
    shown = run_display_names({path: f"{ROOT}/{path}" for path in paths})
    return [shown[path] for path in paths]


# -- runs: the layout transformers writes today (one run per session folder) --------------------


def test_a_lone_run_is_named_after_its_experiment_not_its_session_folder():
    assert names_of("grpo_truncated/runs/Nov29_21-49-38_vm") == ["grpo_truncated"]
    assert run_display_names({"runs/Nov29_21-53-12_vm": "/x/ppo_unstable/runs/Nov29_21-53-12_vm"}) == {
        "runs/Nov29_21-53-12_vm": "ppo_unstable"
    }


def test_experiments_side_by_side_drop_what_they_share():
    assert names_of("out/grpo_healthy/runs/Nov29_21-46-18_vm", "out/ppo_unstable/runs/Nov29_21-53-12_vm") == [
        "grpo_healthy",
        "ppo_unstable",
    ]


def test_seeds_keep_the_experiment_and_the_seed():
    # The complaint: "grpo_seeds/…/runs/Nov29_21-47-47_vm" (the seed is gone) and
    # "…/runs/Nov29_21-51-41_vm" (the experiment is gone).
    seeds = names_of("grpo_seeds/seed_1/runs/Nov29_21-47-47_vm", "grpo_seeds/seed_2/runs/Nov29_21-51-41_vm")
    assert seeds == ["grpo_seeds/seed_1", "grpo_seeds/seed_2"]
    mixed = names_of(
        "grpo_seeds/seed_1/runs/Nov29_21-47-47_vm",
        "grpo_seeds/seed_2/runs/Nov29_21-51-41_vm",
        "ppo_baseline/runs/Nov29_22-01-02_vm",
    )
    assert mixed == ["grpo_seeds/seed_1", "grpo_seeds/seed_2", "ppo_baseline"]


def test_a_resumed_run_keeps_its_session_date_only_where_two_sessions_would_collide():
    # Today's layout: resume_from_checkpoint writes a second session folder in the same output_dir.
    shown = names_of(
        "grpo_resumed/runs/Dec01_07-56-02_vm",
        "grpo_resumed/runs/Dec01_07-56-27_vm",
        "ppo_unstable/runs/Nov29_21-53-12_vm",
    )
    assert shown == ["grpo_resumed/Dec01_07-56-02", "grpo_resumed/Dec01_07-56-27", "ppo_unstable"]
    # Different hosts: the host is what tells them apart too, so it stays.
    hosts = names_of(
        "exp/runs/Dec01_07-56-02_gpu1", "exp/runs/Dec01_07-56-02_gpu2", "other/runs/Dec01_08-00-00_gpu1"
    )
    assert hosts[:2] == ["exp/Dec01_07-56-02_gpu1", "exp/Dec01_07-56-02_gpu2"] and hosts[2] == "other"


# -- runs: experiment-level names (one run per output_dir, sessions merged) --------------------------


def test_experiment_level_runs_get_the_same_short_names():
    assert names_of("grpo_seeds/seed_1", "grpo_seeds/seed_2") == ["grpo_seeds/seed_1", "grpo_seeds/seed_2"]
    assert names_of("grpo_resumed", "ppo_unstable") == ["grpo_resumed", "ppo_unstable"]
    assert names_of("grpo_resumed") == ["grpo_resumed"]
    # The same experiments in both layouts read the same.
    assert names_of("a/runs/Nov29_21-46-18_vm", "b/runs/Nov29_21-53-12_vm") == names_of("a", "b")


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["exp42/logs"], ["exp42/logs"]),  # a generic folder keeps its parent
        (["proj/trainer_output/runs/Nov29_21-47-47_vm"], ["proj/trainer_output"]),  # TRL's default dir
        (["a/logs", "b/logs"], ["a", "b"]),  # the common suffix goes
        (["a", "a/b"], ["a", "a/b"]),  # a run inside another run
        (["fit/20241129-214747", "fit/20241130-080000"], ["fit/20241129-214747", "fit/20241130-080000"]),
        (["x/run_3", "x/run_4"], ["x/run_3", "x/run_4"]),  # variants keep their parent
    ],
)
def test_other_layouts(paths, expected):
    assert names_of(*paths) == expected


def test_display_names_are_always_distinct():
    paths = ["a/b", "a/b/runs/Nov29_21-46-18_vm", "c/b", "c/b/runs/Nov29_21-46-18_vm", "b"]
    shown = names_of(*paths)
    assert len(set(shown)) == len(shown)


def test_session_folders():
    sessions = (
        "Nov29_21-47-47_vm",
        "Dec01_07-56-02_gpu-node-3.cluster",
        "2024-11-29_21-47-47",
        "20241129-214747",
    )
    for folder in sessions:
        assert is_session_folder(folder), folder
    for folder in ("seed_1", "grpo_healthy", "runs", "2024_results"):
        assert not is_session_folder(folder), folder


def test_display_names_on_the_fixture_directory():
    store = load(["tests/fixtures/trl"]).store
    shown = run_display_names({name: run.directory for name, run in store.runs.items()})
    assert sorted(shown.values()) == sorted(
        [
            "grpo_healthy",
            "grpo_liger_cpu_crash",
            "grpo_truncated",
            "grpo_unstable",
            "grpo_with_eval",
            "ppo_healthy",
            "ppo_unstable",
        ]
    )


# -- metrics ----------------------------------------------------------------------------------------

GRPO = [
    "reward",
    "reward_std",
    "rewards/length_reward/mean",
    "rewards/length_reward/std",
    "rewards/contains_x_reward/mean",
    "rewards/contains_x_reward/std",
    "frac_reward_zero_std",
    "completions/mean_length",
    "completions/mean_terminated_length",
    "completions/min_terminated_length",
    "clip_ratio/low_mean",
    "clip_ratio/high_mean",
    "eval/rewards/length_reward/mean",
    "eval/reward",
    "train_samples_per_second",
    "train_steps_per_second",
    "entropy",
    "kl",
]


@pytest.mark.parametrize("width", [8, 10, 13, 15, 18, 24, 40])
def test_metric_labels_are_distinct_and_never_cut_inside_a_word(width):
    labels = metric_labels(GRPO, width)
    assert len(set(labels.values())) == len(GRPO)
    for name, label in labels.items():
        words = set(re.split(r"[/_]", name))
        assert set(re.split(r"[/_…]", label)) - {""} <= words, (name, label)
        if cell_len(label) > width:  # only a name that cannot be cut stays longer than the column
            assert "rewards/" in name or "_" not in label.split("/")[-1] or "…" not in label, (name, label)


def test_a_reward_functions_name_is_never_cut():
    for width in (8, 13, 18):
        labels = metric_labels(GRPO, width)
        assert labels["rewards/length_reward/mean"] == "length_reward/mean"
        assert labels["rewards/contains_x_reward/std"] == "contains_x_reward/std"
        assert labels["eval/rewards/length_reward/mean"].startswith("eval/length_reward")
    wide = metric_labels(GRPO, 30)
    assert wide["rewards/length_reward/mean"] == "rewards/length_reward/mean"  # it fits: whole


def test_metric_labels_drop_the_family_first():
    labels = metric_labels(GRPO, 13)
    assert labels["completions/mean_length"] == "mean_length"
    assert labels["clip_ratio/high_mean"] == "high_mean"
    assert labels["completions/mean_terminated_length"] == "mean…length"  # between words
    assert labels["train_samples_per_second"] != labels["train_steps_per_second"]
    assert labels["kl"] == "kl" and labels["eval/reward"] == "eval/reward"


def test_metric_names_drop_train_only_when_unambiguous():
    assert metric_names(["train/val/ratio", "eval/reward", "custom"]) == {
        "train/val/ratio": "val/ratio",
        "eval/reward": "eval/reward",
        "custom": "custom",
    }
    both = ["train/loss", "loss", "train/kl"]
    assert metric_names(both) == {tag: tag for tag in both}


# -- cells and cuts ---------------------------------------------------------------------------------

# (No zero-width joiner: `visible` escapes it before anything is measured or shown.)
SAMPLES = "aé€→▁█✖▲●×…日本語한국어🔴🚀👍🏽e\u0301中文ｆｕｌｌ"


def test_cell_widths_agree_with_rich():
    from rich.cells import cell_len as rich_cell_len

    for char in SAMPLES:
        assert cell_len(char) == rich_cell_len(char), repr(char)
    assert cell_len(SAMPLES) == rich_cell_len(SAMPLES)
    assert pad_cells("日本", 6) == "日本  " and pad_cells("ab", 5, "right") == "   ab"


def test_fit_path_and_cut_middle_keep_both_ends_of_a_long_name():
    long = "grpo_lr1e-4_beta0.04_" + "x" * 200 + "_seed_3"
    short = fit_path(long, 30)
    assert cell_len(short) <= 30 and short.startswith("grpo_") and short.endswith("seed_3")
    assert fit_path("a/b/experiment_seed_2", 20) == "…/experiment_seed_2"
    wide = cut_middle("実験" * 50 + "_seed_1", 21)
    assert cell_len(wide) <= 21 and wide.endswith("seed_1")


def test_messages_are_cut_between_words_with_every_number_whole():
    message = "policy/entropy_avg fell to 0.0004056 at step 149, 0.0125% of its early level 3.25"
    for width in range(12, len(message)):
        cut = cut_at_word(message, width)
        assert cell_len(cut) <= width
        kept = cut.removesuffix("…")
        assert message.startswith(kept)
        numbers = re.findall(r"[\d.%]+", kept)
        assert all(number in message.split() or number.rstrip(",") in message for number in numbers)
        assert kept == message or message[len(kept)] in " ,;:" or kept.endswith(("/", "_")), (width, cut)
    assert cut_at_word("entropy fell to 0.0004 at step 34", 20) == "entropy fell to…"


def test_word_cuts_keep_whole_words():
    assert word_cuts("mean_terminated_length", 13)[0] == "mean…length"
    assert word_cuts("mean_terminated_length", 16)[0] == "mean_terminated…"
    assert all("…" in cut for cut in word_cuts("frac_reward_zero_std", 13, cut_words=False))


def test_a_backslash_is_part_of_a_name():
    # The display form of a directory name that is not UTF-8 writes each byte as \xNN.
    assert names_of("run\\xff\\xfe-\\xe9t\\xe9") == ["run\\xff\\xfe-\\xe9t\\xe9"]
