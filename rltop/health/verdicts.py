"""One rule's verdict on one tag: its episodes folded into one finding, with the run in view.

A rule may raise a tag many times (three spikes, a KL that crosses and re-crosses its line). The
person watching wants one line per metric: the level that matters now (an active episode, or a
critical that is over and nobody acknowledged), its most extreme point over all episodes (what the
card's min/max shows too), and how many episodes there were. Rules whose critical level needs
evidence from the rest of the run (`Rule.adjust`) get their second look here, for the current
episode and for the closed ones (a capped critical neither latches nor marks as critical).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rltop.health.findings import Finding, Level
from rltop.health.persistence import EpisodeTracker, Point
from rltop.health.rules.base import Context, Rule, SlotState
from rltop.health.settings import RuleParams
from rltop.health.wording import num

MAX_ADJUSTED = 20  # closed episodes given a second look (the latest ones; older ones keep their level)


@dataclass(frozen=True)
class SlotVerdict:
    """What one rule says about one tag now."""

    level: Level  # the tag's level from this rule: the active episode's, or critical while latched
    mark: Level  # worst episode the user has not acknowledged (a card shows it until then)
    finding_level: Level  # the level its finding reports (history included)
    raw_level: Level  # before evidence capped it (picks the wording of the thresholds)
    active: bool
    peak: Point
    now: Point | None  # newest point of the active episode
    first_step: int
    last_step: int
    first_ever: int
    episodes: int
    note: str
    acknowledged: bool
    spans: tuple[tuple[int, int], ...]

    def finding(
        self, run: str, tag: str, rule: Rule, params: RuleParams, state: SlotState, context: Context
    ) -> Finding:
        """The finding of this verdict, its message naming the peak, the state and the evidence."""
        # A capped verdict reads against the level it kept; a note against the level it came from.
        wording = self.finding_level if self.finding_level > Level.OK else self.raw_level
        core = rule.explain(tag, self.peak, wording, params, state, context)
        if self.active:
            status = f"since step {self.first_step}"
            if self.now is not None and self.now.step != self.peak.step:
                status += f", now {num(self.now.value)} at step {self.now.step}"
        else:
            status = f"steps {self.first_step}-{self.last_step}, then back to normal"
        if self.episodes > 1:
            status += f" ({self.episodes} episodes since step {self.first_ever})"
        if self.note:
            status += f"; {self.note}"
        return Finding(
            level=self.finding_level,
            rule=rule.name,
            run=run,
            tag=tag,
            step=self.peak.step,
            value=self.peak.value,
            message=f"{core}; {status}.",
            advice=rule.note_advice
            if self.finding_level == Level.OK and rule.note_advice
            else rule.advice(params, context),
            first_step=self.first_step,
            last_step=self.last_step,
            active=self.active,
            title=rule.title,
            episodes=self.episodes,
            stage=rule.stage,
            acknowledged=self.acknowledged,
            spans=self.spans,
        )


def judge_slot(
    rule: Rule,
    tracker: EpisodeTracker,
    params: RuleParams,
    state: SlotState,
    context: Context,
    signals: Any,
    ack: int | None,
) -> SlotVerdict | None:
    """Fold the episodes of one (rule, tag) into its verdict; None when it never left ok.

    ``ack`` is the step up to which the user acknowledged this tag's episodes (None: never): an
    episode that began by then neither latches nor marks the card any more.
    """
    current = tracker.current if tracker.current is not None and tracker.current.last is not None else None
    closed = tracker.closed
    if (current is None and not closed) or tracker.peak is None:
        return None

    settled = state.settled

    def second_look(level: Level, first: int, last: int) -> tuple[Level, str]:
        if not rule.uses_evidence:
            return level, ""
        key = (int(level), first, last)
        if key in settled:
            return settled[key]
        adjustment = rule.adjust(level, first, last, signals, params, context)
        verdict = (level, "") if adjustment is None else (min(level, adjustment.cap), adjustment.note)
        if adjustment is not None and adjustment.final:
            settled[key] = verdict  # the evidence can no longer change: never looked at again
            if len(settled) > 2 * MAX_ADJUSTED:  # only the latest episodes are looked at again
                del settled[next(iter(settled))]
        return verdict

    looked_at = len(closed) - MAX_ADJUSTED
    past = []  # (effective level, first, last, note)
    for index, (level, first, last) in enumerate(closed):
        effective, note = second_look(level, first, last) if index >= looked_at else (level, "")
        past.append((effective, first, last, note))
    # An episode that began at or before the acknowledged step was seen (also if it went on after).
    unseen = [p for p in past if ack is None or p[1] > ack]
    latched = any(p[0] == Level.CRITICAL for p in unseen)
    mark = max((p[0] for p in unseen), default=Level.OK)
    raw = max((level for level, _, _ in closed), default=Level.OK)
    if current is not None:
        now_level, note = second_look(current.level, current.first_step, current.last.step)
        level = max(now_level, Level.CRITICAL if latched else Level.OK)
        first, last = current.first_step, current.last.step
        seen = ack is not None and current.first_step <= ack
        finding_level, raw = level, max(raw, current.level)
        mark = mark if seen else max(mark, now_level)
    else:
        level = Level.CRITICAL if latched else Level.OK
        # Over: the finding tells the episode it peaked in (its headline value is that peak).
        peak_step = tracker.peak.step
        effective, first, last, note = next((p for p in past if p[1] <= peak_step <= p[2]), past[-1])
        finding_level = max(p[0] for p in past)
    return SlotVerdict(
        level=level,
        mark=mark,
        finding_level=finding_level,
        raw_level=raw,
        active=current is not None,
        peak=tracker.peak,
        now=current.last if current is not None else None,
        first_step=first,
        last_step=last,
        first_ever=closed[0][1] if closed else first,
        episodes=len(closed) + (current is not None),
        note=note,
        acknowledged=current is None and not unseen,
        spans=tuple((p[1], p[2]) for p in past[-MAX_ADJUSTED:]) + (((first, last),) if current else ()),
    )
