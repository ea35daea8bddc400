"""The snapshot as JSON, in the stable schema documented in ``rltop/report/schema.json``.

Schema version `SCHEMA_VERSION`: fields are only ever added within a version; renaming, removing or
changing the meaning of one bumps it. Numbers are the shortest decimal that reads back to the stored
value (float32 precision for values logged as float32, as in ``rltop export``); JSON has no NaN, so
non-finite numbers are the strings ``"nan"``, ``"inf"`` and ``"-inf"``, and a statistic without any
finite value is ``null``. Names and messages are the exact strings (JSON escapes control characters).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rltop import __version__
from rltop.health.findings import Finding
from rltop.model.values import json_number
from rltop.report.compare_report import compare_json
from rltop.report.group_report import groups_json
from rltop.report.snapshot import FAIL_ON, Snapshot
from rltop.view.metric_view import MetricView
from rltop.view.run_view import RunView
from rltop.view.text.humanize import iso_utc

SCHEMA_NAME = "rltop-snapshot"
SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("schema.json")


def snapshot_dict(snapshot: Snapshot, fail_on: str = "critical") -> dict[str, Any]:
    """The whole snapshot as plain JSON-ready data."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"unknown --fail-on level {fail_on!r}")
    return {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "generator": f"rltop {__version__}",
        "generated_at": iso_utc(snapshot.generated_at),
        "generated_at_unix": snapshot.generated_at,
        "paths": list(snapshot.roots),
        "level": snapshot.level.label,
        "fail_on": fail_on,
        "failed": snapshot.fails(fail_on),
        "problems": list(snapshot.problems),
        "runs": [run_dict(run) for run in snapshot.runs],
        "groups": groups_json(snapshot),
        **compare_json(snapshot.comparison),
    }


def run_dict(run: RunView) -> dict[str, Any]:
    """One run: facts, config summary, the engine's findings and the per-tag statistics."""
    return {
        "name": run.name,
        "display_name": run.display_name,
        "directory": run.directory,
        "finished": run.finished,
        "exit_code": run.exit_code,
        "kind": run.kind,
        "level": run.level.label,
        "empty": run.empty,
        "last_step": run.last_step,
        "points": run.points,
        "last_point_time": iso_utc(run.last_point_wall_time),
        "last_point_unix": run.last_point_wall_time,
        "staleness_seconds": run.staleness,
        "config": _config(run.config),
        "resumed_at": run.resumed_at,
        "sessions": [
            {"name": label, "directory": folder, "first_step": first, "owns_points": owns}
            for label, folder, first, owns in run.session_table
        ],
        "source": {"kind": run.source, "note": run.source_note},
        "findings": [finding_dict(f, run.single_precision(f.tag)) for f in run.findings],
        "tags": {row.tag: tag_dict(row) for row in run.rows},
    }


def _config(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """The config summary with non-finite floats as strings (Python's json parser accepts NaN)."""
    if config is None:
        return None
    return {key: json_number(v) if isinstance(v, float) else v for key, v in config.items()}


def finding_dict(finding: Finding, single_precision: bool = False) -> dict[str, Any]:
    """Every field of a `Finding`, level as its label."""
    return {
        "level": finding.level.label,
        "rule": finding.rule,
        "title": finding.title,
        "run": finding.run,
        "tag": finding.tag,
        "step": finding.step,
        "value": json_number(finding.value, single_precision),
        "first_step": finding.first_step,
        "last_step": finding.last_step,
        "active": finding.active,
        "message": finding.message,
        "advice": finding.advice,
        "episodes": finding.episodes,
        "spans": [list(span) for span in finding.spans],
        "stage": finding.stage.name.lower(),
        "acknowledged": finding.acknowledged,
        "evidence": list(finding.evidence),
        "also": list(finding.also),
    }


def tag_dict(row: MetricView) -> dict[str, Any]:
    """The statistics of one tag."""
    stats = row.stats
    single = row.single_precision
    return {
        "group": row.group,
        "count": stats.count,
        "first_step": stats.first_step,
        "last_step": stats.last_step,
        "last": json_number(stats.last, single),
        "min": json_number(stats.min, single),
        "max": json_number(stats.max, single),
        # At the precision of the logged values: more digits of a float32 mean would be noise.
        "mean_last_10pct": json_number(stats.mean_last_10pct, single),
        "trend": stats.trend,
        "non_finite": stats.non_finite,
        "level": row.level.label,
    }


def render_json(snapshot: Snapshot, fail_on: str = "critical") -> str:
    """The snapshot as an indented JSON document (ends with a newline)."""
    # ASCII only: a C1 control or a bidi override in a tag name stays a \u escape, harmless when
    # the document is printed to a terminal; every JSON reader decodes it to the exact name.
    return json.dumps(snapshot_dict(snapshot, fail_on), indent=2, ensure_ascii=True, allow_nan=False) + "\n"


def load_schema() -> dict[str, Any]:
    """The JSON Schema of `render_json`'s output."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
