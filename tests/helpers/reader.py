"""Reading one event file to its end, decoding payloads generally, and proving damage is caught."""

from __future__ import annotations

from pathlib import Path

Points = dict[str, list[tuple[int, float]]]


def read_file_points(path: Path, window: int = 1 << 22) -> tuple[Points, list[str]]:
    """Every (step, value) per tag of one event file read to its end in ``window``-byte reads,
    and the problems reported."""
    from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader

    reader = EventFileReader(str(path), window=window)
    points: dict[str, list[tuple[int, float]]] = {}
    problems: list[str] = []
    while True:
        result = reader.read()
        problems.extend(result.problems)
        for tag, chunk in result.decoded.scalars.items():
            points.setdefault(tag, []).extend(zip(chunk.steps.tolist(), chunk.values.tolist()))
        if not result.more:
            return points, problems


def general_points(payloads: list[bytes]) -> dict[str, list[tuple[int, float]]]:
    """Every (step, value) per tag of these Event payloads, as the general wire decoder reads them."""
    from rltop.ingest.sources.tfevents.tfrecord.wire import decode_event

    plugins: dict[str, str] = {}
    points: dict[str, list[tuple[int, float]]] = {}
    for payload in payloads:
        event = decode_event(payload, plugins)
        for tag, value, _single in event.scalars:
            points.setdefault(tag, []).append((event.step, value))
    return points


def assert_every_flip_caught(
    path: Path,
    records: list[bytes],
    which: int,
    clean: dict[str, list[tuple[int, float]]],
    window: int = 1 << 22,
) -> None:
    """Flip one bit at each payload byte of record ``which`` (one byte at a time), write the file,
    read it in ``window``-byte reads: one damage report, nothing invented, that one point lost."""
    before = sum(len(r) for r in records[:which])
    for offset in range(len(records[which]) - 16):
        data = bytearray(b"".join(records))
        data[before + 12 + offset] ^= 1 << (offset % 8)
        path.write_bytes(bytes(data))
        points, problems = read_file_points(path, window)
        assert len(problems) == 1 and "corrupt data at byte" in problems[0], (which, offset, problems)
        for tag, values in points.items():  # nothing invented, nothing else lost
            assert set(values) <= set(clean.get(tag, [])), (which, offset, tag)
        assert sum(map(len, clean.values())) - sum(map(len, points.values())) == 1, (which, offset)
