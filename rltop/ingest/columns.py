"""Points of many tags, grouped by tag within each read, split by tag once for many reads.

The vectorised event decoder produces the scalars of a 4 MB window as columns (step, wall time,
value) sorted by tag, file order kept within each tag, with a count per tag. Splitting every
window into per-tag pieces costs a Python step per tag and window, and joining each tag's pieces
again one more per tag: with 3000 tags that bookkeeping was a third of a load. The change feed
instead joins the columns of consecutive reads of one file and splits them once
(`rltop.ingest.feed.ChangeBatch`). Sorting stays per window, where the columns fit in the cache:
joining only moves whole runs of a tag's points.

Goals served: the 3000-tag load at most 1.5x the cost per scalar of the 30-tag one (split per
read, it takes 0.11 CPU-s more, +31 %), and the 6M-scalar load's peak memory (188 MB; 314 MB split
per read). Reference-equality test: ``tests/e2e/test_reader_tiers.py`` (a load through the feed fills
the same store as the plain reader's points per tag) and ``tests/unit/test_columns.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rltop.model.series import Points


@dataclass
class TagColumns:
    """Points of many tags; the first ``counts[0]`` are tag 0's (in file order), and so on.

    ``names`` is the reader's list of the file's tags, which only ever grows: the columns of every
    read of one file share it, so their ids agree. ``counts`` may be shorter than ``names``.
    """

    names: list[str]
    counts: np.ndarray  # int64, points per tag id
    steps: np.ndarray  # int64
    walls: np.ndarray  # float64
    values: np.ndarray  # float64, read from float32 fields

    def __len__(self) -> int:
        return int(self.steps.shape[0])


def group_by_tag(
    names: list[str], tag_ids: np.ndarray, steps: np.ndarray, walls: np.ndarray, values: np.ndarray
) -> TagColumns:
    """The points (in file order, ``tag_ids`` indexing ``names``) grouped by tag."""
    small = tag_ids.astype(np.uint16) if len(names) < 1 << 16 else tag_ids
    order = np.argsort(small, kind="stable")  # a radix sort on small integers; file order kept
    counts = np.bincount(small, minlength=len(names)).astype(np.int64)
    return TagColumns(names, counts, steps[order], walls[order], values[order])


def split_by_tag(parts: list[TagColumns]) -> dict[str, Points]:
    """Each tag's points of all the parts (one after the other, sharing their ``names``), in file
    order, in the order of the tags' ids."""
    if len(parts) == 1:
        return _slices(parts[0])
    tags = max(part.counts.size for part in parts)
    counts = np.zeros((len(parts), tags), dtype=np.int64)
    for row, part in enumerate(parts):
        counts[row, : part.counts.size] = part.counts
    present = np.flatnonzero(counts.any(axis=0))
    total = int(counts.sum())
    if present.size * len(parts) * _POINTS_PER_BLOCK <= total:
        return _joined_per_tag(parts, counts, present)
    return _slices(_gathered(parts, counts))


# Below this many points per (tag, part) block, one gather per column moving every block is
# cheaper than joining each tag's blocks in Python (thousands of tags); above it, joining each
# tag's blocks gives arrays of their own, which the series then keep without copying them.
_POINTS_PER_BLOCK = 150


def _joined_per_tag(parts: list[TagColumns], counts: np.ndarray, present: np.ndarray) -> dict[str, Points]:
    ends = np.cumsum(counts, axis=1)
    begins = (ends - counts).tolist()
    ends_list = ends.tolist()
    names = parts[-1].names
    joined: dict[str, Points] = {}
    for tag_id in present.tolist():
        spans = [(row, begins[row][tag_id], ends_list[row][tag_id]) for row in range(len(parts))]
        spans = [(row, begin, end) for row, begin, end in spans if end > begin]
        joined[names[tag_id]] = Points(
            *(np.concatenate([getattr(parts[row], column)[begin:end] for row, begin, end in spans])
              for column in ("steps", "walls", "values"))
        )  # fmt: skip
    return joined


def _gathered(parts: list[TagColumns], counts: np.ndarray) -> TagColumns:
    # Block (tag t, part p) starts at bases[p] + within[p, t] in the parts laid end to end, and
    # goes to the place of its rank in tag-major order: one gather per column moves every block.
    sizes = counts.sum(axis=1)
    bases = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    within = np.cumsum(counts, axis=1) - counts
    block_starts = (bases[:, None] + within).T.ravel()
    block_sizes = counts.T.ravel()
    placed = np.cumsum(block_sizes) - block_sizes
    index = np.repeat(block_starts - placed, block_sizes) + np.arange(int(sizes.sum()))
    return TagColumns(
        parts[-1].names,
        counts.sum(axis=0),
        np.concatenate([part.steps for part in parts])[index],
        np.concatenate([part.walls for part in parts])[index],
        np.concatenate([part.values for part in parts])[index],
    )


def _slices(columns: TagColumns) -> dict[str, Points]:
    """Each tag's points as views of the columns."""
    present = np.flatnonzero(columns.counts)
    ends = np.cumsum(columns.counts)
    begins = (ends - columns.counts)[present].tolist()
    steps, walls, values, names = columns.steps, columns.walls, columns.values, columns.names
    return {
        names[tag_id]: Points(steps[begin:end], walls[begin:end], values[begin:end])
        for tag_id, begin, end in zip(present.tolist(), begins, ends[present].tolist())
    }
