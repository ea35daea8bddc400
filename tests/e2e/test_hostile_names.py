"""Hostile names never reach a terminal unescaped: stderr, CSV and JSON Lines, every bidi and format
character, and directory names that are not UTF-8 in every output under a strict UTF-8 stdout.

A run directory may be called ``\\x1b]0;pwned\\x07`` (which retitles a terminal or a tmux pane),
hold a right-to-left override, a tag character or a line break, or be bytes that are not UTF-8.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from helpers.paths import REPO, trl_event_file
from helpers.tail import Lines

from rltop.commands.common import error_line, note, warn
from rltop.model.names import display_name
from rltop.view.text.safe import visible

ROOT = REPO  # the repository root
TITLE = "\x1b]0;pwned\x07"
BIDI_AND_FORMAT = (
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufff9\ufffa\ufffb"
    "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u2028\u2029\u0600\u06dd"
    "\u115f\u3164" + "".join(chr(c) for c in range(0xE0000, 0xE0080))
)
STRICT = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "PYTHONPATH": str(ROOT)}
FORMATS = ("text", "markdown", "json", "csv", "svg", "html")


def rltop(*args: str, env=None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rltop", *args], cwd=ROOT, capture_output=True, env=env or STRICT, **kwargs
    )


def unsafe(text: str) -> list[str]:
    """Characters of ``text`` a terminal would act on or hide (other than the line ends)."""
    return [c for c in text if c not in "\n" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")]


def run_named(root: Path, name: str | bytes, fixture: str = "grpo_with_eval") -> Path:
    """A run directory called ``name`` (bytes for a name that is not UTF-8) holding a real log."""
    directory = os.path.join(os.fsencode(root), os.fsencode(name))
    os.makedirs(directory)
    shutil.copy(trl_event_file(fixture), os.path.join(directory, trl_event_file(fixture).name.encode()))
    return Path(os.fsdecode(directory))


# -- the escaping function ------------------------------------------------------------------------


def test_every_control_format_and_separator_character_is_escaped():
    kinds = ("Cc", "Cf", "Cs", "Zl", "Zp")
    missing = [
        f"U+{code:04X}"
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in kinds and visible(chr(code)) == chr(code)
    ]
    assert missing == []


@pytest.mark.parametrize("char", list(BIDI_AND_FORMAT), ids=lambda c: f"U+{ord(c):04X}")
def test_bidi_and_format_characters_become_their_escapes(char):
    shown = visible(f"a{char}b")
    assert char not in shown and shown.startswith("a\\") and shown.endswith("b")
    code = ord(char)
    expected = f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    assert shown[1:-1] == expected


def test_line_breaks_and_undecodable_bytes():
    assert visible("a\nb\r\tc") == "a\\nb\\r\\tc"
    name = os.fsdecode(b"run\xff\xfe")
    assert visible(name) == display_name(name) == "run\\xff\\xfe"
    assert display_name("ok \u202e") == "ok \u202e"  # display_name only handles bytes; visible the rest


# -- stderr ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("say", [warn, note, error_line])
def test_warn_note_and_error_lines_escape(say, capsys):
    undecodable = os.fsdecode(b"x\xff")
    say(f"run {TITLE}: a\nb \u202eevil\U000e0041 {undecodable}")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not unsafe(err)
    assert "\\x1b]0;pwned\\x07" in err and "a\\nb" in err and "\\u202e" in err and "\\U000e0041" in err
    assert "x\\xff" in err


def test_argument_errors_are_one_escaped_line():
    done = rltop("snapshot", ".", "-f", f"x{TITLE}\n")
    assert done.returncode == 2
    err = done.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("rltop: error: argument -f/--format: invalid choice")
    assert not unsafe(err) and "usage:" not in err


def test_export_warnings_about_a_hostile_directory_are_escaped(tmp_path):
    run = run_named(tmp_path, f"evil{TITLE}\nline")
    (log,) = run.glob("events.out.tfevents.*")
    data = bytearray(log.read_bytes())
    data[len(data) // 2] ^= 0xFF  # damage: a warning naming the file's path
    log.write_bytes(bytes(data))
    done = rltop("export", str(tmp_path))
    err, out = done.stderr.decode(), done.stdout.decode()
    assert done.returncode == 0 and "corrupt data" in err
    assert not unsafe(err) and not unsafe(out)
    assert err.count("\n") == 1 and "evil\\x1b]0;pwned\\x07\\nline" in err


def test_tail_notes_about_a_hostile_run_are_escaped(tmp_path):
    tail = subprocess.Popen(
        [sys.executable, "-m", "rltop", "tail", str(tmp_path), "--poll", "0.05"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=STRICT, text=True, errors="strict",
    )  # fmt: skip
    try:
        err, out = Lines(tail.stderr), Lines(tail.stdout)
        err.wait(lambda lines: any("waiting" in line for line in lines), "the waiting notice")
        run_named(tmp_path, f"new{TITLE}\u202e")
        err.wait(lambda lines: any("new run" in line for line in lines), "the new-run notice")
        out.wait(lambda lines: len(lines) > 100, "the points")
    finally:
        tail.send_signal(signal.SIGINT)
        tail.wait(timeout=10)
    assert tail.returncode == 0
    assert not any(unsafe(line) for line in err.lines + out.lines)
    assert any("new\\x1b]0;pwned\\x07\\u202e" in line for line in err.lines)


# -- CSV and JSON Lines ---------------------------------------------------------------------------


def on_a_terminal(*args: str) -> str:
    """Run rltop with stdout on a pseudo-terminal; return what the terminal received."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "rltop", *args], cwd=ROOT, stdout=slave, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=30)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def hostile_tree(tmp_path) -> Path:
    run_named(tmp_path, f"run{TITLE}\u202e", "ppo_unstable")
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [["export"], ["export", "--format", "jsonl"], ["snapshot", "-f", "csv"]],
    ids=["export-csv", "export-jsonl", "snapshot-csv"],
)
def test_csv_and_jsonl_to_a_terminal_are_escaped(hostile_tree, args):
    shown = on_a_terminal(args[0], str(hostile_tree), *args[1:]).replace("\\\\", "\\")  # JSON's \\
    assert "run\\x1b]0;pwned\\x07\\u202e" in shown and "\x1b]0;" not in shown and "\u202e" not in shown
    assert "\x07" not in shown


@pytest.mark.parametrize(
    "args",
    [["export"], ["export", "--format", "jsonl"], ["snapshot", "-f", "csv"]],
    ids=["export-csv", "export-jsonl", "snapshot-csv"],
)
def test_csv_and_jsonl_to_a_pipe_are_escaped_unless_raw(hostile_tree, args):
    escaped = rltop(args[0], str(hostile_tree), *args[1:])
    assert escaped.returncode in (0, 1)
    text = escaped.stdout.decode()
    assert not unsafe(text) and "run\\x1b]0;pwned\\x07\\u202e" in text.replace("\\\\", "\\")
    exact = rltop(args[0], str(hostile_tree), *args[1:], "--raw")
    assert exact.returncode in (0, 1)
    raw = exact.stdout.decode()
    if "jsonl" in args:
        assert json.loads(raw.splitlines()[0])["run"] == f"run{TITLE}\u202e"
    else:
        assert f"run{TITLE}\u202e" in raw


# -- names that are not UTF-8 ---------------------------------------------------------------------


@pytest.fixture
def non_utf8_tree(tmp_path) -> Path:
    run_named(tmp_path, b"run\xff\xfe-\xe9t\xe9")
    return tmp_path


@pytest.mark.parametrize("fmt", FORMATS)
def test_snapshot_to_a_file_in_every_format(non_utf8_tree, tmp_path, fmt):
    target = tmp_path / f"out.{fmt}"
    done = rltop("snapshot", str(non_utf8_tree), "-f", fmt, "-o", str(target))
    assert done.returncode in (0, 1), done.stderr
    text = target.read_bytes().decode("utf-8")  # strict: no surrogate made it into the file
    assert "run\\xff\\xfe-\\xe9t\\xe9" in text.replace("\\\\", "\\")
    if fmt == "json":
        document = json.loads(text)
        strings = json.dumps(document, ensure_ascii=False)
        assert not [c for c in strings if 0xD800 <= ord(c) <= 0xDFFF]
        assert document["runs"][0]["name"] == "run\\xff\\xfe-\\xe9t\\xe9"


@pytest.mark.parametrize("fmt", FORMATS)
def test_snapshot_to_a_strict_stdout_in_every_format(non_utf8_tree, fmt):
    done = rltop("snapshot", str(non_utf8_tree), "-f", fmt)
    assert done.returncode in (0, 1), done.stderr
    done.stdout.decode("utf-8")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_to_a_strict_stdout(non_utf8_tree, fmt):
    done = rltop("export", str(non_utf8_tree), "--format", fmt)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode("utf-8").splitlines()
    assert len(lines) > 100 and "run\\xff\\xfe-\\xe9t\\xe9" in lines[1].replace("\\\\", "\\")


def test_tail_csv_to_a_strict_stdout(non_utf8_tree):
    tail = subprocess.Popen(
        [sys.executable, "-m", "rltop", "tail", str(non_utf8_tree), "--format", "csv"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=STRICT, text=True,
    )  # fmt: skip
    try:
        out = Lines(tail.stdout)
        out.wait(lambda lines: len(lines) > 100, "the points")
    finally:
        tail.send_signal(signal.SIGINT)
        tail.wait(timeout=10)
    assert tail.returncode == 0
    assert out.lines[1].startswith("run\\xff\\xfe-\\xe9t\\xe9,")
