"""``rltop snapshot`` as a user runs it: exit codes, error lines, widths, colour on a terminal only.

Most tests call ``rltop.cli.main`` in this process; the few that depend on the real stdout (a
pipe, a pseudo-terminal) run the installed interpreter in a subprocess.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO, TRL, TRL_RUNS
from helpers.snapshot import freeze_clock, isolate_user_rules, run_cli, verdicts_at

from rltop.cli import main
from rltop.commands.snapshot import SnapshotOptions, output_width, use_color

SGR = re.compile(r"\x1b\[[0-9;]*m")
AGE = re.compile(r"\(\d+ (s|min|h|d)( \d+ (min|h))? ago\)")
REPO = REPO


def clean_env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The test's environment without colour/width settings and without the user's rules file."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env.update(extra or {})
    return env


def rltop_subprocess(
    *argv: str, tmp_path: Path, env: dict[str, str] | None = None, **kwargs
) -> subprocess.CompletedProcess:
    """The real ``python -m rltop`` (fresh interpreter, real stdout)."""
    full_env = clean_env(tmp_path, env)
    return subprocess.run(
        [sys.executable, "-m", "rltop", *argv], env=full_env, cwd=REPO, timeout=60, **kwargs
    )


@pytest.fixture(autouse=True)
def no_user_rules(monkeypatch, tmp_path) -> None:
    isolate_user_rules(monkeypatch, tmp_path)


def just_after_training(name: str) -> float:
    """A minute after the fixture's newest point: the snapshot a CI job takes when training ends."""
    store, _ = verdicts_at(TRL / name, None)
    return max(run.last_point_wall_time or 0.0 for run in store.runs.values()) + 60.0


@pytest.mark.parametrize(
    "name, expected",
    [
        ("ppo_unstable", 1), ("grpo_unstable", 1), ("grpo_truncated", 1),
        ("ppo_healthy", 0), ("grpo_healthy", 0), ("grpo_with_eval", 0), ("grpo_liger_cpu_crash", 0),
    ],
)  # fmt: skip
def test_unstable_exits_1_healthy_exits_0(capsys, monkeypatch, name, expected) -> None:
    freeze_clock(monkeypatch, just_after_training(name))
    code, out, err = run_cli(capsys, "snapshot", str(TRL / name))
    assert (code, err) == (expected, "")
    assert ("CRITICAL" in out) == (expected == 1)


def test_unstable_exits_1_at_any_time(capsys) -> None:
    code, out, err = run_cli(capsys, "snapshot", str(TRL / "ppo_unstable"))
    assert code == 1 and "entropy collapse" in out and err == ""


def test_a_finished_ppo_run_is_not_stalled_hours_later(capsys, monkeypatch) -> None:
    """PPOTrainer logs no end-of-training tag: the engine knows it finished at num_total_batches."""
    freeze_clock(monkeypatch, just_after_training("ppo_healthy") + 6 * 3600)
    code, out, _ = run_cli(capsys, "snapshot", str(TRL / "ppo_healthy"))
    assert code == 0, out


def test_finished_grpo_runs_are_not_stalled_hours_later(capsys, monkeypatch) -> None:
    """transformers logs train_runtime at the end: the engine knows these runs are finished."""
    for name in ("grpo_healthy", "grpo_with_eval"):
        freeze_clock(monkeypatch, just_after_training(name) + 6 * 3600)
        assert run_cli(capsys, "snapshot", str(TRL / name))[0] == 0, name


def test_a_run_that_stopped_logging_is_critical(capsys, monkeypatch, tmp_path) -> None:
    """The cron use: a run without an end marker and no new point for an hour has stalled."""
    from tensorboardX import SummaryWriter

    started = 1_700_000_000.0
    writer = SummaryWriter(logdir=str(tmp_path / "logs" / "run"))
    for step in range(1, 61):  # one point every 10 s, no end-of-training summary
        writer.add_scalar("train/custom_metric", 1.0 + 0.01 * (step % 3), step, walltime=started + 10 * step)
    writer.close()
    freeze_clock(monkeypatch, started + 600 + 60)  # a minute after the last point: fine
    assert run_cli(capsys, "snapshot", str(tmp_path / "logs"))[0] == 0
    freeze_clock(monkeypatch, started + 600 + 3600)  # an hour later: stalled
    code, out, _ = run_cli(capsys, "snapshot", str(tmp_path / "logs"))
    assert code == 1 and "stall" in out and "no new point for 1 h" in " ".join(out.split())
    rules = tmp_path / "rules.toml"
    rules.write_text("[stall]\nenabled = false\n")
    code, _, err = run_cli(capsys, "snapshot", str(tmp_path / "logs"), "--rules", str(rules))
    assert (code, err) == (0, "")


def test_fail_on_levels(capsys, monkeypatch) -> None:
    freeze_clock(monkeypatch, just_after_training("ppo_unstable"))
    assert run_cli(capsys, "snapshot", str(TRL / "ppo_unstable"), "--fail-on", "never")[0] == 0
    assert run_cli(capsys, "snapshot", str(TRL / "ppo_unstable"), "--fail-on", "warn")[0] == 1
    freeze_clock(monkeypatch, just_after_training("ppo_healthy"))
    assert run_cli(capsys, "snapshot", str(TRL / "ppo_healthy"), "--fail-on", "critical")[0] == 0


@pytest.mark.parametrize("name", TRL_RUNS)
def test_fail_on_follows_the_run_levels(capsys, monkeypatch, name) -> None:
    """--fail-on warn fails on a run whose level is warn (grpo_with_eval: truncation warnings)."""
    from rltop.health.findings import Level

    now = just_after_training(name)
    freeze_clock(monkeypatch, now)
    _, verdicts = verdicts_at(TRL / name, now)
    worst = max((h.level for h in verdicts.values()), default=Level.OK)
    assert run_cli(capsys, "snapshot", str(TRL / name), "--fail-on", "warn", "-f", "csv")[0] == (
        1 if worst >= Level.WARN else 0
    )
    assert run_cli(capsys, "snapshot", str(TRL / name), "-f", "csv")[0] == (
        1 if worst >= Level.CRITICAL else 0
    )


def test_missing_path_exits_2_with_one_line_on_stderr(tmp_path) -> None:
    done = rltop_subprocess(
        "snapshot", str(tmp_path / "nope"), tmp_path=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("rltop: error: ")
    assert "nope" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--width", "39"], "--width"),
        (["--width", "abc"], "--width"),
        (["--format", "pdf"], "--format"),
        (["--fail-on", "sometimes"], "--fail-on"),
        (["--tags", "("], "--tags"),
        (["--runs", "[z-a]"], "--runs"),
    ],
)
def test_usage_errors_exit_2(capsys, argv, words) -> None:
    try:
        code = main(["snapshot", str(TRL / "ppo_healthy"), *argv])
    except SystemExit as stopped:  # argparse's own errors exit by themselves
        code = stopped.code
    err = capsys.readouterr().err
    assert code == 2
    assert words in err and "Traceback" not in err


def test_input_errors_exit_2_with_one_line(capsys, tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run_cli(capsys, "snapshot", str(empty))
    assert code == 2 and out == "" and err.count("\n") == 1 and "no event files" in err
    bad_rules = tmp_path / "rules.toml"
    bad_rules.write_text("[ratio_drift]\nwarn = 'high'\n")
    code, out, err = run_cli(capsys, "snapshot", str(TRL / "ppo_healthy"), "--rules", str(bad_rules))
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("rltop: error: ")
    code, out, err = run_cli(
        capsys, "snapshot", str(TRL / "ppo_healthy"), "--rules", str(tmp_path / "no.toml")
    )
    assert code == 2 and err.count("\n") == 1
    for target in (tmp_path / "no/dir/x.txt", tmp_path):  # checked before the load, not after
        code, out, err = run_cli(capsys, "snapshot", str(TRL / "ppo_healthy"), "-o", str(target))
        assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("rltop: error: ")


def test_filters(capsys) -> None:
    code, out, err = run_cli(
        capsys, "snapshot", str(TRL), "--runs", "^ppo_", "--tags", "entropy", "-f", "json"
    )
    import json

    runs = json.loads(out)["runs"]
    assert [run["name"].split("/")[0] for run in runs] == ["ppo_healthy", "ppo_unstable"]
    assert all("entropy" in tag for run in runs for tag in run["tags"]) and runs[0]["tags"]
    code, out, err = run_cli(capsys, "snapshot", str(TRL), "--runs", "nothing-like-this")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--runs" in err and "grpo_healthy" in err
    code, out, err = run_cli(capsys, "snapshot", str(TRL), "--tags", "nothing-like-this")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--tags" in err


def test_rules_file_changes_the_verdict(capsys, tmp_path) -> None:
    """--rules reaches the engine: switching every rule that fires off makes ppo_unstable exit 0."""
    code, out, _ = run_cli(capsys, "snapshot", str(TRL / "ppo_unstable"), "-f", "json")
    rules = sorted({f["rule"] for run in json.loads(out)["runs"] for f in run["findings"]})
    assert code == 1 and rules
    path = tmp_path / "rules.toml"
    path.write_text("".join(f"[{rule}]\nenabled = false\n\n" for rule in rules))
    code, out, err = run_cli(capsys, "snapshot", str(TRL / "ppo_unstable"), "--rules", str(path))
    assert (code, err) == (0, "")


def test_help_documents_exit_codes_and_formats(capsys) -> None:
    with pytest.raises(SystemExit):
        run_cli(capsys, "snapshot", "--help")
    text = capsys.readouterr().out
    for word in (
        "exit codes",
        "0  healthy",
        "1  a run at or above",
        "2  usage",
        "--fail-on",
        "markdown",
        "NO_COLOR",
    ):
        assert word in text


@pytest.mark.parametrize("name", TRL_RUNS)
def test_width_40_never_breaks_a_line(capsys, name) -> None:
    code, out, _ = run_cli(capsys, "snapshot", str(TRL / name), "--width", "40")
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 40
    # Metric names are never cut: each one appears whole at the start of a line.
    from rltop.ingest.follow.loader import load
    from rltop.view.names import metric_names as display_names

    for run in load([str(TRL / name)]).store.runs.values():
        for shown in display_names(run.series).values():
            assert any(line.startswith(shown) for line in lines), shown


@pytest.mark.parametrize("width", [40, 57, 64, 80, 81, 120, 200])
def test_every_width_fits(capsys, width) -> None:
    code, out, _ = run_cli(capsys, "snapshot", str(TRL), "--width", str(width))
    assert max(len(line) for line in out.splitlines()) <= width


def test_columns_environment_sets_the_width(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "44")
    _, out, _ = run_cli(capsys, "snapshot", str(TRL / "grpo_unstable"))
    assert max(len(line) for line in out.splitlines()) <= 44
    monkeypatch.setenv("COLUMNS", "20")  # a tiny pane: clamped to the 40-column layout
    _, out, _ = run_cli(capsys, "snapshot", str(TRL / "grpo_unstable"))
    assert max(len(line) for line in out.splitlines()) <= 40


def test_width_and_colour_decisions() -> None:
    assert output_width(55, to_stdout=True) == 55
    assert use_color("auto", True, {}) and not use_color("auto", False, {})
    assert not use_color("auto", True, {"NO_COLOR": "1"}) and use_color("auto", True, {"NO_COLOR": ""})
    assert use_color("auto", False, {"FORCE_COLOR": "1"}) and not use_color("auto", True, {"TERM": "dumb"})
    assert use_color("always", False, {"NO_COLOR": "1"}) and not use_color("never", True, {})


def test_options_from_a_foreign_namespace_take_defaults() -> None:
    """``rltop --once`` hands over the app's namespace: missing options take their defaults."""
    import argparse

    options = SnapshotOptions.from_args(argparse.Namespace(paths=[], tags="loss"))
    assert options.paths == ["."] and options.tags == "loss" and options.format == "text"
    assert options.fail_on == "critical" and options.width is None


def test_piped_output_has_no_escape_codes(tmp_path) -> None:
    target = tmp_path / "out.txt"
    with open(target, "w") as out:
        done = rltop_subprocess(
            "snapshot", str(TRL / "ppo_unstable"), tmp_path=tmp_path, stdout=out, stderr=subprocess.PIPE
        )
    assert done.returncode == 1 and done.stderr == b""
    data = target.read_bytes()
    assert b"\x1b" not in data and b"CRITICAL" in data
    assert max(len(line) for line in data.decode().splitlines()) <= 80  # files default to 80 columns


def _run_in_pty(*argv: str, tmp_path: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run rltop with a pseudo-terminal as stdout (stderr too); return (exit code, output)."""
    leader, follower = pty.openpty()
    full_env = clean_env(tmp_path, {"TERM": "xterm-256color", **env})
    process = subprocess.Popen(
        [sys.executable, "-m", "rltop", *argv], stdout=follower, stderr=follower, env=full_env, cwd=REPO
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_terminal_and_plain_with_no_color(tmp_path) -> None:
    code, coloured = _run_in_pty(
        "snapshot", str(TRL / "ppo_unstable"), "--width", "90", tmp_path=tmp_path, env={}
    )
    assert code == 1
    assert SGR.search(coloured), "a terminal gets colours"
    assert "\x1b]" not in coloured  # colours only: no title/OSC sequences
    code, plain = _run_in_pty(
        "snapshot", str(TRL / "ppo_unstable"), "--width", "90", tmp_path=tmp_path, env={"NO_COLOR": "1"}
    )
    assert code == 1 and "\x1b" not in plain

    # Same text either way, colours aside (the age may tick over between the two runs).
    def lines(text: str) -> list[str]:
        text = AGE.sub("(…)", SGR.sub("", text).replace("\r\n", "\n"))
        return [line.rstrip() for line in text.splitlines()[1:]]

    assert lines(coloured) == lines(plain)


def test_once_is_the_same_snapshot(capsys, monkeypatch) -> None:
    """``rltop --once PATH`` (the app command) prints exactly what ``rltop snapshot PATH`` prints."""
    freeze_clock(monkeypatch, just_after_training("ppo_unstable"))
    path = str(TRL / "ppo_unstable")
    assert run_cli(capsys, "--once", path, "-f", "json") == run_cli(capsys, "snapshot", path, "-f", "json")
    assert run_cli(capsys, "--once", path, "--width", "40") == run_cli(
        capsys, "snapshot", path, "--width", "40"
    )
