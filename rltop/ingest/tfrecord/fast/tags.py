"""An exact tag dictionary for the records of a buffer, remembered across the windows of a file.

Records are grouped by a digest of their tag's words, and every record's words are compared with
those of its group's tag, so a digest collision can never merge two tags. The tags of one file
repeat in every 4 MB window: `TagCache` keeps each tag's digest, words and name, so a window
looks its records up (one binary search into a few dozen digests) instead of grouping them
anew; only tags not seen before are grouped by the bucket table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rltop.ingest.tfrecord.frames import strided_view

_HASH_PRIME = np.uint64(0x100000001B3)


@dataclass
class TagCache:
    """The tags found so far in one file (ids are indices into ``names``)."""

    names: list[str] = field(default_factory=list)
    lengths: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # per id
    # Per word position (0, 1, ... from the tag's start; -1 the word ending at its end): per id.
    words: dict[int, np.ndarray] = field(default_factory=dict)
    digests: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64))  # sorted
    ids: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # per sorted digest
    by_name: dict[str, int] = field(default_factory=dict)
    # Records per cycle in the file's last window (`rltop.ingest.tfrecord.fast.cycles`): the next window's
    # sample is made long enough for it at once.
    cycle: int = 0

    def lookup(self, digest: np.ndarray, tag_len: np.ndarray, words: list[np.ndarray],
               last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(id, known) per record: known when a cached tag has its digest, length and words.

        Positions past the words given are zero for every record (no tag is that long) and for
        the cached tag of the same length too, so they need no comparing."""
        if self.digests.size == 0:
            return np.zeros(digest.size, np.int64), np.zeros(digest.size, dtype=bool)
        at = np.minimum(np.searchsorted(self.digests, digest), self.digests.size - 1)
        ids = self.ids[at]
        known = (self.digests[at] == digest) & (self.lengths[ids] == tag_len)
        known &= self._column(-1)[ids] == last
        for position, word in enumerate(words):
            known &= self._column(position)[ids] == word
        return ids, known

    def _column(self, position: int) -> np.ndarray:
        column = self.words.get(position)
        if column is None:  # no tag this long so far: zeros
            column = self.words[position] = np.zeros(len(self.names), np.uint64)
        return column

    def add(self, names: list[str], digests: np.ndarray, lengths: np.ndarray,
            words: list[np.ndarray], last: np.ndarray) -> np.ndarray:
        """Remember new tags (a name already known keeps its id); return their ids.

        ``words[k]`` and ``last`` hold the tags' words in the cache's positions, one per tag."""
        ids = np.empty(len(names), dtype=np.int64)
        fresh: list[int] = []
        for i, name in enumerate(names):
            known = self.by_name.get(name)
            if known is None:  # (a name from other bytes, invalid UTF-8 replaced: one series)
                known = self.by_name[name] = len(self.names)
                self.names.append(name)
                fresh.append(i)
            ids[i] = known
        if not fresh:
            return ids
        take = np.asarray(fresh, dtype=np.int64)
        count = len(self.names) - take.size  # ids before these
        self.lengths = np.concatenate([self.lengths, lengths[take]])
        values = dict(enumerate(words))
        values[-1] = last
        for position in set(self.words) | set(values):
            added = values[position][take] if position in values else np.zeros(take.size, np.uint64)
            self.words[position] = np.concatenate([self._column(position)[:count], added])
        # A digest already cached (a collision) stays pointing at its first tag.
        new_digests = digests[take]
        keep = ~np.isin(new_digests, self.digests)
        merged = np.concatenate([self.digests, new_digests[keep]])
        order = np.argsort(merged, kind="stable")
        self.digests = merged[order]
        self.ids = np.concatenate([self.ids, ids[take][keep]])[order]
        return ids


def tag_dictionary(data: bytes, tag_start: np.ndarray, tag_len: np.ndarray, cache: TagCache | None = None):
    """Group records by exact tag bytes: (id per record, names by id, exact-match mask).

    A tag is read as whole words that cover it exactly: words from its start, and one word that
    ends at its end (so nothing past the tag is read and no word needs masking). A tag shorter
    than a word is read with the header bytes before it, which are equal for equal tag lengths
    and layouts; records of one tag that differ there get two ids, merged by name. Ids index
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
    ids, exact = cache.lookup(digest, tag_len, words, last)
    new = np.flatnonzero(~exact)
    if new.size:
        _learn(data, tag_start, tag_len, digest, words, last, new, ids, exact, cache)
    return ids, cache.names, exact


def _learn(data, tag_start, tag_len, digest, words, last, rows, ids, exact, cache: TagCache) -> None:
    """Group the records of tags not in the cache, add their tags, and fill in their ids."""
    first, inverse = _group_digests(digest[rows])
    representative = rows[first[inverse]]
    same = (tag_len[rows] == tag_len[representative]) & (last[rows] == last[representative])
    for word in words:
        same &= word[rows] == word[representative]
    heads = rows[first]
    names = [
        data[begin : begin + size].decode("utf-8", "replace")
        for begin, size in zip(tag_start[heads].tolist(), tag_len[heads].tolist())
    ]
    group_ids = cache.add(names, digest[heads], tag_len[heads], [w[heads] for w in words], last[heads])
    ids[rows] = group_ids[inverse]
    exact[rows] = same


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
