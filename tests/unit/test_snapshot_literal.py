"""Names with Rich markup, terminal escapes, CSV and Markdown syntax come out literally in every format.

The log is written by tensorboardX's real event writer. Its ``add_scalar`` replaces unusual tag
characters, but other writers (and hand-made files) do not, so the summaries are built with the
raw tag and handed to the same writer.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import numpy as np
import pytest
from helpers.snapshot import markdown_html, markdown_tables, run_cli, validate

from rltop.report.json_report import load_schema
from rltop.view.text.safe import markdown_code, markdown_text, visible

RUN = "[red]run\x1b[2J"
TAGS = (
    "train/[bold red]boom[/]",
    "train/evil\x1b]0;pwned\x07",
    'train/a,b"c',
    "train/pipe|`tick`<b>x</b>",
    "train/rtl\u202eabc",
    "train/line\nbreak",
    "train/**bold**_em_ ~~s~~",
    "train/val/ratio",
)
NEWLINE_TAG = "train/line\nbreak"
SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def nasty_log(tmp_path_factory) -> Path:
    from tensorboardX import SummaryWriter
    from tensorboardX.proto.summary_pb2 import Summary

    root = tmp_path_factory.mktemp("nasty")
    writer = SummaryWriter(logdir=str(root / RUN))
    events = writer._get_file_writer()
    for step in range(1, 31):
        for index, tag in enumerate(TAGS):
            value = float(np.sin(step / 5.0) + index)
            if tag.endswith("boom[/]") and step in (10, 30):
                value = float("nan")  # non-finite values must not crash any format
            events.add_summary(Summary(value=[Summary.Value(tag=tag, simple_value=value)]), step)
    writer.close()
    return root


def render(capsys, tmp_path: Path, log: Path, fmt: str, *extra: str) -> str:
    out = tmp_path / f"out.{fmt}"
    code, stdout, stderr = run_cli(
        capsys, "snapshot", str(log), "-f", fmt, "-o", str(out), "--width", "200", *extra
    )
    assert code in (0, 1) and stdout == "", stderr
    return out.read_text(encoding="utf-8")


def shown(tag: str) -> str:
    """The name text views show: no train/ prefix, control characters as escapes."""
    return visible(tag.removeprefix("train/"))


def test_text_shows_names_literally_and_never_emits_their_escapes(capsys, tmp_path, nasty_log) -> None:
    plain = render(capsys, tmp_path, nasty_log, "text")
    assert "\x1b" not in plain and "\x07" not in plain and "\u202e" not in plain
    assert visible(RUN) in plain  # "[red]run\x1b[2J" as 15 visible characters
    lines = plain.splitlines()
    for tag in TAGS:
        assert any(line.startswith(shown(tag)) for line in lines), tag
    assert any(line.startswith("[bold red]boom[/] ×2") for line in lines)  # two NaN points counted
    coloured = render(capsys, tmp_path, nasty_log, "text", "--color", "always")
    assert SGR.search(coloured)
    assert "\x1b" not in SGR.sub("", coloured)  # the only escapes are rltop's own colours
    assert "\x1b]0;" not in coloured and "\x1b[2J" not in coloured


def test_markdown_keeps_names_literal_and_tables_intact(capsys, tmp_path, nasty_log) -> None:
    text = render(capsys, tmp_path, nasty_log, "markdown")
    rows = [row for table in markdown_tables(text) if table[0][0] == "metric" for row in table[1:]]
    assert {row[0].removesuffix(" (2 NaN/Inf)") for row in rows} == {shown(tag) for tag in TAGS}
    assert all(len(row) == 7 for row in rows)  # a | in a name never adds a column
    assert "<RAW-HTML>" not in str(markdown_tables(text))
    html = markdown_html(text)
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    groups = len(re.findall(r"^\*\*[^*]+\*\*$", text, flags=re.MULTILINE))  # our own group headings
    assert html.count("<strong>") == groups and "<em>" not in html and "<del>" not in html
    assert "\x1b" not in text


def test_markdown_escaping_helpers() -> None:
    assert markdown_code("a`b") == "``a`b``" and markdown_code("`x`") == "`` `x` ``"
    assert markdown_code("a|b") == "`a\\|b`" and markdown_code("a|b", in_table=False) == "`a|b`"
    assert markdown_text("*x* [y](z) <b> a|b ~s~ $m$ &amp;") == (
        "\\*x\\* \\[y\\](z) \\<b\\> a\\|b \\~s\\~ \\$m\\$ \\&amp;"
    )
    assert visible("a\x1b]0;t\x07\tb\u202e\x9b") == "a\\x1b]0;t\\x07\\tb\\u202e\\x9b"


def test_json_and_csv_keep_the_exact_names(capsys, tmp_path, nasty_log) -> None:
    document = json.loads(render(capsys, tmp_path, nasty_log, "json"))
    assert validate(document, load_schema()) == []
    (run,) = document["runs"]
    assert run["name"] == RUN and set(run["tags"]) == set(TAGS)
    boom = run["tags"]["train/[bold red]boom[/]"]
    assert boom["non_finite"] == 2 and boom["last"] == "nan" and boom["min"] is not None
    raw = render(capsys, tmp_path, nasty_log, "json")
    assert "\x1b" not in raw and "\u202e" not in raw  # escaped as \u001b, \u202e in the document
    # CSV keeps the exact names with --raw only (issue 11: by default they are escaped, as in export).
    exact = render(capsys, tmp_path, nasty_log, "csv", "--raw")
    rows = list(csv.DictReader(io.StringIO(exact, newline="")))
    # (The name with a line break is checked on its own below.)
    assert {row["tag"] for row in rows} >= set(TAGS) - {NEWLINE_TAG}
    assert {row["run"] for row in rows if row["tag"] in TAGS} == {RUN}
    assert next(r for r in rows if r["tag"] == "train/[bold red]boom[/]")["last"] == "nan"


def test_csv_escapes_names_by_default(capsys, tmp_path, nasty_log) -> None:
    text = render(capsys, tmp_path, nasty_log, "csv")
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert {row["tag"] for row in rows} == {visible(tag) for tag in TAGS}
    assert {row["run"] for row in rows} == {visible(RUN)}
    assert len(text.splitlines()) == len(TAGS) + 1  # "\n" in a name is escaped: one line per row


def test_csv_quotes_a_name_with_a_line_break(capsys, tmp_path, nasty_log) -> None:
    rows = list(csv.DictReader(io.StringIO(render(capsys, tmp_path, nasty_log, "csv", "--raw"), newline="")))
    assert {row["tag"] for row in rows} == set(TAGS) and len(rows) == len(TAGS)


def test_svg_and_html_escape_names(capsys, tmp_path, nasty_log) -> None:
    svg = render(capsys, tmp_path, nasty_log, "svg")
    text = "".join(ET.fromstring(svg).itertext()).replace("\xa0", " ")
    for tag in TAGS:
        assert shown(tag) in text, tag
    html = render(capsys, tmp_path, nasty_log, "html")
    assert "<b>x</b>" not in html and "\x1b" not in html and "\x07" not in html
    body = unescape(re.sub(r"<[^>]+>", "", html))
    for tag in TAGS:
        assert shown(tag) in body, tag
