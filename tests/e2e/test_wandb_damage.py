"""Tests moved out of test_wandb_source.py: each starts a process (the unit tier starts none)."""

from __future__ import annotations

import numpy as np
from helpers.wandb_files import (  # noqa: F401 (fixtures among them)
    EVENTS_DIR,
    FIXTURE,
    NOW,
    ROOT,
    RUN_FILE,
    WANDB_DIR,
    WITHOUT_WANDB,
    last_history_record,
    only_run,
    points,
    points_up_to,
    read_bytes,
    records_of,
)

from rltop.ingest.sources.wandb.reader import WandbFileReader


def test_cut_at_every_byte_of_the_last_records_loses_nothing_before_the_cut(tmp_path) -> None:
    data = RUN_FILE.read_bytes()
    whole, _, _ = read_bytes(tmp_path, data)
    history_start, history_end = last_history_record(data)
    last_start = records_of(data)[-1][0]
    before_history = points_up_to(data, history_start)
    # Every byte of the file's last record (the exit record) and of the last history record's
    # chunk header; then every 5th byte of that history record's payload.
    history_cuts = [*range(history_start, history_start + 16), *range(history_start + 16, history_end + 1, 5)]
    for cut in [*history_cuts, history_end, *range(last_start, len(data) + 1)]:
        got, problems, reader = read_bytes(tmp_path, data[:cut])
        assert problems == [], cut  # a record cut short is a writer's next one, never damage
        assert before_history <= got, cut
        assert got <= whole, cut
        if cut >= history_end:
            assert points_up_to(data, history_end) <= got, cut
        assert reader.unfinished() is None, cut


def test_flipped_bits_never_crash_and_lose_nothing_before_the_damage(tmp_path) -> None:
    data = RUN_FILE.read_bytes()
    rng = np.random.default_rng(16)
    positions = sorted(set(rng.integers(7, len(data), 200).tolist()))
    records = records_of(data)
    for position in positions:
        damaged = bytearray(data)
        damaged[position] ^= 1 << int(rng.integers(0, 8))
        got, problems, _ = read_bytes(tmp_path, bytes(damaged))
        hit = next(offset for offset, end, _ in records if offset <= position < end)
        # Every point of a record before the damaged one is there (the record containing the
        # flip may lose its points, and a later summary-only key may settle differently).
        assert {p for p in points_up_to(data, hit) if not p[0].startswith("train/train_")} <= got, position
        if records[-1][0] > position:
            assert problems, position  # the damage is said (the last record may look unfinished)
        for problem in problems:
            assert "corrupt data at byte" in problem or "undecodable record" in problem, problem


def test_random_damage_and_garbage_never_crash_the_reader(tmp_path) -> None:
    """Seeded fuzz: random cuts, byte runs overwritten, inserted and deleted; garbage files."""
    data = RUN_FILE.read_bytes()
    rng = np.random.default_rng(1616)
    path = tmp_path / "run-fuzz.wandb"
    for trial in range(150):
        damaged = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(damaged)))
            what = trial % 3
            if what == 0:
                damaged[at : at + int(rng.integers(1, 64))] = rng.bytes(int(rng.integers(1, 64)))
            elif what == 1:
                del damaged[at : at + int(rng.integers(1, 500))]
            else:
                damaged[at:at] = bytes(int(rng.integers(1, 300)))
        damaged = damaged[: int(rng.integers(len(damaged) // 2, len(damaged) + 1))]
        path.write_bytes(bytes(damaged))
        reader = WandbFileReader(str(path), window=int(rng.choice([4096, 40000, 1 << 22])))
        for _ in range(200):  # read in windows to the end: every read makes progress
            result = reader.read()
            if not result.more:
                break
        else:
            raise AssertionError(f"trial {trial}: the reader does not reach the end")
        reader.unfinished()
    for size in (0, 3, 7, 100, 40000):
        path.write_bytes(rng.bytes(size))
        WandbFileReader(str(path)).read()
