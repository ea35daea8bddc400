"""Columnar storage of one scalar tag: steps, wall times and values as numpy arrays.

A `Series` grows geometrically (by an eighth), so appending a batch of k points costs amortised
O(k) whatever the length of the history. NaN and ±Inf are stored as they are: they matter to the
health rules.

Narrow columns (a fast path for memory: the dashboard's memory per point held, see
``docs/internals/performance.md``). Event files log float32 values and steps that fit 32 bits, so a
series keeps its steps as int32 while every step fits and its values as float32 while every value
round-trips through float32 bit for bit (NaN payloads and signed zeros included): 16 bytes a point
instead of 24, every point exact. A point that does not fit widens that column for good. Wall times
stay float64. Columns narrow when a series copies them anyway (it grows): a one-shot load's series
keep the columns they adopted (`append`'s ``adopt``), so a load costs no extra pass.

Readers never see the narrow columns: `steps`, `values` and `points` hand out int64 and float64
(widened copies when narrow), so every consumer computes as before; `values_at` and `steps_at`
widen only what they index, for readers whose cost must not grow with the history. A reader that
reads whole columns at every batch (the health engine's rules) asks for wide columns instead
(`keep_wide`): the tags rules judge cost 24 bytes a point, every other tag 16.
``RLTOP_WIDE_SERIES=1`` in the environment (read at import; tests set `NARROW`) keeps every column
wide, the reference: ``tests/e2e/test_series_narrow.py`` holds both ways equal over the fixtures.

Out-of-order steps: when a point arrives whose step is *smaller* than the last step of its tag
(training resumed from an earlier checkpoint), every point of that tag with a step greater than or
equal to the new step is discarded first, so the series shows the resumed trajectory, not both.
This is the rule of TensorBoard's ``EventAccumulator._CheckForOutOfOrderStepAndMaybePurge`` (per
tag, ``>=``), which TensorBoard applies to old-format files; for ``brain.Event:2`` files (torch,
tensorboardX, TF2) the Python EventAccumulator, and so tbparse, purge only on a SessionLog START and
keep both trajectories, and the Rust data server preempts the same way as rltop. rltop applies the
rule to every file because a chart of two interleaved trajectories is unreadable and its health
rules would judge a mix. Equal steps are kept side by side (transformers logs ``train/epoch``
twice at the last step), so a step repeated without going backwards is not a restart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

NARROW: bool = os.environ.get("RLTOP_WIDE_SERIES", "") in ("", "0")
"""Whether a series may keep int32 steps and float32 values (see the module docstring)."""
_GROWTH_SHARE = 8
"""A full live series grows by 1/8 of its capacity: at most 12.5 % spare (1.5x let the dashboard's
memory grow by up to 36 B a point held), each point copied about eight times over its life, at
memcpy speed (a 60-tag dashboard at one step a second copies about 8 kB a second)."""
_MIN_GROWTH = 64
"""Points a live series grows by at least (small series would otherwise grow every few points)."""
_INT32 = np.iinfo(np.int32)
_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class Points:
    """Some points of one tag: three equal-length columns, the one points type of rltop.

    Every reader (`rltop.ingest.sources`) decodes into it, the change feed carries it and a
    `Series` hands out views of its history as it. ``single_precision``: every value came from a
    float32 field (event files store float32; exporters then print the shortest float32 repr).
    """

    steps: np.ndarray  # int64
    wall_times: np.ndarray  # float64, seconds since the epoch
    values: np.ndarray  # float64, NaN and +-Inf kept
    single_precision: bool = True

    def __len__(self) -> int:
        return int(self.steps.shape[0])


class Series:
    """All points of one tag of one run, in arrival order with restarts purged."""

    __slots__ = ("tag", "_steps", "_walls", "_values", "_size", "single_precision", "purged",
                 "_int32_steps", "_float32_values")  # fmt: skip

    def __init__(self, tag: str, wide: bool = False) -> None:
        """``wide``: never narrow the columns (`keep_wide`)."""
        self.tag = tag
        self._steps = np.empty(0, dtype=np.int64)
        self._walls = np.empty(0, dtype=np.float64)
        self._values = np.empty(0, dtype=np.float64)
        self._size = 0
        # True while every value came from a float32 field (simple_value, DT_FLOAT tensors):
        # exporters then print the shortest float32 repr, which is what the writer logged.
        self.single_precision = True
        # How many points restarts have discarded so far (shown to the user, never silent).
        self.purged = 0
        # Every step so far fits int32 / every value so far is exactly a float32 (None: not looked
        # at yet, the history of an adopted batch; a growth, which copies it anyway, looks).
        self._int32_steps: bool | None = not wide
        self._float32_values: bool | None = not wide

    def __len__(self) -> int:
        return self._size

    @property
    def steps(self) -> np.ndarray:
        """Steps of all points as int64 (a view, or a widened copy; do not modify)."""
        return self.steps_at(slice(None))

    @property
    def wall_times(self) -> np.ndarray:
        """Wall times (seconds since the epoch) of all points (a view)."""
        return self._walls[: self._size]

    @property
    def values(self) -> np.ndarray:
        """Values of all points as float64, NaN and ±Inf included (a view, or a widened copy)."""
        return self.values_at(slice(None))

    def steps_at(self, index: int | slice | np.ndarray) -> np.ndarray:
        """``steps[index]`` as int64, widening only what ``index`` selects (a view when wide)."""
        return self._steps[: self._size][index].astype(np.int64, copy=False)

    def values_at(self, index: int | slice | np.ndarray) -> np.ndarray:
        """``values[index]`` as float64, widening only what ``index`` selects (a view when wide)."""
        return self._values[: self._size][index].astype(np.float64, copy=False)

    def points(self, start: int = 0, stop: int | None = None) -> Points:
        """The points from index ``start`` to ``stop`` (default: the end) as one `Points`: views,
        or widened copies of the narrow columns."""
        end = self._size if stop is None else min(stop, self._size)
        part = slice(start, end)
        return Points(self.steps_at(part), self._walls[part], self.values_at(part), self.single_precision)

    @property
    def first_step(self) -> int | None:
        """The step of the first point, or None for an empty series (nothing widened)."""
        return int(self._steps[0]) if self._size else None

    @property
    def last_step(self) -> int | None:
        """The step of the last point, or None for an empty series."""
        return int(self._steps[self._size - 1]) if self._size else None

    def append(
        self,
        steps: np.ndarray,
        wall_times: np.ndarray,
        values: np.ndarray,
        single_precision: bool = True,
        adopt: bool = False,
    ) -> int:
        """Append points in arrival order and return the index of the first point that changed.

        The returned index lets consumers re-read only what is new (it is smaller than the old
        length when a restart purged points). ``adopt``: the caller gives the arrays away (nothing
        else writes them), so an empty series keeps them instead of copying them. It serves the
        6M-scalar load's peak memory (188 MB; 320 MB copying, and 0.12 CPU-s more); a load without
        it fills the same store (``tests/e2e/test_reader_tiers.py``).
        """
        steps = np.asarray(steps, dtype=np.int64)
        count = int(steps.shape[0])
        if count == 0:
            return self._size
        wall_times = np.asarray(wall_times, dtype=np.float64)
        values = np.asarray(values, dtype=np.float64)
        self.single_precision = self.single_precision and single_precision
        first_changed = self._size
        # Fast path: the batch does not go backwards, within itself or against the history.
        if (self._size == 0 or steps[0] >= self._steps[self._size - 1]) and (
            count == 1 or bool(np.all(steps[1:] >= steps[:-1]))
        ):
            if adopt and self._size == 0 and all(_plain(a) for a in (steps, wall_times, values)):
                self._steps, self._walls, self._values, self._size = steps, wall_times, values, count
                self._int32_steps = self._float32_values = None  # looked at when it first grows
                return first_changed
            self._extend(steps, wall_times, values)
            return first_changed
        for i in _restart_points(steps):
            chunk = slice(i[0], i[1])
            first_changed = min(first_changed, self.purge_from(int(steps[chunk.start])))
            self._extend(steps[chunk], wall_times[chunk], values[chunk])
        return first_changed

    def purge_from(self, step: int) -> int:
        """Drop every point whose step is >= ``step`` if ``step`` goes backwards; return new size."""
        if self._size and int(step) < int(self._steps[self._size - 1]):
            self.drop_from(step)
        return self._size

    def drop_from(self, step: int) -> int:
        """Drop every point whose step is >= ``step`` (counted in `purged`); return the new size.

        Steps never decrease within a series (appends that go backwards purge first), so the
        points kept are a prefix and no column needs compacting.
        """
        step = int(step)
        if self._size and int(self._steps[self._size - 1]) >= step:
            steps = self._steps[: self._size]
            if steps.dtype == np.int32 and step < _INT32.min:
                kept = 0  # (a bound outside int32 cannot be searched in int32 steps)
            else:
                kept = int(np.searchsorted(steps, np.asarray(step, dtype=steps.dtype), side="left"))
            self.purged += self._size - kept
            self._size = kept
        return self._size

    def _extend(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> None:
        count = int(steps.shape[0])
        needed = self._size + count
        if not NARROW:
            self._int32_steps = self._float32_values = False
        if self._int32_steps is not False and not _fits_int32(steps):
            self._int32_steps = False
        if self._float32_values is not False and not _exact_float32(values):
            self._float32_values = False
        too_narrow = (self._steps.dtype == np.int32 and not self._int32_steps) or (
            self._values.dtype == np.float32 and not self._float32_values
        )
        if needed > self._steps.shape[0] or too_narrow:
            self._grow(needed)
        end = needed
        # (Into a narrow column only what fits it exactly: the flags above say so.)
        self._steps[self._size : end] = steps
        self._walls[self._size : end] = walls
        self._values[self._size : end] = values
        self._size = end

    def _grow(self, needed: int) -> None:
        # An empty series adopts an exact-size first batch (a bulk load then costs no slack);
        # later growth is geometric, which keeps appends amortised O(1) per point. A column that
        # must widen is copied at its capacity.
        capacity = self._steps.shape[0]
        if needed > capacity:
            grown = capacity + max(capacity // _GROWTH_SHARE, _MIN_GROWTH)
            capacity = needed if self._size == 0 else max(needed, grown)
        kept = slice(0, self._size)
        if self._int32_steps is None:
            self._int32_steps = _fits_int32(self._steps[kept])
        if self._float32_values is None:
            self._float32_values = _exact_float32(self._values[kept])
        steps_type = np.int32 if NARROW and self._int32_steps else np.int64
        values_type = np.float32 if NARROW and self._float32_values else np.float64
        for name, dtype in (("_steps", steps_type), ("_walls", np.float64), ("_values", values_type)):
            old = getattr(self, name)
            new = np.empty(capacity, dtype=dtype)
            new[kept] = old[kept]
            setattr(self, name, new)

    def keep_wide(self) -> None:
        """Hold int64 steps and float64 values from now on, for a reader that reads the whole
        columns at every batch (the health engine's rules): widening narrow columns at each read
        would make its cost grow with the history (bench_health: 4.7 -> 5.9 ms a batch at 20k points)."""
        self._int32_steps = self._float32_values = False
        if self._steps.dtype != np.int64 or self._values.dtype != np.float64:
            self._grow(self._size)  # (the same capacity, wide)

    def compact(self) -> None:
        """Release spare capacity (after a bulk load, when no growth is expected soon)."""
        if self._steps.shape[0] != self._size:
            for name in ("_steps", "_walls", "_values"):
                setattr(self, name, getattr(self, name)[: self._size].copy())

    def nbytes(self) -> int:
        """Bytes held by the three columns, spare capacity included."""
        return int(self._steps.nbytes + self._walls.nbytes + self._values.nbytes)

    @property
    def narrow(self) -> tuple[bool, bool]:
        """(steps held as int32, values held as float32): what a point costs (for tests and benchmarks)."""
        return self._steps.dtype == np.int32, self._values.dtype == np.float32


def _fits_int32(steps: np.ndarray) -> bool:
    """Every step of these non-decreasing steps (what a series holds and extends by) fits an int32."""
    return not steps.size or (int(steps[0]) >= _INT32.min and int(steps[-1]) <= _INT32.max)


def _exact_float32(values: np.ndarray) -> bool:
    """Every value is a float32, bit for bit, once widened (NaN payloads and signs of zero too)."""
    if values.shape[0] == 1:  # a live append: numpy's scalars, without the errstate (4 us of 5)
        value = values[0]
        if abs(value) > _FLOAT32_MAX and value != np.inf and value != -np.inf:
            return False  # (float32 would overflow)
        return bool(np.float64(np.float32(value)).view(np.uint64) == value.view(np.uint64))
    with np.errstate(over="ignore", invalid="ignore"):
        again = values.astype(np.float32).astype(np.float64)
    return bool((again.view(np.uint64) == values.view(np.uint64)).all())


def _plain(array: np.ndarray) -> bool:
    """An array laid out plainly in writable memory. Given away (``adopt``), it may be a view of a
    larger array whose other parts went to other series: each writes only within its own part."""
    return array.flags.c_contiguous and array.flags.writeable


def _restart_points(steps: np.ndarray) -> list[tuple[int, int]]:
    """Split a batch into runs that never go backwards: [(start, end), ...]."""
    backwards = np.flatnonzero(steps[1:] < steps[:-1]) + 1
    bounds = [0, *backwards.tolist(), int(steps.shape[0])]
    return list(zip(bounds[:-1], bounds[1:]))
