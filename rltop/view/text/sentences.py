"""The wording every front end uses for the same facts: calm runs, empty runs, freshness, the fleet.

One sentence in one place: the dashboard's alert strip and header, the runs overview and every
snapshot format say "finished at step 200" or "Empty run" in the very same words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rltop.health.findings import Level
from rltop.view.text.humanize import age_text, plural
from rltop.view.text.marks import EMPTY_ICON, LEVEL_ICONS, STATE_SHORT
from rltop.view.text.safe import visible

if TYPE_CHECKING:  # the header imports these sentences before numpy is loaded
    from rltop.view.run_view import RunView

STALE_AFTER = 60.0
"""Seconds without a new point after which a live run reads "no new point for …"."""
CRASH_HINT = "A trainer that crashed before its first logging step looks like this."


def calm_sentence(metrics: int) -> str:
    """What a run without any finding says."""
    if metrics > 1:
        return f"No findings: all {metrics} metrics are within their rules."
    return "No findings: the metric is within its rules." if metrics == 1 else "No findings."


def empty_sentence(texts: str) -> str:
    """What a run without any scalar says; ``texts``: its text-summary tags, formatted by the caller."""
    sentence = f"Empty run: no scalar logged yet (text summaries: {texts or 'none'})."
    return f"{sentence} {CRASH_HINT}" if texts else sentence


def critical_sentence(run: RunView) -> str:
    """``✖ grpo_b is CRITICAL: non-finite values`` (safe to print): a run that just turned critical."""
    lead = next((alert for alert in run.alerts if alert.live), None)
    what = f": {visible(lead.finding.title or lead.metric)}" if lead is not None else ""
    return f"{LEVEL_ICONS[Level.CRITICAL]} {run.label} is CRITICAL{what}"


def step_text(run: RunView) -> str:
    """``step 150``, or ``finished at step 200`` once the trainer finished, ``exited with code 1 at step
    40`` when its process failed ("" without points); a run resumed from a checkpoint adds
    ``, resumed at step 81``."""
    if run.last_step is None:
        return ""
    if run.exit_code not in (None, 0):
        return f"exited with code {run.exit_code} at step {run.last_step}" + resume_text(run)
    text = f"finished at step {run.last_step}" if run.finished else f"step {run.last_step}"
    return text + resume_text(run)


def resume_text(run: RunView) -> str:
    """``, resumed at step 81`` (``… (3 sessions)``) for a run made of several training sessions."""
    if run.resumed_at is None:
        return ""
    count = len(run.sessions)
    return f", resumed at step {run.resumed_at}" + (f" ({count} sessions)" if count > 2 else "")


def freshness(run: RunView, now: float) -> tuple[str, bool]:
    """(``updated 4 s ago`` / ``no new point for 12 min`` / ``2 h ago`` for a finished run, stale?).

    A finished run is never stale: it is done, not stuck; nor is one whose process exited with an
    error (its critical finding says so). "" for a run without any time.
    """
    age = run.age(now)
    if age is None:
        return "", False
    if run.finished or run.exit_code is not None:  # done (or dead: its finding says so), not stuck
        return f"{age_text(age)} ago", False
    if age >= STALE_AFTER:
        return f"no new point for {age_text(age)}", True
    return f"updated {age_text(age)} ago", False


def fleet_parts(counts: Sequence[tuple[str, int]]) -> list[tuple[str, str]]:
    """(state, text) parts of ``3 runs: 1 CRIT 1 WARN`` (ok runs go uncounted: "all ok" when all are)."""
    total = sum(count for _, count in counts)
    parts = [("", f"{plural(total, 'run')}:")]
    shown = [(state, f"{count} {STATE_SHORT[state]}") for state, count in counts if state != "ok"]
    return parts + (shown or [("ok", "all ok")])


def compact_fleet_parts(counts: Sequence[tuple[str, int]]) -> list[tuple[str, str]]:
    """The same in few cells, for narrow panes: ``3 runs ✖1 ▲1`` (``2 runs ●`` when all are ok)."""
    total = sum(count for _, count in counts)
    marks = {"critical": LEVEL_ICONS[Level.CRITICAL], "warn": LEVEL_ICONS[Level.WARN], "empty": EMPTY_ICON}
    shown = [(state, f"{marks[state]}{count}") for state, count in counts if state != "ok"]
    return [("", plural(total, "run"))] + (shown or [("ok", LEVEL_ICONS[Level.OK])])


def fleet_sentence(counts: Sequence[tuple[str, int]]) -> str:
    """``3 runs: 1 CRIT 1 WARN``, ``2 runs: all ok``."""
    return " ".join(text for _, text in fleet_parts(counts))
