"""The vectorised tier reads exactly what the plain reader reads (tfrecord.fast).

The plain reader (``RLTOP_PLAIN_READER=1``: frames walked one by one, every record through the
general wire decoder) is the reference. Every event file of the fixtures (trl, trl2, trl3, seeds),
the synthetic layouts of the reader tests (every tensor dtype, TF2 metadata, tensorboardX's mixed
summaries, cycles of equal-length tags, steps whose varint grows) and 128 damaged copies
made as the fuzz test makes them are read both ways, in several read windows, and must give the
same reads: tags, steps, wall times, values and NaN payloads bit for bit, float32 flags, texts,
file versions, problems, offsets; a one-shot load must fill the same store.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import FIXTURES, TRL_RUNS, trl_event_file
from helpers.reader_reference import KINDS, apply_edits, covering_cases, read_reference

from rltop.ingest.follow.loader import load
from rltop.ingest.sources.tfevents.tfrecord import fast
from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader
from rltop.ingest.sources.tfevents.tfrecord.writer import encode_event, frame_record, scalar_value, text_value

EVENT_FILES = sorted(
    path for folder in ("trl", "trl2", "trl3", "seeds") for path in (FIXTURES / folder).rglob("*tfevents*")
)
WINDOWS = (1 << 22, 1 << 16, 5_000)  # one read, several windows (the tag cache, cycles across them), tiny


def _bits(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array).tobytes()  # NaN payloads and signs included


def _reads(path: Path, window: int, plain: bool, monkeypatch) -> list[tuple]:
    """Every read of ``path`` to its end, as comparable tuples, with the tier on or off."""
    monkeypatch.setattr(fast, "ENABLED", not plain)
    reader = EventFileReader(str(path), window=window)
    reads = []
    for _ in range(100_000):
        result = reader.read()
        decoded = result.decoded
        scalars = tuple(
            (tag, _bits(p.steps), _bits(p.wall_times), _bits(p.values), p.single_precision)
            for tag, p in sorted(decoded.scalars.items())
        )
        reads.append((
            scalars, tuple(decoded.texts), decoded.file_version, tuple(result.problems), reader.offset,
            result.bytes_read, result.more, result.large_next,
        ))  # fmt: skip
        if not result.more:
            reads.append(("unfinished", reader.unfinished(), reader.pending_bytes))
            return reads
    raise AssertionError("the reader never finished")


def _same_both_ways(path: Path, window: int, monkeypatch) -> None:
    vectorised = _reads(path, window, False, monkeypatch)
    plain = _reads(path, window, True, monkeypatch)
    assert len(vectorised) == len(plain)
    for number, (ours, reference) in enumerate(zip(vectorised, plain)):
        assert ours == reference, f"{path.name}, window {window}: read {number} differs"


def test_every_fixture_is_found():
    assert len(EVENT_FILES) >= 30  # (the trl, trl2, trl3 and seeds event files)


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize(
    "path", EVENT_FILES, ids=lambda path: "/".join(path.relative_to(FIXTURES).parts[:-1])
)
def test_fixture_reads_the_same_both_ways(path: Path, window: int, monkeypatch) -> None:
    _same_both_ways(path, window, monkeypatch)


def _store(paths: list[str], plain: bool, monkeypatch) -> dict:
    monkeypatch.setattr(fast, "ENABLED", not plain)
    result = load(paths)
    return {
        (name, tag): (_bits(s.steps), _bits(s.wall_times), _bits(s.values), s.single_precision, s.purged)
        for name, run in result.store.runs.items()
        for tag, s in run.series.items()
    } | {("problems", ""): tuple(result.problems)}


@pytest.mark.parametrize("folder", ["trl", "trl2", "trl3"])
def test_a_load_fills_the_same_store_both_ways(folder: str, monkeypatch) -> None:
    # Through the change feed: column packs joined across windows on one side, points per tag on the other.
    vectorised = _store([str(FIXTURES / folder)], False, monkeypatch)
    assert _store([str(FIXTURES / folder)], True, monkeypatch) == vectorised
    assert len(vectorised) > 100


def _synthetic_streams() -> dict[str, list[bytes]]:
    """Payload streams shaped like the reader tests' synthetic logs."""
    rng = np.random.default_rng(7)
    tags = [f"train/metric_{i:02d}" for i in range(40)]
    cycle = [encode_event(1.7e9, 0, file_version="brain.Event:2")]
    for step in range(100, 160):  # crosses 128: the step's varint grows mid-cycle
        for i, tag in enumerate(tags):
            cycle.append(
                encode_event(1.7e9 + step * 1.37 + i * 1e-3, step, scalar_value(tag, float(rng.normal())))
            )
    special = [encode_event(1.7e9, 0, file_version="brain.Event:2")]
    for step in range(1, 400):
        value = (
            [float("nan"), float("inf"), -float("inf"), -0.0, 1e-45, 3.4e38][step % 6]
            if step % 7 == 0
            else step
        )
        special.append(encode_event(1.7e9 + step, step, scalar_value("loss", value)))
        if step % 50 == 0:
            special.append(encode_event(1.7e9 + step, step, text_value("note", f"step {step}")))
        if step == 200:  # a restart: steps go back
            special.extend(encode_event(1.8e9 + s, s, scalar_value("loss", -s)) for s in range(150, 170))
    return {"cycle": cycle, "special": special, "tensors": _tensor_stream()}


def _tensor_stream() -> list[bytes]:
    """Tensor scalars as torch (``new_style=True``) and TF2 write them, and of other dtypes."""
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2

    def tensor(dtype: int, **fields) -> tensor_pb2.TensorProto:
        return tensor_pb2.TensorProto(dtype=dtype, tensor_shape=tensor_shape_pb2.TensorShapeProto(), **fields)

    def event(step: int, tag: str, value: tensor_pb2.TensorProto, plugin: str | None) -> bytes:
        summary_value = summary_pb2.Summary.Value(tag=tag, tensor=value)
        if plugin is not None:
            summary_value.metadata.plugin_data.plugin_name = plugin
        summary = summary_pb2.Summary(value=[summary_value])
        return event_pb2.Event(wall_time=1000.0 + step * 0.5, step=step, summary=summary).SerializeToString()

    stream = [encode_event(1.0, 0, file_version="brain.Event:2")]
    for step in range(1, 120):
        value = float(np.float32(np.cos(step)))
        stream.append(event(step, "torch/loss", tensor(1, float_val=[value]), "scalars"))  # new_style=True
        content = np.array([value], "<f4").tobytes()
        stream.append(
            event(step, "tf2/loss", tensor(1, tensor_content=content), "scalars" if step == 1 else None)
        )
        if step % 10 == 0:
            stream.append(event(step, "tf2/double", tensor(2, double_val=[value / 3]), None))
            stream.append(event(step, "tf2/int64", tensor(9, int64_val=[step * 2**33]), None))
            stream.append(event(step, "images/x", tensor(1, float_val=[value]), "images"))  # not a scalar
    return stream


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("name", ["cycle", "special", "tensors"])
def test_synthetic_layouts_read_the_same_both_ways(
    tmp_path: Path, name: str, window: int, monkeypatch
) -> None:
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    path.write_bytes(b"".join(frame_record(p) for p in _synthetic_streams()[name]))
    _same_both_ways(path, window, monkeypatch)


SEED = 20261204
PREFIX = 40_000
DAMAGE_WINDOWS = (1024, 4096, 65536, 4 << 20)


def test_damaged_fixtures_read_the_same_both_ways(tmp_path: Path, monkeypatch) -> None:
    # The fuzz test's damage (torn records, lying lengths, zeros, flips...), whole files only here:
    # each kind in each window 4 times, on 4 of the 7 fixtures (128 cases; 300 random ones caught
    # no more of seven deliberate bugs put in the vectorised tier).
    fixtures = {name: read_reference(trl_event_file(name), PREFIX) for name in TRL_RUNS}
    cases = covering_cases(fixtures, random.Random(SEED), DAMAGE_WINDOWS, rounds=4, growing=(False,))
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    for case in cases:
        path.write_bytes(apply_edits(fixtures[case.fixture].data, case.edits))
        _same_both_ways(path, case.window, monkeypatch)
    assert {(case.kind, case.window) for case in cases} == {(k, w) for k in KINDS for w in DAMAGE_WINDOWS}


def test_the_switch_decides_which_tier_decodes(monkeypatch) -> None:
    # (so that the comparisons above really compare two tiers)
    from rltop.ingest.sources.tfevents.tfrecord import records

    calls = []
    original = records.decode_cycles
    monkeypatch.setattr(records, "decode_cycles", lambda *args: calls.append(1) or original(*args))
    path = trl_event_file(TRL_RUNS[0])
    _reads(path, 1 << 22, False, monkeypatch)
    assert calls
    calls.clear()
    _reads(path, 1 << 22, True, monkeypatch)
    assert not calls


def test_a_load_that_copies_fills_the_same_store(monkeypatch) -> None:
    # A one-shot load hands its columns to new series (adopt); copying them must change nothing.
    from rltop.model.series import Series

    adopted = _store([str(FIXTURES / "trl2")], False, monkeypatch)
    append = Series.append
    monkeypatch.setattr(Series, "append", lambda self, *args, adopt=False: append(self, *args, adopt=False))
    assert _store([str(FIXTURES / "trl2")], False, monkeypatch) == adopted
