"""Fuzzing the reader against an independent reference: damaged real TRL logs lose no intact record.

A fixed seed draws a few thousand cases from the copied TRL fixtures: torn records (header and part
of the payload, then the next records), deletions, insertions, lengths off by -20..+300 or huge with a
valid length CRC, zero-filled ranges, bit flips and two damages at once; each file is read in one go
or while it grows, with read windows from 1 KB to 4 MB (the first 40 KB of each fixture, so that
thousands of cases take seconds). Every record the damage left intact must be
read, no point may be invented or reordered, and points may be lost silently only at the end of a
file (where damage looks like a record still being written). ``benchmarks/fuzz_reader.py`` runs the
same cases for longer and prints the counts in the README's reliability section.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from helpers.paths import FIXTURES, TRL_RUNS, trl_event_file
from helpers.reader_reference import KINDS, make_case, read_reference, run_case

SEED = 20261201
CASES = 2000
PREFIX = 40_000  # bytes of each fixture kept (its config text summaries and ~600 scalars): fast cases


def test_damaged_fixtures_lose_no_intact_record(tmp_path: Path) -> None:
    fixtures = {name: read_reference(trl_event_file(name), PREFIX) for name in TRL_RUNS}
    rng = random.Random(SEED)
    target = tmp_path / "events.out.tfevents.1.host.1.0"
    kinds: Counter = Counter()
    failures = []
    intact_points = read_points = 0
    for number in range(CASES):
        case = make_case(fixtures, rng)
        kinds[case.kind] += 1
        errors, intact, read = run_case(case, fixtures, target)
        intact_points += intact
        read_points += read
        if errors:
            edits = [(a, b, len(x)) for a, b, x in case.edits]
            failures.append(
                f"case {number}: {case.kind} on {case.fixture} {edits}, window {case.window}, "
                f"{'growing' if case.chunks else 'whole'}: {errors}"
            )
    assert not failures, "\n".join(failures[:10])
    assert set(kinds) == set(KINDS)  # every kind of damage was drawn
    assert read_points >= intact_points > 0


LONG_RUN = FIXTURES / "trl2" / "grpo_long_healthy"
LONG_CASES = 100


def test_damage_inside_a_long_cycle_loses_no_intact_record(tmp_path: Path, monkeypatch) -> None:
    # 1 MB of a real TRL log read in windows of 64 KB to 4 MB: the records repeat one cycle of
    # tags, so decoding takes them from their fields (tfrecord.fast.cycles); damage
    # anywhere must still lose no intact record.
    from rltop.ingest.sources.tfevents.tfrecord.fast import cycles

    (path,) = sorted(LONG_RUN.glob("runs/*/events.out.tfevents.*"))
    fixtures = {"long": read_reference(path, 1_000_000)}
    used = Counter()
    decode_run = cycles._decode_run

    def counting_run(*args):
        used["cycles"] += 1
        return decode_run(*args)

    monkeypatch.setattr(cycles, "_decode_run", counting_run)
    rng = random.Random(SEED + 1)
    target = tmp_path / "events.out.tfevents.1.host.1.0"
    failures = []
    for number in range(LONG_CASES):
        case = make_case(fixtures, rng)
        case.window = rng.choice((1 << 16, 1 << 20, 4 << 20))
        errors, intact, read = run_case(case, fixtures, target)
        if errors:
            failures.append(
                f"case {number}: {case.kind} {[(a, b, len(x)) for a, b, x in case.edits]}, "
                f"window {case.window}, {'growing' if case.chunks else 'whole'}: {errors}"
            )
    assert not failures, "\n".join(failures[:10])
    assert used["cycles"] > LONG_CASES  # the cycle path ran
