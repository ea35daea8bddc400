"""The rough edges a new user hits, each fixed (issue 28): one ``-f/--format`` everywhere, errors
that name the command's own help, unknown commands and runs said as such, unreadable input that
fails a snapshot with its own exit code, W&B run names, stall text in display names with
sub-second gaps, keys that say why they cannot act, the keys listed in ``--help`` from the table
the footer and ``?`` use, and the completions caption within ``--width``."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from helpers.paths import FIXTURES
from helpers.snapshot import isolate_user_rules
from helpers.ui import notifications, preloaded_app, screen_text, settled, wait_until, write_run

from rltop.cli import main
from rltop.commands.common import EXIT_UNREADABLE

TRL = FIXTURES / "trl"
TRL2 = FIXTURES / "trl2"


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``rltop`` in this process, argument errors included: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- the command line ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "fmt"),
    [
        ("export", "jsonl"),
        ("snapshot", "json"),
        ("tail", "csv"),
        ("watch", "json"),
        ("completions", "jsonl"),
        ("app", "json"),
    ],
)
def test_one_short_format_flag_in_every_command(command, fmt):
    from rltop.cli import build_parser

    args = build_parser(command).parse_args([command, "-f", fmt, str(TRL / "grpo_healthy")])
    assert args.format == fmt


def test_export_takes_f_jsonl(capsys):
    code, out, err = cli(capsys, "export", "-f", "jsonl", str(TRL / "grpo_healthy"))
    assert code == 0 and err == ""
    first = json.loads(out.splitlines()[0])
    assert set(first) == {"run", "tag", "step", "wall_time", "value", "session"}


@pytest.mark.parametrize(
    "argv",
    [("export", "--bogus", str(TRL)), ("snapshot", str(TRL), "--fail-on", "x"), ("tail", str(TRL), "-q")],
)
def test_errors_name_the_commands_own_help(capsys, argv):
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.rstrip().endswith(f"(see rltop {argv[0]} --help)"), err


def test_an_unknown_word_is_said_to_be_neither_a_command_nor_a_path(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "bogus")
    assert code == 2 and out == ""
    assert err.startswith("rltop: error: bogus: no such command, and no such file or directory (")
    assert "commands: app, watch, export" in err and "see rltop --help" in err
    code, _, err = cli(capsys, "snapshop")
    assert code == 2 and "did you mean `rltop snapshot`?" in err
    code, _, err = cli(capsys, "./bogus")  # a path, plainly: the path's error only
    assert code == 2 and "no such command" not in err and "no such file or directory" in err
    write_run(tmp_path / "bogus", {"train/loss": [1.0, 0.5]})  # a folder of that name is a path
    code, out, err = cli(capsys, "bogus", "--once", "--fail-on", "never")
    assert code == 0 and "bogus" in out, err


def test_garbage_or_unreadable_input_fails_the_snapshot_with_code_3(capsys, tmp_path, monkeypatch):
    isolate_user_rules(monkeypatch, tmp_path)
    garbage = tmp_path / "logs" / "broken"
    garbage.mkdir(parents=True)
    (garbage / "events.out.tfevents.1.host").write_bytes(bytes(range(256)) * 8)
    code, out, err = cli(capsys, "snapshot", str(tmp_path / "logs"))
    assert code == EXIT_UNREADABLE == 3, err
    assert "EMPTY" in out  # the snapshot is still printed
    assert "rltop: warning:" in err and "no valid TFRecord" in err and "exit code 3" in err
    write_run(tmp_path / "logs" / "good", {"train/loss": [1.0, 0.9, 0.8]})
    code, _, err = cli(capsys, "snapshot", str(tmp_path / "logs"), "--fail-on", "never")
    assert code == 3, err  # a good run beside it, no findings asked for: still incomplete
    code, _, _ = cli(capsys, "snapshot", str(tmp_path / "logs" / "good"), "--fail-on", "never")
    assert code == 0
    code, out, err = cli(capsys, "--help")
    assert "3 snapshot could not read some of its input" in out
    code, out, err = cli(capsys, "snapshot", "--help")
    assert re.search(r"\n  3  some input could not be read", out)


def test_the_keys_in_app_help_come_from_the_table_of_the_footer_and_the_help_screen(capsys):
    from rltop.ui.app import RltopApp
    from rltop.ui.logic.keys import DASHBOARD_KEYS, DETAIL_KEYS, help_rows
    from rltop.ui.screens.dashboard import DashboardScreen
    from rltop.ui.screens.detail import DetailScreen

    code, out, _ = cli(capsys, "app", "--help")
    assert code == 0
    text = " ".join(out.split())
    for shown, meaning in help_rows(DASHBOARD_KEYS) + help_rows(DETAIL_KEYS):
        assert f"{shown} {' '.join(meaning.split())}" in text, shown
    for key in ("c", "e", "a", "v", "w", "o", "f", "g / b", "l / i"):  # once missing from --help
        assert any(shown == key for shown, _ in help_rows(DASHBOARD_KEYS) + help_rows(DETAIL_KEYS))
    for bound, scope in ((RltopApp.BINDINGS, "app"), (DashboardScreen.BINDINGS, "screen")):
        assert [(b.key, b.action, b.description, b.show) for b in bound] == [
            (k.keys, k.action, k.label, k.show) for k in DASHBOARD_KEYS if k.action and k.scope == scope
        ]
    assert [(b.key, b.action) for b in DetailScreen.BINDINGS] == [(k.keys, k.action) for k in DETAIL_KEYS]


def test_the_completions_caption_keeps_to_the_width(capsys):
    code, out, err = cli(capsys, "completions", str(TRL2 / "grpo_completions"), "--width", "50")
    assert code == 0, err
    lines = out.splitlines()
    assert all(len(line) <= 50 for line in lines), max(lines, key=len)
    head = "\n".join(lines[:8])
    assert "clipped_ratio 0.8125" in head and "same rows as step 59" in head  # folded, not dropped
    code, wide, _ = cli(capsys, "completions", str(TRL2 / "grpo_completions"), "--width", "240")
    assert "(cap 16 tokens; the text, in characters, cannot tell which) · same rows" in wide


# -- stall text ------------------------------------------------------------------------------------------


def test_gaps_under_a_second_keep_their_decimals():
    from rltop.model.durations import format_duration, format_gap
    from rltop.view.chart.scale import x_ticks

    assert [format_gap(s) for s in (0.2, 0.05, 1.5, 0.0, 12.7, 600)] == [
        "0.2 s",
        "0.05 s",
        "1.5 s",
        "0 s",
        "12 s",
        "10 min",
    ]
    assert format_duration(0.2) == "0 s"  # ages keep whole seconds ("4 s ago" does not flicker)
    assert x_ticks(0.0, 1.0, "relative", 3)[1] == ["0 s", "0.5 s", "1 s"]  # a short run's time axis


def test_a_stall_in_the_snapshot_names_the_run_as_its_title_does(capsys, monkeypatch, tmp_path):
    isolate_user_rules(monkeypatch, tmp_path)
    code, out, err = cli(capsys, "snapshot", str(TRL2 / "grpo_killed"), "--width", "200")
    assert code == 1, err
    (line,) = [line for line in out.splitlines() if "stall:" in line]
    assert "run grpo_killed stopped at step 135 of 400" in line and "runs/Dec01" not in line


# -- W&B run names -----------------------------------------------------------------------------------------


NAMED_RUNS = r"""
import sys
import wandb

for name in sys.argv[2:]:
    run = wandb.init(project="rltop-names", mode="offline", dir=sys.argv[1], name=name or None,
                     reinit="create_new")
    for step in range(1, 4):
        run.log({"train/loss": 1.0 / step}, step=step)
    run.finish()
"""


def test_wandb_runs_are_named_by_their_wandb_run_name(tmp_path, capsys, monkeypatch):
    from helpers.wandb_live import offline_env

    argv = [sys.executable, "-c", NAMED_RUNS, str(tmp_path), "grpo-baseline", "grpo-lr3e-4", ""]
    wrote = subprocess.run(
        argv, env=offline_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert wrote.returncode == 0, wrote.stderr
    isolate_user_rules(monkeypatch, tmp_path)
    code, out, err = cli(capsys, "snapshot", str(tmp_path / "wandb"), "-f", "json")
    assert code == 0, err
    runs = json.loads(out)["runs"]
    names = sorted(run["display_name"] for run in runs)
    assert "grpo-baseline" in names and "grpo-lr3e-4" in names
    (nameless,) = [run for run in runs if run["display_name"] not in ("grpo-baseline", "grpo-lr3e-4")]
    assert nameless["display_name"].startswith("run-")  # no W&B name: its folder, as before
    assert all(run["name"].startswith("run-") for run in runs)  # the exact name stays the folder's


# -- keys that say why they cannot act ---------------------------------------------------------------------


async def test_follow_of_a_run_that_does_not_exist_is_said():
    app = preloaded_app("grpo_healthy", "ppo_unstable", follow="nosuchrun")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        await wait_until(pilot, lambda: any("--follow nosuchrun" in n for n in notifications(app)))
        (said,) = [n for n in notifications(app) if "--follow nosuchrun" in n]
        assert "no run matches it (yet); showing the worst run" in said and "grpo_healthy" in said
        assert app.session.display_name(app.session.current) == "ppo_unstable"


async def test_c_says_why_there_are_no_charts():
    app = preloaded_app(paths=[str(TRL2), str(TRL)], follow="grpo_unstable")
    async with app.run_test(size=(130, 36)) as pilot:  # large enough, but 16 runs and 7 alerts
        await settled(pilot)
        assert not app.dashboard.grid.display
        for _ in range(2):  # it stays on, with nothing drawn: every c says why
            await pilot.press("c")
        await wait_until(pilot, lambda: sum("no room for charts" in n for n in notifications(app)) == 2)
        said = next(n for n in notifications(app) if "no room for charts" in n)
        assert "leave 16 of 36 lines" in said and "v hides the overview" in said
        await pilot.press("v")  # the overview hidden: room for the charts
        await wait_until(pilot, lambda: app.dashboard.grid.display)
        await pilot.resize_terminal(100, 30)
        await pilot.press("c")
        await wait_until(
            pilot, lambda: any("at least 120 × 36 (this one: 100 × 30)" in n for n in notifications(app))
        )


async def test_e_on_a_run_without_completions_says_so_and_opens_nothing():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        await pilot.press("e")
        await wait_until(pilot, lambda: any("no completions logged" in n for n in notifications(app)))
        assert app.screen is app.dashboard


async def test_grad_norms_thresholds_are_said_in_the_rules_words():
    from rltop.ui.screens.detail import DetailScreen

    app = preloaded_app(paths=[str(TRL2 / "grpo_nan_crash")])
    async with app.run_test(size=(100, 40)) as pilot:
        await settled(pilot)
        app.open_detail("train/grad_norm")
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
        await wait_until(pilot, lambda: "thresholds:" in screen_text(app))
        text = " ".join(screen_text(app).split())
        assert "Dead update: warn < 1e-06, critical = 0" in text
        assert "critical < 0" not in text
        assert "Grad-norm spike: warn ≥ 10 × median" in text


def test_no_grid_reason_by_size():
    from rltop.ui.logic.grid_layout import no_grid_reason

    assert no_grid_reason(200, 50, 8, 40) is None
    assert "at least 120 × 36" in no_grid_reason(100, 30, 8, 20)
    assert no_grid_reason(130, 40, 8, 20) is None  # 13 lines for a chart, 7 for the cards
    assert "leave 15 of 40 lines" in no_grid_reason(130, 40, 8, 15)
