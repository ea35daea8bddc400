"""Tensor-style scalars of every dtype, text summaries, and non-scalar summaries skipped cleanly."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rltop.ingest.follow.loader import load
from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader
from rltop.ingest.sources.tfevents.tfrecord.writer import frame_record

pb = pytest.importorskip("tensorboard.compat.proto.event_pb2")
from tensorboard.compat.proto import summary_pb2, tensor_pb2, tensor_shape_pb2  # noqa: E402


def event(step: int, value: summary_pb2.Summary.Value) -> bytes:
    summary = summary_pb2.Summary(value=[value])
    return frame_record(pb.Event(wall_time=1000.0 + step, step=step, summary=summary).SerializeToString())


def tensor_value(
    tag: str, tensor: tensor_pb2.TensorProto, plugin: str | None = "scalars"
) -> summary_pb2.Summary.Value:
    value = summary_pb2.Summary.Value(tag=tag, tensor=tensor)
    if plugin is not None:
        value.metadata.plugin_data.plugin_name = plugin
    return value


def scalar_tensor(dtype: int, **fields) -> tensor_pb2.TensorProto:
    return tensor_pb2.TensorProto(dtype=dtype, tensor_shape=tensor_shape_pb2.TensorShapeProto(), **fields)


CASES = [
    ("float", scalar_tensor(1, float_val=[0.25]), 0.25),
    ("double", scalar_tensor(2, double_val=[0.1]), 0.1),
    ("int32", scalar_tensor(3, int_val=[-7]), -7.0),
    ("int64", scalar_tensor(9, int64_val=[2**40]), float(2**40)),
    ("bool", scalar_tensor(10, bool_val=[True]), 1.0),
    ("half", scalar_tensor(19, half_val=[int(np.array([1.5], np.float16).view(np.uint16)[0])]), 1.5),
    ("content_double", scalar_tensor(2, tensor_content=np.array([2.5], "<f8").tobytes()), 2.5),
    ("content_half", scalar_tensor(19, tensor_content=np.array([-3.0], "<f2").tobytes()), -3.0),
]


def test_tensor_scalars_of_every_dtype(tmp_path: Path) -> None:
    data = frame_record(pb.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())
    for step, (tag, tensor, _) in enumerate(CASES, start=1):
        data += event(step, tensor_value(tag, tensor))
    # Non-scalar events around them: an image, audio, a graph and a session log.
    data += event(1, summary_pb2.Summary.Value(tag="img", image=summary_pb2.Summary.Image(height=1, width=1)))
    data += event(1, summary_pb2.Summary.Value(tag="snd", audio=summary_pb2.Summary.Audio(sample_rate=8000)))
    data += frame_record(pb.Event(wall_time=2.0, step=1, graph_def=b"\x0a\x03abc").SerializeToString())
    session_log = pb.SessionLog(status=1)
    data += frame_record(pb.Event(wall_time=2.0, step=1, session_log=session_log).SerializeToString())
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    path.write_bytes(data)
    result = EventFileReader(str(path)).read()
    assert result.problems == []
    assert sorted(result.decoded.scalars) == sorted(tag for tag, _, _ in CASES)
    for step, (tag, _, expected) in enumerate(CASES, start=1):
        points = result.decoded.scalars[tag]
        assert points.steps.tolist() == [step]
        assert points.values.tolist() == [expected]
    assert result.decoded.scalars["float"].single_precision
    assert not result.decoded.scalars["double"].single_precision


def test_tf2_metadata_only_on_first_event(tmp_path: Path) -> None:
    # TF2 writers send the plugin metadata once per tag; later values are bare tensors.
    data = event(1, tensor_value("loss", scalar_tensor(1, float_val=[1.0])))
    data += event(2, tensor_value("loss", scalar_tensor(1, float_val=[0.5]), plugin=None))
    histo = tensor_pb2.TensorProto(
        dtype=2,
        tensor_shape=tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=3)]),
        double_val=[1, 2, 3],
    )
    data += event(1, tensor_value("weights", histo, plugin="histograms"))
    data += event(2, tensor_value("weights", scalar_tensor(2, double_val=[9.0]), plugin=None))
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    path.write_bytes(data)
    scalars = EventFileReader(str(path)).read().decoded.scalars
    assert scalars["loss"].values.tolist() == [1.0, 0.5]
    assert "weights" not in scalars  # a histogram tag stays a histogram


def test_tensorboardx_mixed_summaries(tmp_path: Path) -> None:
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(logdir=str(tmp_path))
    for step in range(5):
        writer.add_scalar("new/style", step * 0.5, step, display_name="with metadata")
        writer.add_scalar("old/style", float("nan") if step == 2 else step, step)
        writer.add_histogram("hist", np.arange(10) * step, step)
        writer.add_text("notes", f"step {step}", step)
    writer.add_scalar("inf", math.inf, 9)
    writer.close()
    result = load([str(tmp_path)])
    assert result.problems == []
    (run,) = result.store.runs.values()
    assert sorted(run.series) == ["inf", "new/style", "old/style"]
    assert run.series["new/style"].values.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert run.series["new/style"].steps.tolist() == [0, 1, 2, 3, 4]
    old = run.series["old/style"].values
    assert math.isnan(old[2]) and old[4] == 4.0
    assert run.series["inf"].values.tolist() == [math.inf]
    assert [entry.text for entry in run.texts["notes/text_summary"]] == [f"step {s}" for s in range(5)]
