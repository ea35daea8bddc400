"""veRL's console logs as runs: every metric line of two real logs read, nothing from other output.

The real logs (tests/fixtures/verl/real, see its README) are checked against an independent, plain
reading of their step lines (a regex per line, items split at " - " and at their last colon), and
their config against Python's own literal parser. The console logs veRL 0.9.1 and 0.7.0 wrote
themselves (tests/fixtures/verl/written) must give the values the JSONL file of the same run holds.
"""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import pytest
from helpers.paths import FIXTURES

from rltop.ingest import sources
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.verl.lines import NOT_A_NUMBER, OUT_OF_RANGE, metric_line, segments

VERL = FIXTURES / "verl"
BASELINE = VERL / "real" / "verl-baseline-qwen0.5b-ppo" / "Qwen2.5-0.5B-bsz256_2-prompt512-resp256-0.538.log"
GUI_AGENT = VERL / "real" / "gui-agent-grpo" / "verl_demo.log"
REAL = {"baseline": (BASELINE, 435, 17486), "gui_agent": (GUI_AGENT, 10, 690)}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_PLAIN_STEP_LINE = re.compile(r"^\((?:main_task|TaskRunner) pid=\d+\) step:(\d+) - (.*)$")


def plain_reading(path: Path) -> dict[str, list[tuple[int, float]]]:
    """The metric lines of a real log, read the simplest way (these logs hold plain numbers only)."""
    points: dict[str, list[tuple[int, float]]] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        found = _PLAIN_STEP_LINE.match(_ANSI.sub("", line))
        if found:
            for item in found.group(2).split(" - "):
                cut = item.rindex(":")
                points.setdefault(item[:cut], []).append((int(found.group(1)), float(item[cut + 1 :])))
    return points


def read_points(path: Path) -> tuple[dict[str, list[tuple[int, float]]], dict, list[str]]:
    """(tag -> points, config, problems) of one log as rltop reads it."""
    result = load([str(path)])
    (run,) = result.store.runs.values()
    points = {
        tag: list(zip(series.steps.tolist(), series.values.tolist())) for tag, series in run.series.items()
    }
    return points, run.config, result.problems


@pytest.mark.parametrize("name", sorted(REAL))
def test_every_metric_line_of_a_real_log_is_read_and_nothing_else(name):
    path, lines, values = REAL[name]
    expected = plain_reading(path)
    assert sum(len(points) for points in expected.values()) == values  # the README's figures
    assert max(len(points) for points in expected.values()) == lines
    points, _, problems = read_points(path)
    assert problems == []
    assert sorted(points) == sorted(expected)  # every tag, none from the config, warnings or completions
    for tag, tag_points in expected.items():
        assert points[tag] == tag_points, tag


def test_the_real_logs_tags_are_veRL_s_own_names():
    points, _, _ = read_points(BASELINE)
    assert {"critic/lr(1e-4)", "actor/entropy_loss", "val/test_score/openai/gsm8k", "timing/gen"} <= set(
        points
    )
    assert points["actor/ppo_kl"][1] == (1, -0.0) and math.copysign(1, points["actor/ppo_kl"][1][1]) == -1
    assert [step for step, _ in points["val/test_score/openai/gsm8k"]][:3] == [9, 19, 29]  # test_freq 10
    gui, _, _ = read_points(GUI_AGENT)
    assert gui["actor/lr"][0] == (1, 1e-06) and gui["perf/total_num_tokens"][0] == (1, 1993122.0)
    assert gui["rollout/too_good_sample_ratio"][0] == (1, 0.010416666666666666)


def printed_config(path: Path, prefix: str) -> dict:
    """The config dict a log printed, read with ast.literal_eval: the driver's lines from the
    ``{'actor_rollout_ref'`` line on, each cut where another process's coloured prefix was glued."""
    text, started = [], False
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        at = line.find(prefix)
        if at < 0:
            continue
        body = line[at + len(prefix) :].removeprefix("\x1b[0m ").split("\x1b")[0]
        if body.startswith("{'actor_rollout_ref'"):
            started = True
        if started:
            text.append(body)
            try:
                return ast.literal_eval("\n".join(text))
            except SyntaxError:
                continue
    raise AssertionError("no config dict")


def flat(document: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in document.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            out.update(flat(value, name))
        else:
            out[name] = value
    return out


@pytest.mark.parametrize(
    "path, prefix", [(BASELINE, "(main_task pid=926049)"), (GUI_AGENT, "(TaskRunner pid=2021996)")]
)
def test_the_printed_config_is_the_run_s_config(path, prefix):
    _, config, _ = read_points(path)
    expected = flat(printed_config(path, prefix))
    assert len(expected) > 90
    assert {key: config[key] for key in expected} == expected
    assert config["framework"] == "verl"


def test_what_the_rules_need_from_the_baseline_s_config():
    _, config, _ = read_points(BASELINE)
    assert config["algorithm.adv_estimator"] == "gae"  # PPO
    assert config["algorithm.kl_ctrl.kl_coef"] == 0.001
    assert config["actor_rollout_ref.actor.optim.lr"] == 1e-06 and config["critic.optim.lr"] == 1e-05
    assert config["actor_rollout_ref.actor.entropy_coeff"] == 0.001
    assert config["actor_rollout_ref.actor.clip_ratio"] == 0.2
    assert config["actor_rollout_ref.actor.ppo_epochs"] == 1
    assert config["actor_rollout_ref.actor.ppo_mini_batch_size"] == 64
    assert config["data.max_response_length"] == 256
    assert (config["trainer.total_epochs"], config["train_dataloader_size"]) == (15, 29)  # 435 steps
    assert config["trainer.test_freq"] == 10
    assert config["trainer.project_name"] == "verl_example"
    assert config["trainer.experiment_name"] == "gemma2b_function_rm"  # the line another process glued to
    assert config["trainer.logger"] == ["console"]  # ... and the lines 30 lines after it


def test_what_the_rules_need_from_the_gui_agent_s_config():
    _, config, _ = read_points(GUI_AGENT)
    assert config["algorithm.adv_estimator"] == "grpo"
    assert config["actor_rollout_ref.rollout.n"] == 8
    assert config["actor_rollout_ref.actor.use_kl_loss"] is False
    assert config["actor_rollout_ref.actor.kl_loss_coef"] == 0.001
    assert config["algorithm.use_kl_in_reward"] is False
    assert (
        config["actor_rollout_ref.actor.clip_ratio_low"],
        config["actor_rollout_ref.actor.clip_ratio_high"],
    ) == (
        0.2,
        0.2,
    )
    assert config["total_training_steps"] == 133000 and config["trainer.total_training_steps"] is None
    assert config["data.max_response_length"] == 10240


def test_the_settings_a_veRL_run_is_judged_and_shown_with():
    # rltop's names for veRL's keys (what the advice says and the JSON report's config holds); the
    # GUI agent keeps kl_loss_coef 0.001 and kl_ctrl.kl_coef 0.001 with both KL switches off: no KL
    # penalty at all, so "raise beta (now 0.001)" would mislead.
    from rltop.view.config import config_summary

    _, config, _ = read_points(GUI_AGENT)
    summary = config_summary(config)
    assert summary is not None
    assert (summary["learning_rate"], summary["beta"], summary["kl_coef"]) == (1e-06, 0.0, 0.0)
    assert (summary["num_generations"], summary["max_completion_length"], summary["max_steps"]) == (
        8,
        10240,
        133000,
    )
    assert (summary["epsilon"], summary["epsilon_high"], summary["max_grad_norm"]) == (0.2, 0.2, 1.0)
    _, baseline, _ = read_points(BASELINE)  # (no KL switches printed: the coefficient stands)
    assert config_summary(baseline)["kl_coef"] == 0.001 and config_summary(baseline)["max_steps"] == 435


@pytest.mark.parametrize("version", ["verl0_9_1", "verl0_7_0"])
def test_the_console_log_veRL_wrote_gives_the_values_of_its_jsonl(version):
    console, config, problems = read_points(VERL / "written" / version / "console.log")
    assert problems == [] and config == {"framework": "verl"}  # no config dump in a bare Tracking run
    records = [
        json.loads(line) for line in (VERL / "written" / version / "grpo_run.jsonl").read_text().splitlines()
    ]
    expected: dict[str, list[tuple[int, float]]] = {}
    for record in records:
        for key, value in record["data"].items():
            if isinstance(value, (int, float)) or value is None:  # what the console logger prints
                number = math.nan if value is None else float(value)
                expected.setdefault(key, []).append((record["step"], number))
    if version == "verl0_9_1":  # orjson wrote NaN and inf as null; the console printed them
        expected["actor/grad_norm"][5] = (6, math.inf)
        expected["critic/score/min"] = [(6, -math.inf)]
    assert sorted(console) == sorted(expected)
    for tag, points in expected.items():
        assert [(s, repr(v)) for s, v in console[tag]] == [(s, repr(v)) for s, v in points], tag


@pytest.mark.parametrize(
    "printed, value",
    [
        ("0.123", 0.123), ("-0.000", -0.0), ("1e-06", 1e-06), ("7", 7.0), ("nan", math.nan),
        ("-inf", -math.inf), ("True", 1.0), ("np.float64(0.19)", 0.19), ("np.int64(7)", 7.0),
        ("np.float32(0.33333334)", 0.33333334),
        ("np.float64(nan)", math.nan), ("np.float64(-inf)", -math.inf), ("np.longdouble('0.1')", 0.1),
        ("np.True_", 1.0), ("Decimal('1.5')", 1.5), ("4987.0703125", 4987.0703125),
    ],
)  # fmt: skip
def test_every_value_veRL_prints_is_read(printed, value):
    line = metric_line(f"step:3 - actor/x:{printed} - b:1")
    assert line is not None and line.step == 3 and line.odd == []
    (key, got), _ = line.values
    assert key == "actor/x" and (got == value or (math.isnan(got) and math.isnan(value)))


def test_values_no_float_holds_are_odd_not_points():
    line = metric_line("step:3 - a:1e999 - b:" + "9" * 400 + " - c:np.complex128(1+2j) - d:(1+2j) - e:2")
    assert line.values == [("e", 2.0)]
    assert line.odd == [("a", OUT_OF_RANGE), ("b", OUT_OF_RANGE), ("c", NOT_A_NUMBER), ("d", NOT_A_NUMBER)]


@pytest.mark.parametrize(
    "key",
    ["critic/lr(1e-4)", "val-core/aime_2024/acc/mean@30", "val-core/openai/gsm8k/reward/mean@1",
     "val-core/hf:org/data/acc/mean@4", "val-core/my data - v2/acc/mean@4",
     "timing_s/agent_loop/slowest/response_length"],
)  # fmt: skip
def test_keys_keep_every_character_veRL_writes(key):
    line = metric_line(f"step:101 - {key}:0.5 - actor/entropy:np.float64(0.25)")
    assert line is not None and line.values == [(key, 0.5), ("actor/entropy", 0.25)] and line.step == 101


@pytest.mark.parametrize(
    "text",
    [
        "Let's think step by step: 3 + 4 = 7",
        "step:1 - the answer:42",  # one item whose key is prose
        "step:2 - x:1 - y:seven",  # an item that is no number
        "step:3 - x:1 - ",
        "step:4",
        "step:5 - ",
        "ValueError: step 0 - extract action failed from: Thought: click",
        "Step:6 - x:1",
        "step:x - a:1",
        "the step:7 - a:1 - b:2",
        "step:8 - a:1 - b:2 trailing words",
        "step:8 - a:1 - b:garbage - c:2",  # not a key "b:garbage - c"
        "step:9 - a\x00b:1 - c:2",
        "  'step_start': 0},",
        "'lr_warmup_steps': -1,",
    ],
)
def test_other_output_is_no_metric_line(text):
    assert metric_line(text) is None


@pytest.mark.parametrize(
    "raw, prefix, message",
    [
        (
            "\x1b[2m\x1b[36m(main_task pid=926049)\x1b[0m step:0 - a:1",
            "(main_task pid=926049)",
            "step:0 - a:1",
        ),
        ("\x1b[36m(TaskRunner pid=2021996)\x1b[0m step:1 - a:1", "(TaskRunner pid=2021996)", "step:1 - a:1"),
        ("(TaskRunner pid=7, ip=10.0.0.2) step:1 - a:1", "(TaskRunner pid=7, ip=10.0.0.2)", "step:1 - a:1"),
        ("step:1 - a:1", "", "step:1 - a:1"),
        ("\x1b[1m\x1b[32mstep:1 - a:1\x1b[0m", "", "step:1 - a:1"),
    ],
)
def test_ray_prefixes_and_colours_come_off(raw, prefix, message):
    assert segments(raw) == [(prefix, message)]


def test_a_glued_line_a_progress_bar_and_ray_s_deduplication():
    glued = (
        "\x1b[36m(TaskRunner pid=1)\x1b[0m step:2 - a:1 - b:2\x1b[2m\x1b[36m(pid=934604)\x1b[0m libgomp: x"
    )
    pieces = segments(glued)
    assert pieces == [("(TaskRunner pid=1)", "step:2 - a:1 - b:2"), ("(pid=934604)", "libgomp: x")]
    assert metric_line(pieces[0][1]).values == [("a", 1.0), ("b", 2.0)]
    bar = "(TaskRunner pid=1) \rTraining:  10%|█         | 1/10 [01:21<12:13, 81.49s/it]step:2 - a:1 - b:2"
    (_, first), (_, second) = segments(bar)
    assert first == "" and metric_line(second).values == [("a", 1.0), ("b", 2.0)]
    assert metric_line("step:2 - a:1 - b:2 [repeated 3x across cluster]").values == [("a", 1.0), ("b", 2.0)]


# -- which files are veRL console logs ---------------------------------------------------------


def test_names_a_console_log_may_have():
    kind = sources.kind("verl_console")
    for name in ("train.log", "slurm-4242.out", "nohup.out", "log.txt", "run.err", "stdout", "TRAIN.LOG"):
        assert kind.claims(name), name
    for name in ("events.out.tfevents.1.host", "a.jsonl", "train.log~", "x.py", ".hidden", "train.log.1"):
        assert sources.claim(name) is not kind, name


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def lines_of(path: Path, size: int) -> bytes:
    """The whole lines within the first ``size`` bytes of a log."""
    data = path.read_bytes()[:size]
    return data[: data.rindex(b"\n") + 1]


def test_only_logs_that_look_like_veRL_s_become_runs(tmp_path):
    root = tmp_path / "logs"
    write(root / "verl" / "train.log", lines_of(BASELINE, 300_000))
    write(root / "other" / "train.log", "".join(f"step {i}: loss=0.{i} - lr:0.1\n" for i in range(5000)))
    write(root / "other" / "notes.txt", "Let's think step by step.\nstep:1 - the answer:42\n")
    write(root / "other" / "README", "step:1 is a word, {'a': 1}\n")
    write(root / "other" / "blob", bytes(range(256)) * 64 + b"\nstep:1 - a:1 - b:2\n")  # binary, no extension
    write(root / "config_only" / "slurm-1.out", lines_of(BASELINE, 20_000))  # the config dump, no step yet
    write(root / "proj" / "wandb" / "run-20250101_000000-abc" / "files" / "output.log", BASELINE.read_bytes())
    result = load([str(root)])
    assert sorted(result.store.runs) == ["config_only/slurm-1.out", "verl/train.log"]
    assert result.problems == []
    assert result.store.runs["config_only/slurm-1.out"].config["algorithm.adv_estimator"] == "gae"
    assert {run.kind for run in result.discovery.runs} == {"verl_console"}


def test_a_given_file_that_is_not_veRL_s_is_said(tmp_path):
    path = write(tmp_path / "train.log", "epoch 1 loss 0.5\n")
    result = load([str(path)])
    assert result.store.runs == {}
    (problem,) = result.discovery.problems
    assert problem.startswith(f"{path}: not one of the veRL console logs")


def test_the_content_check_reads_a_file_once_until_it_changes(tmp_path, monkeypatch):
    from rltop.ingest.sources.content_check import HeadCheck

    foreign = write(tmp_path / "a" / "train.log", "x" * 300_000 + "\n")
    log = write(tmp_path / "b" / "train.log", "starting\n")
    looked: list[str] = []
    real_look = HeadCheck._look
    monkeypatch.setattr(
        HeadCheck, "_look", lambda self, p, size: looked.append(p) or real_look(self, p, size)
    )
    assert load([str(tmp_path)]).store.runs == {}
    assert sorted(looked) == sorted([str(foreign), str(log)])
    looked.clear()
    assert load([str(tmp_path)]).store.runs == {}
    assert looked == []  # neither changed: no byte read again
    with open(foreign, "ab") as handle:
        handle.write(b"step:1 - a:1 - b:2\n")  # beyond the head: a foreign log stays foreign
    with open(log, "ab") as handle:
        handle.write(b"step:1 - a:1 - b:2\n")  # still within the head: looked at again
    assert sorted(load([str(tmp_path)]).store.runs) == ["b/train.log"]
    assert looked == [str(log)]


def test_a_replaced_file_is_looked_at_again(tmp_path):
    path = write(tmp_path / "train.log", "x" * 300_000 + "\n")
    assert load([str(tmp_path)]).store.runs == {}
    replacement = write(tmp_path / "new.log", lines_of(BASELINE, 300_000))
    replacement.replace(path)  # another file under the same name (a rename: a new inode)
    assert sorted(load([str(tmp_path)]).store.runs) == ["train.log"]


@pytest.mark.parametrize(
    "tail, said",
    [
        (b"(TaskRunner pid=1) step:435 - actor/entropy:0.4 - actor/pg", True),  # stopped mid-line
        (b"(TaskRunner pid=1) Training Progress:  40%|####      | 4/10", False),  # a progress bar, no step
        (b"", False),
    ],
)
def test_a_one_shot_load_says_when_the_last_line_may_hold_points(tmp_path, tail, said):
    path = write(tmp_path / "train.log", GUI_AGENT.read_bytes() + tail)
    result = load([str(path)])
    unfinished = [p for p in result.problems if "last line is not finished" in p]
    where = f"({len(tail)} bytes at byte {GUI_AGENT.stat().st_size}, no newline yet)"
    assert unfinished == ([f"{path}: its last line is not finished {where}; not read"] if said else [])
    assert sum(len(s) for s in result.store.runs["train.log"].series.values()) == 690


def test_a_content_check_that_fails_or_cannot_read_rejects_the_file(tmp_path):
    from rltop.ingest.sources.content_check import HeadCheck

    def broken(head: bytes, whole: bool) -> bool:
        raise IndexError("a predicate's bug")

    path = write(tmp_path / "train.log", "step:1 - a:1 - b:2\n")
    assert HeadCheck(broken)(str(path)) is False
    assert HeadCheck(lambda head, whole: True)(str(tmp_path / "missing.log")) is False
