"""``rltop [PATH]`` and ``rltop demo`` as commands: what they check before taking the screen."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest
from helpers.paths import TRL
from helpers.ui import preloaded_app, refreshed, settled, wait_until

from rltop.cli import main
from rltop.commands.app import make_app
from rltop.commands.common import UsageError
from rltop.health.findings import Finding, Level
from rltop.ingest.follow.discovery import DiscoveryError
from rltop.view.alerts import AlertView


def _args(**overrides) -> argparse.Namespace:
    values = {
        "paths": [str(TRL / "ppo_unstable")],
        "tags": None,
        "runs": None,
        "poll": None,
        "theme": None,
        "run": None,
        "rules": None,
    }
    values.update(overrides)
    return argparse.Namespace(**values)


def test_without_a_terminal_rltop_prints_the_snapshot(capsys):
    code = main([str(TRL / "ppo_unstable")])  # pytest's stdout is not a terminal
    out = capsys.readouterr().out
    assert code == 1  # ppo_unstable has critical findings: the snapshot's exit code
    assert "entropy_avg" in out and "\x1b" not in out


def test_once_forces_the_snapshot_with_its_options(capsys):
    assert main(["--once", "--format", "json", str(TRL / "ppo_healthy")]) in (0, 1)
    assert capsys.readouterr().out.lstrip().startswith("{")


@pytest.mark.parametrize(
    ("overrides", "error", "text"),
    [
        ({"paths": ["/no/such/dir"]}, DiscoveryError, "no such file"),
        ({"tags": "("}, ValueError, "--tags"),
        ({"theme": "no-such-theme"}, UsageError, "rltop-dark"),
        ({"screenshot_dir": "/no/such/dir"}, UsageError, "--screenshot-dir"),
        ({"follow": "  "}, UsageError, "--follow"),
    ],
)
def test_bad_arguments_fail_before_the_screen_is_taken(overrides, error, text):
    with pytest.raises(error, match=text):
        make_app(_args(**overrides))


@pytest.mark.parametrize("command", ["app", "tail"])
def test_poll_interval_is_checked_by_the_parser_and_has_a_floor(command, capsys):
    # (make_app used to check --poll itself; the parser's type now does, for app and tail alike)
    from rltop.cli import build_parser

    for bad in ("0", "nan", "-1", "1e9"):
        with pytest.raises(SystemExit) as exited:
            main([command, ".", "--poll", bad])
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"rltop: error: argument --poll: {bad}: the interval")
    args = build_parser().parse_args([command, ".", "--poll", "1e-300"])
    assert args.poll == 0.05  # a shorter interval would busy-loop


def test_bad_arguments_are_one_line_and_exit_2(capsys):
    assert main(["demo", "--speed", "0"]) == 2
    assert capsys.readouterr().err.strip().startswith("rltop: error: --speed")
    assert main(["demo", "--no-ui"]) == 2
    assert "--dir" in capsys.readouterr().err
    assert main(["demo"]) == 2  # no terminal under pytest
    assert "needs a terminal" in capsys.readouterr().err


def test_a_command_imports_no_other_commands_module():
    # The dashboard's start builds only its own parser; the global help still lists every command.
    code = (
        "import sys; from rltop.cli import build_parser; build_parser('app').parse_args(['app', '.']); "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('rltop.commands.'))))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = run.stdout.split()
    assert "rltop.commands.app" in loaded
    assert not {
        "rltop.commands.export",
        "rltop.commands.tail",
        "rltop.commands.watch",
        "rltop.commands.completions",
        "rltop.commands.demo",
    } & set(loaded), loaded
    help_text = subprocess.run(
        [sys.executable, "-m", "rltop", "--help"], capture_output=True, text=True
    ).stdout
    for name in ("app", "watch", "export", "tail", "snapshot", "completions", "demo"):
        assert f"    {name}" in help_text


def test_demo_no_ui_writes_the_runs(tmp_path, capsys):
    assert main(["demo", "--no-ui", "--dir", str(tmp_path), "--speed", "2000"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grpo_healthy", "ppo_unstable"]


async def test_focused_alert_keeps_focus_when_findings_change_order():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.dashboard.alerts.items) > 2 and app.focused is not None)
        await settled(pilot)
        strip = app.dashboard.alerts
        strip.items[1].focus()
        await wait_until(pilot, lambda: app.focused is strip.items[1])
        kept = strip.items[1].finding
        newcomer = Finding(Level.CRITICAL, "non_finite", kept.run, "train/new", 3, None, "new", "advice")
        await strip.show([AlertView(newcomer, (), True, "new"), *strip.alerts], "healthy")
        await refreshed(pilot, strip)  # the focus call the strip queued has run
        assert app.focused.finding == kept and app.focused is strip.items[2]
        assert app.dashboard.board.scroll_y == 0


def test_follow_and_screenshot_dir_reach_the_app(tmp_path):
    app = make_app(_args(follow="newest", screenshot_dir=str(tmp_path)))
    assert app.follow == "newest" and app.screenshot_dir == str(tmp_path)
    assert make_app(_args(run="ppo")).follow == "ppo"  # --run NAME is --follow NAME
    assert make_app(_args()).follow == "worst"
