"""trackio databases that are damaged, odd, locked or left by a crash: nothing raises, every other run
loads completely, and what could not be read is said in one line naming the file.

A fixed seed draws a few hundred damaged copies of the fixture database (truncated, random bytes,
bytes flipped or a page zeroed or overwritten, the header or the schema page hit), each beside an
intact TensorBoard run in the same tree. Odd values (steps outside int64, a 400-digit integer,
NULL cells, JSON that is not an object) are skipped, counted and said once per run. A database
locked by its writer is said to be locked; the rows a crashed writer left in a ``-wal`` without
its ``-shm``, or behind a hot rollback journal, are read from a private copy; nothing beside the
database ever changes.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.live import end_all
from helpers.paths import FIXTURES
from helpers.tree import tree_state

from rltop.ingest import storage
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.trackio.kind import list_runs
from rltop.ingest.sources.trackio.reader import NOT_OBJECT, TrackioRunReader
from rltop.ingest.storage import sqlite_readonly

DATABASE = FIXTURES / "trackio" / "trackio_grpo" / "trackio" / "huggingface.db"
EVENTS = FIXTURES / "trl" / "grpo_unstable"  # an intact TensorBoard run beside the damaged database
RUN_ID = "097658c70b8249c2bda1795d63378a5c"
SEED = 20261204
CASES = 300
PAGE = 4096
# Damage that removes rows but cannot change a value: every point read must be an intact one, and
# a point missing must be said. (SQLite keeps no checksum: a flipped byte, a page overwritten, may
# change a value or a key and go unnoticed, as in any file without one.)
REMOVING = {"truncate", "random", "zero", "header"}


# What a damaged database is said to be (each needed by some case): a file whose schema cannot be
# read; rows on a damaged page (the rows after them are read); a page holding a copy of another;
# rows whose JSON was hit; a file whose header was hit.
REPORTS = (
    "damaged SQLite database",
    "of the database cannot be read",
    "row ids out of order",
    NOT_OBJECT,
    "not an SQLite database",
)


def points_of(store) -> dict[str, set[tuple[str, int, float]]]:
    """run -> every (tag, step, value) it holds (values as text: NaN equals NaN)."""
    return {
        name: {(tag, step, repr(value)) for tag, series in run.series.items()
               for step, value in zip(series.steps.tolist(), series.values.tolist())}
        for name, run in store.runs.items()
    }  # fmt: skip


def damaged(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One kind of damage drawn by ``rng`` and the damaged bytes."""
    kind = rng.choice(["truncate", "random", "flip", "zero", "overwrite", "header", "schema", "copy"])
    out = bytearray(data)
    page = rng.randrange(len(data) // PAGE)
    where = slice(page * PAGE, (page + 1) * PAGE)
    if kind == "truncate":
        out = out[: rng.randrange(len(out))]
    elif kind == "random":
        out = bytearray(rng.randbytes(rng.choice([60, PAGE, len(data)])))
    elif kind == "flip":
        for _ in range(rng.randint(1, 16)):
            out[page * PAGE + rng.randrange(PAGE)] ^= 1 << rng.randrange(8)
    elif kind == "zero":
        out[where] = bytes(PAGE)
    elif kind == "overwrite":
        out[where] = rng.randbytes(PAGE)
    elif kind == "header":
        for _ in range(rng.randint(1, 4)):
            out[rng.randrange(100)] = rng.randrange(256)
    elif kind == "schema":
        for _ in range(rng.randint(1, 8)):
            out[100 + rng.randrange(PAGE - 100)] = rng.randrange(256)
    else:  # one page written over another (a misdirected write)
        other = rng.randrange(len(data) // PAGE)
        out[where] = data[other * PAGE : (other + 1) * PAGE]
    return kind, bytes(out)


def test_damaged_databases_never_raise_and_never_cost_another_run(tmp_path: Path) -> None:
    intact = points_of(load([str(DATABASE.parent)]).store)["huggingface/dainty-sunset-0"]
    events = points_of(load([str(EVENTS)]).store)
    ((events_run, events_points),) = events.items()
    event_file = next(EVENTS.glob("runs/*/events.out.tfevents.*"))
    data = DATABASE.read_bytes()
    rng = random.Random(SEED)
    failures, kinds, said, reports = [], set(), 0, set()
    for number in range(CASES):
        kind, content = damaged(data, rng)
        kinds.add(kind)
        case = tmp_path / f"case{number}"
        (case / "a" / "trackio").mkdir(parents=True)  # the damaged run in a/, an intact one in b/
        database = case / "a" / "trackio" / "huggingface.db"
        database.write_bytes(content)
        events_dir = case / "b" / event_file.parent.relative_to(EVENTS)
        events_dir.mkdir(parents=True)
        os.link(event_file, events_dir / event_file.name)
        try:
            result = load([str(case)])
        except Exception as error:  # noqa: BLE001 - what the test is about
            failures.append(f"case {number} ({kind}): raised {type(error).__name__}: {error}")
            continue
        got = points_of(result.store)
        if got.get(f"b/{events_run}") != events_points:
            failures.append(f"case {number} ({kind}): the TensorBoard run lost points")
        trackio = set().union(*(points for name, points in got.items() if name.startswith("a/")))
        named = [line for line in result.problems if str(database) in line]
        if len(named) != len(result.problems):
            failures.append(f"case {number} ({kind}): a problem that names no file: {result.problems}")
        if kind in REMOVING and not trackio <= intact:
            failures.append(f"case {number} ({kind}): points that were never logged")
        if kind in REMOVING | {"copy"} and len(trackio) < len(intact) and not named:
            failures.append(f"case {number} ({kind}): {len(intact) - len(trackio)} points lost silently")
        said += bool(named)
        reports.update(report for line in named for report in REPORTS if report in line)
    assert not failures, "\n".join(failures[:10])
    assert len(kinds) == 8 and said > CASES // 4  # every kind drawn; damage was found and said
    assert reports == set(REPORTS)  # every way of saying what is wrong was needed


NOON = "2026-12-01T12:00:00+00:00"


def odd_database(path: Path, rows: list[tuple]) -> None:
    """A trackio database whose columns accept anything (no NOT NULL, no types): trackio's
    columns, and ``rows`` of (run_id, timestamp, step, metrics) under run name ``odd-run``."""
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id, timestamp, run_name, step,"
        " metrics)"
    )
    connection.execute(
        "CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id, run_name, config)"
    )
    connection.executemany(
        "INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, 'odd-run', ?, ?)",
        rows,
    )
    connection.commit()
    connection.close()


def row(step, values: dict | None = None, *, text: object = None, timestamp: object = NOON,
        column_step: object = 0, run: object = "r1") -> tuple:  # fmt: skip
    """One metrics row: ``values`` with ``train/global_step`` = ``step`` as JSON, or a raw ``text``."""
    if text is None:
        logged = dict(values or {"train/loss": 0.5})
        if step is not None:
            logged["train/global_step"] = step
        text = json.dumps(logged)
    return (run, timestamp, column_step, text)


ODD_ROWS = [
    row(1, {"train/loss": 1.0, "_private": 3.0, "train/ok": True}),
    row(1e300, {"train/loss": 1.0, "train/kl": 0.1}),  # a float step beyond int64: 2 points
    row(None, text='{"train/loss": 1.0, "train/global_step": ' + str(2**70) + "}"),
    row(None, text='{"train/loss": 1.0, "train/global_step": -' + str(2**70) + "}"),
    row(None, text='{"train/loss": 1.0, "train/global_step": NaN}'),
    row(None, text='{"train/loss": 1.0, "train/global_step": Infinity}'),
    row("7"),  # a step that is a string
    row(None, column_step=None),  # no global_step and a NULL step column
    row(2, text='{"train/loss": 1' + "0" * 400 + ', "train/kl": 0.25, "train/global_step": 2}'),
    row(3, text='{"train/loss": 1e400, "train/global_step": 3}'),  # JSON's overflow is infinity: a point
    row(4, timestamp=None),  # an unreadable time: the point is kept, at wall time 0
    row(5, timestamp="0000-00-00 garbage"),
    row(6, timestamp="0001-01-01T00:00:00"),
    *[row(None, text=text) for text in ("[1, 2]", '"text"', "5", "null", "{not json", "[" * 100_000)],
    row(None, text=b'{"train/loss": \xff}'),  # not UTF-8
    (None, "2026-12-01T12:00:00+00:00", 0, None),  # a NULL metrics cell (and no run id: no run at all)
    ("r1", "2026-12-01T12:00:00+00:00", 0, None),
    ("r1", "2026-12-01T12:00:00+00:00", 0, 12),  # a number where the JSON should be
    row(8, {"train/loss": 8.0}),
]


def test_odd_values_are_skipped_counted_and_said_once(tmp_path: Path, monkeypatch) -> None:
    import rltop.ingest.sources.trackio.reader as reader_module

    monkeypatch.setattr(reader_module, "BATCH_ROWS", 4)  # the counts cross several windows
    database = tmp_path / "odd.db"
    odd_database(database, ODD_ROWS)
    result = load([str(tmp_path)])
    run = result.store.runs["odd/odd-run"]
    loss = run.series["train/loss"]
    assert loss.steps.tolist() == [1, 3, 4, 5, 6, 8]
    assert loss.values.tolist() == [1.0, float("inf"), 0.5, 0.5, 0.5, 8.0]
    assert run.series["train/kl"].steps.tolist() == [2]  # its row's huge integer alone was skipped
    assert set(run.series) == {"train/loss", "train/kl"}  # no _private, no bool, no global_step
    member = f"{database}::r1"
    assert sorted(result.problems) == sorted([
        f"{member}: 6 points skipped: step out of range",  # 1e300 (2 points), 2**70, -2**70, NaN, Infinity
        f"{member}: 2 points skipped: step not a number",  # "7", NULL
        f"{member}: 1 point skipped: value too large for a float",
        f"{member}: 9 rows skipped: metrics not a JSON object",  # [1, 2], "text", 5, null, {not json,
        # [[[…, not UTF-8, NULL, 12
    ])  # fmt: skip


def test_odd_rows_arriving_later_are_said_once_and_new_reasons_too(tmp_path: Path) -> None:
    database = tmp_path / "odd.db"
    odd_database(database, [row(1), row(1e300)])
    ((member, _),) = list_runs(str(database))
    reader = TrackioRunReader(member)
    assert reader.read().problems == [f"{member}: 1 point skipped: step out of range"]
    connection = sqlite3.connect(database)
    connection.executemany(
        "INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, 'odd-run', ?, ?)",
        [row(2e300), row(None, text="null"), row(2)],
    )
    connection.commit()
    connection.close()
    later = reader.read()
    assert later.problems == [f"{member}: 1 row skipped: {NOT_OBJECT}"]  # new; the old one is not said again
    assert later.decoded.scalars["train/loss"].steps.tolist() == [2]


def test_runs_named_with_slashes_colons_and_undecodable_bytes(tmp_path: Path) -> None:
    """Databases from before run ids tell runs by name: any name is a member path that finds its
    database again, and its rows."""
    database = tmp_path / "old.db"
    connection = sqlite3.connect(database)
    connection.execute(
        "CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, "
        "run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL)"
    )
    names = ["exp/a::b", "50%2F", b"caf\xe9".decode("utf-8", "surrogateescape")]
    for step, name in enumerate(names, 1):
        connection.execute(
            "INSERT INTO metrics (timestamp, run_name, step, metrics) VALUES (?, CAST(? AS TEXT), ?, ?)",
            (
                "2025-01-01T00:00:01",
                name.encode("utf-8", "surrogateescape"),
                step,
                json.dumps({"loss": step}),
            ),
        )
    connection.commit()
    connection.close()
    store = load([str(tmp_path)]).store
    assert sorted(store.runs) == ["old/50%2F", "old/caf\\xe9", "old/exp_a::b"]
    assert [store.runs[name].series["loss"].steps.tolist() for name in sorted(store.runs)] == [[2], [3], [1]]


def test_a_corrupt_schema_is_named_and_the_other_runs_load(tmp_path: Path) -> None:
    """The schema's text is not UTF-8: SQLite's error quotes it (it used to abort the whole load
    with a bare 'utf-8' codec error)."""
    (tmp_path / "a").mkdir()
    database = tmp_path / "a" / "huggingface.db"
    shutil.copy(DATABASE, database)
    connection = sqlite3.connect(database)
    connection.execute("PRAGMA writable_schema = ON")
    connection.execute(
        "UPDATE sqlite_master SET name = CAST(X'616cff' AS TEXT),"
        " sql = CAST(X'435245415445205441424c4520ff2878' AS TEXT) WHERE name = 'alerts'"
    )
    connection.commit()
    connection.close()
    shutil.copytree(EVENTS, tmp_path / "b")
    result = load([str(tmp_path)])
    assert [name for name in result.store.runs] == ["b/runs/Nov29_21-46-54_vm"]
    assert result.problems == [
        f"{database}: damaged SQLite database (malformed database schema (al\\xff)); its runs are not read"
    ]


LOCKER = r"""
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive-wal":  # WAL in exclusive locking mode (trackio on Spaces)
    connection.execute("PRAGMA locking_mode = EXCLUSIVE")
    connection.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) SELECT run_id,"
                       " timestamp, run_name, step, metrics FROM metrics LIMIT 1")
else:  # a rollback-journal writer in the middle of writing the file
    connection.execute("PRAGMA journal_mode = DELETE")
    connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
"""


@pytest.mark.parametrize("how", ["rollback", "exclusive-wal"])
def test_a_locked_database_is_said_locked_and_read_once_released(tmp_path: Path, how: str) -> None:
    (tmp_path / "a").mkdir()
    database = tmp_path / "a" / "huggingface.db"
    shutil.copy(DATABASE, database)
    shutil.copytree(EVENTS, tmp_path / "b")
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(database), how], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert locker.stdout.readline() == "locked\n"
        result = load([str(tmp_path)])
        assert list(result.store.runs) == ["b/runs/Nov29_21-46-54_vm"]
        (line,) = result.problems
        assert line == f"{database}: locked by its writer; its runs are not read"
        assert str(database.resolve()) in sqlite_readonly._locked  # the next reads wait WAIT_AGAIN only
        locker.communicate("done\n", timeout=60)
    finally:
        end_all(locker)
    released = load([str(tmp_path)])
    assert sorted(released.store.runs) == ["a/huggingface/dainty-sunset-0", "b/runs/Nov29_21-46-54_vm"]
    assert released.problems == [] and str(database.resolve()) not in sqlite_readonly._locked


def test_a_run_whose_database_gets_locked_says_so_and_reads_on_once_released(tmp_path: Path) -> None:
    database = tmp_path / "huggingface.db"
    shutil.copy(DATABASE, database)
    ((member, _),) = list_runs(str(database))
    reader = TrackioRunReader(member)
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(database), "exclusive-wal"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert locker.stdout.readline() == "locked\n"
        locked = reader.read()
        assert locked.problems == [f"{database}: locked by its writer; its rows could not be read now"]
        assert locked.decoded.scalars == {}
        assert list_runs(str(database)) == [(member, f"{tmp_path}/huggingface/dainty-sunset-0")]  # kept
        locker.communicate("done\n", timeout=60)
    finally:
        end_all(locker)
    released = reader.read()
    assert released.problems == [] and len(released.decoded.scalars["train/loss"]) == 20
    generate = "profiling/Time taken: GRPOTrainer.transformers.generate"  # the locker's row: its first again
    assert len(released.decoded.scalars[generate]) == 1 + len(TrackioRunReader(
        member.replace(str(database), str(DATABASE))).read().decoded.scalars[generate])  # fmt: skip


def crashed_writer(folder: Path, journal: str) -> Path:
    """A database whose writer was killed while its last rows were in the ``-wal`` (``journal``
    "wal": the ``-shm`` then removed, as after a reboot) or in the middle of a rollback-journal
    write ("rollback": a hot journal, the file half written)."""
    database = folder / "huggingface.db"
    shutil.copy(DATABASE, database)
    code = r"""
import json, os, sqlite3, sys
INSERT = "INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)"
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA journal_mode = " + ("WAL" if sys.argv[2] == "wal" else "DELETE"))
connection.execute("PRAGMA cache_size = 1")  # a large write spills into the file before it commits
connection.execute("BEGIN")
for step in range(21, 21 + int(sys.argv[3])):
    connection.execute(INSERT, (sys.argv[4], "2026-12-01T13:00:00+00:00", "dainty-sunset-0", step,
                                json.dumps({"train/loss": step, "train/global_step": step})))
if sys.argv[2] == "wal":
    connection.execute("COMMIT")
os._exit(0)  # killed: no checkpoint, no clean-up
"""
    rows = "5" if journal == "wal" else "3000"
    subprocess.run([sys.executable, "-c", code, str(database), journal, rows, RUN_ID], check=True)
    if journal == "wal":
        (folder / "huggingface.db-shm").unlink()
        an_hour_ago = time.time() - 3600
        os.utime(folder / "huggingface.db-wal", (an_hour_ago, an_hour_ago))
    return database


@pytest.mark.parametrize("journal", ["wal", "rollback"])
def test_a_crashed_writers_leftovers_are_read_from_a_private_copy(tmp_path: Path, journal: str) -> None:
    database = crashed_writer(tmp_path, journal)
    before = tree_state(tmp_path)
    ((member, _),) = list_runs(str(database))
    result = TrackioRunReader(member).read()
    steps = result.decoded.scalars["train/loss"].steps.tolist()
    # The committed rows in the -wal are read; the half-written transaction is rolled back.
    assert steps == (list(range(1, 26)) if journal == "wal" else list(range(1, 21)))
    assert result.problems == []
    assert tree_state(tmp_path) == before  # the -wal, the journal: untouched, nothing created
    copies = [folder for _, folder in sqlite_readonly._copies.values()]
    assert copies and all(Path(folder).exists() for folder in copies)
    sqlite_readonly._forget_copies()
    assert not any(Path(folder).exists() for folder in copies)


WAL_WRITER = r"""
import json, sqlite3, sys
INSERT = "INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)"
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA journal_mode = WAL")
for line in sys.stdin:
    step = int(line)
    connection.execute(INSERT, (sys.argv[2], "2026-12-01T13:00:00+00:00", "dainty-sunset-0", step,
                                json.dumps({"train/loss": step, "train/global_step": step})))
    print("committed", step, flush=True)
"""


def test_a_connected_writers_wal_is_read_without_touching_its_files(tmp_path: Path) -> None:
    """The writer keeps its connection open (its rows are in the -wal, its index in the -shm):
    reads as root, who could write the -shm, leave both files as they were."""
    database = tmp_path / "huggingface.db"
    shutil.copy(DATABASE, database)
    ((member, _),) = list_runs(str(database))
    reader = TrackioRunReader(member)
    assert len(reader.read().decoded.scalars["train/loss"]) == 20
    writer = subprocess.Popen([sys.executable, "-c", WAL_WRITER, str(database), RUN_ID],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        for step in (21, 22):
            writer.stdin.write(f"{step}\n")
            writer.stdin.flush()
            assert writer.stdout.readline() == f"committed {step}\n"
            sidecars = {
                name: (tmp_path / name).read_bytes() for name in ("huggingface.db-wal", "huggingface.db-shm")
            }
            read = reader.read()
            assert read.decoded.scalars["train/loss"].steps.tolist() == [step] and read.problems == []
            assert {name: (tmp_path / name).read_bytes() for name in sidecars} == sidecars
    finally:
        writer.stdin.close()
        end_all(writer)


def test_an_empty_database_beside_a_wal_is_left_alone(tmp_path: Path) -> None:
    """A database file of 0 bytes (a writer creating it): SQLite's read-only open would delete its -wal."""
    (tmp_path / "new.db").write_bytes(b"")
    (tmp_path / "new.db-wal").write_bytes(b"\x37\x7f\x06\x82" + bytes(60))
    before = tree_state(tmp_path)
    found = load([str(tmp_path)])
    assert found.store.runs == {} and found.problems == []
    assert tree_state(tmp_path) == before


def test_files_that_are_not_sqlite_are_named(tmp_path: Path) -> None:
    (tmp_path / "garbage.db").write_bytes(b"not sqlite" * 100)
    (tmp_path / "starting.db").write_bytes(b"SQLite for")  # a database being created: nothing to say yet
    assert load([str(tmp_path)]).problems == [
        f"{tmp_path / 'garbage.db'}: not an SQLite database (no SQLite header); skipped"
    ]


def test_member_paths_find_their_database() -> None:
    assert storage.container("/t/old.db::exp%2Fa%3A%3Ab") == "/t/old.db"
