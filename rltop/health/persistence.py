"""Persistence (m of n points) and hysteresis for one rule on one tag, fed incrementally.

A rule turns each point into four flags: beyond the warn threshold, back within the warn clear
band, and the same for critical. The `EpisodeTracker` then decides the level point by point:

* a level is **entered** when m of the last n points are beyond its threshold (and, with
  ``single_point_warn``, warn is entered by one point beyond the *critical* threshold); critical is
  entered at once by one point beyond a rule's *extreme* level (`Flags.extreme`);
* it is **left** only after ``clear_points`` points in a row are back within ``clear_fraction`` of
  the threshold, so a single noisy point never flips the colour either way.

The recurrence "active = entered or (active before and not cleared)" is solved in closed form with
running maxima, so a bulk load of 100k points costs a few numpy passes, and a one-point update the
same code path. Episodes (stretches at warn or worse) are summarised for the findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rltop.health.findings import Level

# Up to this many new points are judged point by point (live batches); more go through numpy.
_SMALL = 24


@dataclass
class Flags:
    """Per-point verdicts of a rule for the points being judged (all arrays of equal length)."""

    warn_on: np.ndarray
    warn_ok: np.ndarray
    crit_on: np.ndarray
    crit_ok: np.ndarray
    severity: np.ndarray  # larger = worse; picks the point a finding reports
    stat: np.ndarray  # the judged statistic (the value, a ratio to a baseline, a rolling median...)
    ref: np.ndarray  # the reference it was compared with (baseline, trailing median) or NaN
    # Points so far beyond the critical threshold that no healthy run shows them: critical at once,
    # without persistence (None: the rule has no extreme level). Each is also a ``crit_on`` point.
    extreme: np.ndarray | None = None

    @classmethod
    def quiet(cls, count: int) -> Flags:
        """Nothing beyond any threshold (e.g. before a rule has enough history)."""
        no, yes, nan = np.zeros(count, bool), np.ones(count, bool), np.full(count, np.nan)
        return cls(no, yes, no.copy(), yes.copy(), np.zeros(count), nan, nan.copy())


@dataclass
class Point:
    """One judged point, as a finding reports it."""

    step: int
    value: float
    stat: float
    ref: float
    severity: float


@dataclass
class Episode:
    """A stretch of consecutive points at warn or worse."""

    first_step: int  # first point beyond a threshold in the window that raised the alarm
    raised_step: int  # the point where m of n was reached
    level: Level = Level.WARN  # worst level reached
    worst: Point | None = None  # the most severe point at the worst level
    critical_step: int | None = None  # where it first became critical
    last: Point | None = None  # newest point of the episode
    end_step: int | None = None  # last point of the episode once it is over
    points: int = 0


@dataclass
class EpisodeTracker:
    """Level state of one (rule, tag): fed chunk by chunk with `feed`."""

    warn_persistence: tuple[int, int]
    crit_persistence: tuple[int, int]
    warn_clear: int
    crit_clear: int
    single_point_warn: bool = True
    warn_active: bool = False
    crit_active: bool = False
    level: Level = Level.OK
    current: Episode | None = None
    past_worst: Episode | None = None
    past_count: int = 0
    critical_closed: int = 0  # episodes that reached critical and are over (for latching)
    last_closed: Episode | None = None
    # The most severe point of all episodes (what a finding headlines), and every closed episode
    # as (worst level, first step, last step): acknowledgements and evidence look at their steps.
    peak: Point | None = None
    closed: list[tuple[Level, int, int]] = field(default_factory=list)
    # The last few (step, warn_on, warn_ok, crit_on, crit_ok), so windows can straddle chunks.
    _tail: list[tuple[int, bool, bool, bool, bool]] = field(default_factory=list)

    @property
    def memory(self) -> int:
        """How many previous points a window may reach back to."""
        return max(*self.warn_persistence, *self.crit_persistence, self.warn_clear, self.crit_clear) - 1

    def feed(self, steps: np.ndarray, values: np.ndarray, flags: Flags) -> np.ndarray:
        """Judge new points (in order); return their levels (int8: 0 ok, 1 warn, 2 critical)."""
        count = len(steps)
        if count == 0:
            return np.zeros(0, np.int8)
        if count <= _SMALL:
            return self._feed_points(steps, values, flags)
        held = len(self._tail)
        tail_steps = np.array([row[0] for row in self._tail], dtype=np.int64)
        tail_flags = np.array([row[1:] for row in self._tail], dtype=bool).reshape(held, 4).T
        flag_rows = np.concatenate(
            (tail_flags, np.stack((flags.warn_on, flags.warn_ok, flags.crit_on, flags.crit_ok))), axis=1
        )
        ext_steps = np.concatenate((tail_steps, steps))
        # One cumulative sum for the four flag rows; counts over any window are differences of it.
        # It starts with `pad` zeros (the longest window), so every window's start is a plain slice.
        pad = self.memory + 1
        total = flag_rows.shape[1]
        # int32: half the memory traffic of int64 (the sums and the maxima below took 40 % of
        # a bulk judgement); a history of 2**31 points is far beyond any run.
        sums = np.zeros((4, pad + total), dtype=np.int32)
        np.cumsum(flag_rows, axis=1, out=sums[:, pad:])

        def count(row: int, window: int) -> np.ndarray:
            # points flagged among the ``window`` ending at each new point (fewer at the start)
            end = sums[row, pad + held : pad + total]
            return end - sums[row, pad + held - window : pad + total - window]

        enter_crit = count(2, self.crit_persistence[1]) >= self.crit_persistence[0]
        if flags.extreme is not None:
            enter_crit |= flags.extreme
        crit = self._active(enter_crit, count(3, self.crit_clear) >= self.crit_clear, self.crit_active)
        enter_warn = count(0, self.warn_persistence[1]) >= self.warn_persistence[0]
        if self.single_point_warn:
            enter_warn |= flags.crit_on
        warn = self._active(enter_warn, count(1, self.warn_clear) >= self.warn_clear, self.warn_active)
        levels = np.where(crit, 2, np.where(warn, 1, 0)).astype(np.int8)
        self._episodes(levels, steps, values, flags, ext_steps, flag_rows[0] | flag_rows[2], held)
        self.warn_active, self.crit_active = bool(warn[-1]), bool(crit[-1])
        keep = self.memory
        start = max(len(ext_steps) - keep, 0)
        rows = (ext_steps[start:].tolist(), *(flag_rows[i, start:].tolist() for i in range(4)))
        self._tail = list(zip(*rows)) if keep else []
        return levels

    def _feed_points(self, steps: np.ndarray, values: np.ndarray, flags: Flags) -> np.ndarray:
        """The same judgement point by point in plain Python: cheaper for the few points of a live batch."""
        (m_w, n_w), (m_c, n_c) = self.warn_persistence, self.crit_persistence
        k_w, k_c, memory = self.warn_clear, self.crit_clear, self.memory
        tail = self._tail
        rows = zip(
            steps.tolist(),
            flags.warn_on.tolist(),
            flags.warn_ok.tolist(),
            flags.crit_on.tolist(),
            flags.crit_ok.tolist(),
        )
        levels = np.empty(len(steps), np.int8)
        extreme = flags.extreme.tolist() if flags.extreme is not None else [False] * len(steps)
        for index, row in enumerate(rows):
            tail.append(row)
            crit_enter = sum(r[3] for r in tail[-n_c:]) >= m_c or extreme[index]
            crit_clear = len(tail) >= k_c and all(r[4] for r in tail[-k_c:]) and not crit_enter
            self.crit_active = crit_enter or (self.crit_active and not crit_clear)
            warn_enter = sum(r[1] for r in tail[-n_w:]) >= m_w or (self.single_point_warn and row[3])
            warn_clear = len(tail) >= k_w and all(r[2] for r in tail[-k_w:]) and not warn_enter
            self.warn_active = warn_enter or (self.warn_active and not warn_clear)
            level = Level.CRITICAL if self.crit_active else Level.WARN if self.warn_active else Level.OK
            levels[index] = level
            self._point(level, index, steps, values, flags)
            if len(tail) > memory:
                del tail[: len(tail) - memory]
        return levels

    def _point(self, level: Level, index: int, steps: np.ndarray, values: np.ndarray, flags: Flags) -> None:
        """Episode bookkeeping for one point (the scalar twin of `_episodes`)."""
        self.level = level
        if level == Level.OK:
            self._close(None)
            return
        step = int(steps[index])
        point = Point(
            step,
            float(values[index]),
            float(flags.stat[index]),
            float(flags.ref[index]),
            float(flags.severity[index]),
        )
        if self.current is None:
            n = max(self.warn_persistence[1], self.crit_persistence[1])
            window = self._tail[-n:]
            first = next((row[0] for row in window if row[1] or row[3]), step)
            self.current = Episode(first, step)
        episode = self.current
        if episode.worst is None or (level, point.severity) > (episode.level, episode.worst.severity):
            episode.worst = point
        self._note_peak(point)
        if level == Level.CRITICAL and episode.critical_step is None:
            episode.critical_step = step
        episode.level = max(episode.level, level)
        episode.points += 1
        episode.last = point

    @staticmethod
    def _active(enter: np.ndarray, all_good: np.ndarray, was_active: bool) -> np.ndarray:
        """Whether a level is active at each new point: entered, or active before and not cleared.

        The recurrence is solved with running maxima: active at i when the last entry is more recent
        than the last clearing (or it was active before the chunk and nothing cleared it since).
        """
        cleared = all_good & ~enter
        index = np.arange(len(enter), dtype=np.int32)
        last_enter = np.maximum.accumulate(np.where(enter, index, -1))
        last_clear = np.maximum.accumulate(np.where(cleared, index, -1))
        return (last_enter > last_clear) | (was_active & (last_clear < 0))

    def _episodes(
        self,
        levels: np.ndarray,
        steps: np.ndarray,
        values: np.ndarray,
        flags: Flags,
        ext_steps: np.ndarray,
        beyond: np.ndarray,
        held: int,
    ) -> None:
        """Open, extend and close episodes along the new points' levels.

        One Python step per stretch of equal level: a noisy history has thousands of them, so
        each stretch's worst point is found for all stretches at once.
        """
        bounds = np.flatnonzero(np.diff(np.concatenate(([int(self.level)], levels))))
        edges = np.concatenate(([0], bounds[bounds > 0], [len(levels)]))
        begins, ends = edges[:-1], edges[1:]
        stretch_levels = levels[begins].tolist()
        firsts = self._first_steps(ext_steps, beyond, held + begins).tolist()
        worst = _first_maxima(flags.severity, begins, ends)
        columns = (values, flags.stat, flags.ref, flags.severity)
        worst_points = zip(
            steps[worst].tolist(),
            *(np.asarray(column[worst], dtype=np.float64).tolist() for column in columns),
        )
        begin_steps = steps[begins].tolist()
        before_steps = steps[np.maximum(begins - 1, 0)].tolist()
        stretches = zip(
            begins.tolist(), ends.tolist(), stretch_levels, worst_points, firsts, begin_steps, before_steps
        )
        for begin, end, code, fields, first, begin_step, before_step in stretches:
            if code == 0:
                self._close(before_step if begin > 0 else None)
                continue
            level = _LEVELS[code]
            if self.current is None:
                self.current = Episode(first, begin_step)
            episode = self.current
            point = Point(*fields)
            if episode.worst is None or (level, point.severity) > (episode.level, episode.worst.severity):
                episode.worst = point
            self._note_peak(point)
            if level == Level.CRITICAL and episode.critical_step is None:
                episode.critical_step = begin_step
            episode.level = max(episode.level, level)
            episode.points += end - begin
        self.level = Level(int(levels[-1]))
        if self.current is not None and self.level > Level.OK:
            last = len(levels) - 1
            self.current.last = Point(
                int(steps[last]),
                float(values[last]),
                float(flags.stat[last]),
                float(flags.ref[last]),
                float(flags.severity[last]),
            )

    def _note_peak(self, point: Point) -> None:
        if self.peak is None or point.severity > self.peak.severity:
            self.peak = point

    def _first_steps(self, ext_steps: np.ndarray, beyond: np.ndarray, at: np.ndarray) -> np.ndarray:
        """For each index of ``at``: the step of the earliest point beyond a threshold within the
        window that would raise the alarm there (its own step if none), for all stretches at once."""
        n = max(self.warn_persistence[1], self.crit_persistence[1])
        hits = np.flatnonzero(beyond)
        lo = np.maximum(at - n + 1, 0)
        found = np.searchsorted(hits, lo)
        first = hits[np.minimum(found, len(hits) - 1)] if len(hits) else at
        return ext_steps[np.where((found < len(hits)) & (first <= at), first, at)]

    def _close(self, end_step: int | None) -> None:
        """The current episode is over (the level cleared)."""
        episode = self.current
        if episode is None:
            return
        episode.end_step = end_step if end_step is not None else (episode.last or episode.worst).step
        self.closed.append((episode.level, episode.first_step, episode.end_step))
        self.past_count += 1
        if episode.level == Level.CRITICAL:
            self.critical_closed += 1
        worst = self.past_worst
        if worst is None or (episode.level, episode.worst.severity) >= (worst.level, worst.worst.severity):
            self.past_worst = episode
        self.last_closed = episode
        self.current = None


_LEVELS = (Level.OK, Level.WARN, Level.CRITICAL)  # by the int8 codes of `EpisodeTracker.feed`


def _first_maxima(severity: np.ndarray, begins: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each stretch ``[begin, end)``: the index of its first largest severity, as
    ``begin + np.argmax(severity[begin:end])`` gives it (NaN counts as the largest, as there)."""
    if not len(begins):
        return begins
    if np.isnan(severity).any():  # argmax's NaN rule, stretch by stretch (severities are finite)
        return np.array(
            [b + int(np.argmax(severity[b:e])) for b, e in zip(begins.tolist(), ends.tolist())], dtype=np.intp
        )
    peaks = np.maximum.reduceat(severity, begins)
    at_peak = np.flatnonzero(severity == np.repeat(peaks, ends - begins))
    return at_peak[np.searchsorted(at_peak, begins)]
