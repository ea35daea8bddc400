"""Shared by the tests: what test_wandb_source.py used to define for itself and others."""

from __future__ import annotations

import bisect
from pathlib import Path

from helpers.paths import FIXTURES, REPO
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.wandb import leveldb_log
from rltop.ingest.sources.wandb.kind import record_class
from rltop.ingest.sources.wandb.reader import WandbFileReader
from rltop.ingest.sources.wandb.records import RunRecords

FIXTURE = FIXTURES / "wandb" / "wandb_grpo"


WANDB_DIR = FIXTURE / "wandb"


RUN_FILE = next(WANDB_DIR.glob("offline-run-*/run-*.wandb"))


EVENTS_DIR = next((FIXTURE / "runs").iterdir())


NOW = 1_796_128_800.0  # a minute after the fixture run ended


ROOT = REPO  # the repository root


def only_run(path: Path):
    (run,) = load([str(path)]).store.runs.values()
    return run


def records_of(data: bytes) -> list[tuple[int, int, bytes]]:
    """(offset, end, payload) of every record of a whole clean file."""
    scan = leveldb_log.scan(data[7:], 7, True)
    ends = [offset for offset, _ in scan.records[1:]] + [len(data)]
    return [(offset, end, payload) for (offset, payload), end in zip(scan.records, ends)]


def points(decoded) -> set[tuple[str, int, float]]:
    return {(tag, int(s), float(v)) for tag, p in decoded.scalars.items() for s, v in zip(p.steps, p.values)}


def read_bytes(tmp_path: Path, data: bytes) -> tuple[set, list[str], WandbFileReader]:
    path = tmp_path / "run-cut.wandb"
    path.write_bytes(data)
    reader = WandbFileReader(str(path))
    result = reader.read()
    assert not result.more
    return points(result.decoded), result.problems, reader


_prefixes: dict[bytes, tuple[list[int], list[set]]] = {}


def points_up_to(data: bytes, end: int) -> set:
    """The points of the records that end at or before ``end`` (in a clean read)."""
    if data not in _prefixes:  # the points after each record of the clean file, computed once
        Record = record_class()
        decoder = RunRecords()
        ends, sets, so_far = [0], [set()], set()
        for _offset, record_end, payload in records_of(data):
            message = Record()
            message.ParseFromString(payload)
            decoder.take(message)
            so_far = so_far | points(decoder.drain())
            ends.append(record_end)
            sets.append(so_far)
        _prefixes[data] = ends, sets
    ends, sets = _prefixes[data]
    return sets[bisect.bisect_right(ends, end) - 1]


def last_history_record(data: bytes) -> tuple[int, int]:
    Record = record_class()
    for offset, end, payload in reversed(records_of(data)):
        message = Record()
        message.ParseFromString(payload)
        if message.WhichOneof("record_type") == "history" and any(
            "loss" in "".join(item.nested_key) for item in message.history.item
        ):
            return offset, end
    raise AssertionError("no history record")


WITHOUT_WANDB = (
    "import sys; sys.modules['wandb'] = None; from rltop.cli import main; sys.exit(main(sys.argv[1:]))"
)
