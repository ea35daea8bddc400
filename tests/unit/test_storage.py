"""The storage seam: local paths and fsspec URLs behind one set of operations.

fsspec's ``memory://`` file system stands in for a remote store here (no network, no server); the
same code paths serve ``s3://`` (tests/test_remote_s3.py runs them against a real local S3 server).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import fsspec
import numpy as np
import pytest
from helpers.paths import REPO, TRL

from rltop.ingest import storage
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader
from rltop.ingest.sources.tfevents.tfrecord.writer import encode_event, frame_record, scalar_value
from rltop.ingest.storage import Unreachable
from rltop.ingest.storage.remote import RemoteBackend, backend
from rltop.report.export import export_lines

ROOT = REPO  # the repository root


def upload(local: Path, url: str) -> None:
    """Copy a local folder tree to ``url`` (one object per file)."""
    fs = fsspec.filesystem("memory")
    for path in sorted(local.rglob("*")):
        if path.is_file():
            fs.pipe(f"{url}/{path.relative_to(local).as_posix()}", path.read_bytes())


@pytest.fixture
def memory_root():
    root = f"memory://rltop-{uuid.uuid4().hex[:8]}"
    yield root
    fs = fsspec.filesystem("memory")
    if fs.exists(root):
        fs.rm(root, recursive=True)


def record(step: int, value: float) -> bytes:
    return frame_record(encode_event(1.7e9 + step, step, scalar_value("train/loss", value)))


def test_url_paths_keep_their_scheme():
    assert storage.parent("s3://bucket/exp/run/file") == "s3://bucket/exp/run"
    assert storage.name("s3://bucket/exp/run/") == "run"
    assert storage.join("s3://bucket/exp", "run", "f") == "s3://bucket/exp/run/f"
    assert storage.relative("s3://bucket/exp/a/b", "s3://bucket/exp") == "a/b"
    assert storage.relative("s3://bucket/exp", "s3://bucket/exp") == "."
    assert storage.parts("s3://bucket/exp/") == ["s3:", "bucket", "exp"]
    assert storage.absolute("s3://bucket/exp/") == "s3://bucket/exp"
    assert (
        storage.is_url("gs://b/x") and storage.is_url("simplecache::s3://b") and not storage.is_url("./logs")
    )
    assert storage.display("s3://b/x") == "s3://b/x"


def test_local_backend_reads_ranges_and_knows_deletions(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    with storage.open_file(str(path)) as handle:
        info = handle.stat()
        assert info.size == 10 and handle.read(3, 4) == b"3456" and handle.read(8, 100) == b"89"
        assert info.identity is not None
    assert storage.kind(str(path)) == "file" and storage.kind(str(tmp_path)) == "directory"
    assert not storage.is_gone(str(path)) and storage.is_gone(str(tmp_path / "missing"))
    assert list(storage.walk(str(tmp_path), print)) == [(str(tmp_path), ["f"])]


def test_a_load_from_a_url_equals_the_load_from_disk(memory_root):
    upload(TRL, f"{memory_root}/trl")
    remote, local = load([f"{memory_root}/trl"]), load([str(TRL)])
    assert list(export_lines(remote.store, "csv")) == list(export_lines(local.store, "csv"))
    assert {r.name: r.source for r in remote.store.runs.values()} == {
        r.name: r.source for r in local.store.runs.values()
    }
    assert remote.store.runs["ppo_healthy/runs/Nov29_21-50-07_vm"].source_note.startswith(
        "trainer_state.json"
    )


def test_checkpoints_on_a_url_are_a_trainer_state_run(memory_root):
    for step in (100, 200):
        state = TRL / "grpo_healthy" / f"checkpoint-{step}" / "trainer_state.json"
        fsspec.filesystem("memory").pipe(f"{memory_root}/out/checkpoint-{step}/trainer_state.json",
                                         state.read_bytes())  # fmt: skip
    (run,) = load([f"{memory_root}/out"]).store.runs.values()
    assert run.source == "trainer_state" and run.last_step == 200 and run.name == "out"


class Counting:
    """Counts the requests a reader makes through the URL backend (metadata and byte ranges)."""

    def __init__(self, monkeypatch) -> None:
        self.infos = 0
        self.bytes = 0
        fs = backend("memory://x").fs
        info, cat = fs.info, fs.cat_file

        def counting_info(path, **kwargs):
            self.infos += 1
            return info(path, **kwargs)

        def counting_cat(path, start=None, end=None, **kwargs):
            data = cat(path, start=start, end=end, **kwargs)
            self.bytes += len(data)
            return data

        monkeypatch.setattr(fs, "info", counting_info)
        monkeypatch.setattr(fs, "cat_file", counting_cat)


def test_an_idle_remote_file_costs_one_stat_and_no_download(memory_root, monkeypatch):
    url = f"{memory_root}/run/events.out.tfevents.1.host"
    fs = fsspec.filesystem("memory")
    history = b"".join(record(step, step / 10) for step in range(1, 101))
    fs.pipe(url, history)
    reader = EventFileReader(url)
    assert reader.read().decoded.scalars["train/loss"].steps.tolist() == list(range(1, 101))
    counter = Counting(monkeypatch)
    for _ in range(5):
        assert reader.read().bytes_read == 0
    assert (counter.infos, counter.bytes) == (5, 0)
    # The object re-uploaded longer (how logs reach a store): exactly the new bytes are fetched.
    appended = b"".join(record(step, step / 10) for step in range(101, 104))
    fs.pipe(url, history + appended)
    result = reader.read()
    assert result.decoded.scalars["train/loss"].steps.tolist() == [101, 102, 103]
    head = 32  # the first bytes, compared to notice a rewritten object
    assert counter.bytes == len(appended) + head


def test_a_rewritten_object_is_read_again(memory_root):
    url = f"{memory_root}/run/events.out.tfevents.1.host"
    fs = fsspec.filesystem("memory")
    fs.pipe(url, frame_record(encode_event(1.6e9, 0, file_version="brain.Event:2")) + record(1, 1.0))
    reader = EventFileReader(url)
    reader.read()
    fs.pipe(
        url,
        frame_record(encode_event(1.7e9, 0, file_version="brain.Event:2")) + record(1, 2.0) + record(2, 3.0),
    )
    result = reader.read()
    assert result.restarted and "rewritten" in result.problems[0]
    np.testing.assert_array_equal(result.decoded.scalars["train/loss"].values, [2.0, 3.0])


def test_a_store_that_does_not_answer_is_unreachable_not_missing():
    remote = RemoteBackend("memory://")

    def refused(*args, **kwargs):
        raise ConnectionRefusedError(111, "Connection refused")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Access Denied")

    def missing(*args, **kwargs):
        raise FileNotFoundError(2, "no such key")

    with pytest.raises(Unreachable, match="Connection refused"):
        remote.call(refused)
    with pytest.raises(Unreachable, match="check the credentials"):
        remote.call(denied)
    with pytest.raises(FileNotFoundError):
        remote.call(missing)


def test_an_empty_prefix_waits_and_a_missing_root_is_an_error(memory_root, capsys):
    from rltop.cli import main

    fsspec.filesystem("memory").pipe(f"{memory_root}/other/x", b"")
    assert main(["snapshot", f"{memory_root}/not-yet"]) == 2  # nothing there: nothing to report
    assert "no event files" in capsys.readouterr().err
    assert main(["snapshot", "memory://no-such-root-at-all/x"]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_s3_requests_time_out_after_about_ten_seconds_and_are_tried_twice(monkeypatch):
    # s3fs's defaults (5 s to connect, 15 s to answer, 5 x 5 tries) made an endpoint that never
    # answers fail after about seven minutes; the watcher retries with back-off on its own.
    pytest.importorskip("s3fs")
    from rltop.ingest.storage import remote

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setattr(fsspec.config, "conf", {})
    fs = remote.RemoteBackend("s3://").fs
    assert fs.config_kwargs["connect_timeout"] == fs.config_kwargs["read_timeout"] == remote.TIMEOUT == 10
    assert fs.config_kwargs["retries"] == {"max_attempts": 2, "mode": "standard"}
    assert fs.retries == 1


def test_the_users_fsspec_configuration_wins_over_rltops_timeouts(monkeypatch):
    pytest.importorskip("s3fs")
    from rltop.ingest.storage import remote

    monkeypatch.setattr(fsspec.config, "conf", {"s3": {"config_kwargs": {"read_timeout": 120}}})
    fs = remote.RemoteBackend("s3://").fs
    assert fs.config_kwargs["read_timeout"] == 120  # the user's
    assert fs.config_kwargs["connect_timeout"] == remote.TIMEOUT  # rltop's, where the user set nothing
