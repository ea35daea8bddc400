"""An exact tag dictionary for the records of a buffer, with ids that hold for a whole file.

Records are grouped by a digest of their tag's words (a bucket table, O(n)), and every record's
words are compared with those of its group's first record, so a digest collision can never merge
two tags. `TagCache` gives each name one id for the whole file: the column packs of a file's
windows share that id space, so the change feed joins them and splits them by tag once
(`rltop.ingest.columns`), which serves the 3000-tag load and the 6M load's peak memory
(``docs/internals/performance.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rltop.ingest.sources.tfevents.tfrecord.frames import strided_view

_HASH_PRIME = np.uint64(0x100000001B3)


@dataclass
class TagCache:
    """The tags found so far in one file (ids are indices into ``names``)."""

    names: list[str] = field(default_factory=list)
    by_name: dict[str, int] = field(default_factory=dict)
    # Records per cycle in the file's last window (`tfrecord.fast.cycles`): the next window's
    # sample is made long enough for it at once.
    cycle: int = 0

    def ids_of(self, names: list[str]) -> np.ndarray:
        """The id of each name (a new name gets the next id)."""
        ids = np.empty(len(names), dtype=np.int64)
        for i, name in enumerate(names):
            known = self.by_name.get(name)
            if known is None:  # (a name from other bytes, invalid UTF-8 replaced: one series)
                known = self.by_name[name] = len(self.names)
                self.names.append(name)
            ids[i] = known
        return ids


def tag_dictionary(data: bytes, tag_start: np.ndarray, tag_len: np.ndarray, cache: TagCache | None = None):
    """Group records by exact tag bytes: (id per record, names by id, exact-match mask).

    A tag is read as whole words that cover it exactly: words from its start, and one word that
    ends at its end (so nothing past the tag is read and no word needs masking). A tag shorter
    than a word is read with the header bytes before it, which are equal for equal tag lengths
    and layouts; records of one tag that differ there get two groups, merged by name. Ids index
    ``cache.names`` (a fresh cache when none is given).
    """
    cache = TagCache() if cache is None else cache
    words_view = strided_view(data, "<u8")
    longest = int(tag_len.max()) if tag_len.size else 0
    last_at = tag_start + tag_len - 8  # the word ending at the tag's end
    words = []
    digest = tag_len.astype(np.uint64)
    for k in range(max((longest - 1) // 8, 0)):
        # Word k from the start while it lies inside the tag; past that, zero and left out of
        # the digest (so a tag's digest does not depend on the longest tag of the window).
        at = tag_start + 8 * k
        inside = at <= last_at
        word = words_view[np.minimum(at, last_at)]
        folded = digest * _HASH_PRIME ^ word
        if not inside.all():
            word = np.where(inside, word, np.uint64(0))
            folded = np.where(inside, folded, digest)
        words.append(word)
        digest = folded
    # The last word goes in last: a multiplication carries a word's high bytes out of the digest.
    last = words_view[last_at]
    digest = digest * _HASH_PRIME ^ last
    first, inverse = _group_digests(digest)
    representative = first[inverse]
    exact = (tag_len == tag_len[representative]) & (last == last[representative])
    for word in words:
        exact &= word == word[representative]
    names = [
        data[begin : begin + size].decode("utf-8", "replace")
        for begin, size in zip(tag_start[first].tolist(), tag_len[first].tolist())
    ]
    return cache.ids_of(names)[inverse], cache.names, exact


_SMALL_BUCKETS = 1 << 12  # a table that stays in the first-level cache: a run's tags fit easily
_BUCKETS = 1 << 16  # for thousands of tags (many collisions in the small table)


def _group_digests(digest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first record of each distinct digest, group number of every record).

    A bucket table finds the first record of each bucket in O(n) (np.unique would sort the whole
    column); records whose digest differs from their bucket's first record (a bucket collision)
    are grouped by np.unique on their own. The small table is tried first; when more than a few
    records collide in it, the large one is used.
    """
    count = digest.size
    mixed = digest ^ (digest >> np.uint64(29))
    for buckets in (_SMALL_BUCKETS, _BUCKETS):
        bucket = (mixed & np.uint64(buckets - 1)).astype(np.int64)
        rep = first_of_key(bucket, buckets)
        collided = digest != digest[rep]
        rows = np.flatnonzero(collided)
        if rows.size * 32 <= count:
            break
    if rows.size:
        _, first_rows, inverse_rows = np.unique(digest[rows], return_index=True, return_inverse=True)
        rep[rows] = rows[first_rows][inverse_rows]
    first = np.flatnonzero(rep == np.arange(count))
    group_of_first = np.empty(count, dtype=np.int64)
    group_of_first[first] = np.arange(first.size)
    return first, group_of_first[rep]


def first_of_key(keys: np.ndarray, size: int | None = None) -> np.ndarray:
    """For each row, the index of the first row with the same key (keys in ``[0, size)``), in O(n)."""
    size = int(keys.max()) + 1 if size is None else size
    first = np.full(size, -1, dtype=np.int64)
    first[keys[::-1]] = np.arange(keys.size - 1, -1, -1, dtype=np.int64)  # the last write wins
    return first[keys]
