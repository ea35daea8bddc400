"""Fuzzing the W&B reader: odd values and damaged ``.wandb`` files never raise, never cost another
run's points, lose no intact record, and say each damaged span once.

Two files are damaged: the real TRL GRPO run (tests/fixtures/wandb) and a run the real wandb SDK
writes here, offline, with the odd values a trainer can log: steps of 1e20, 2**63, infinity, NaN,
``True`` and a string (their points are skipped and counted), a negative, a fractional and the
largest int64 step (kept), values of 10**400, NaN and nested dicts, a ``_timestamp`` of 1e30,
config values of 10**400. Every kind of damage that keeps the blocks in place (random bytes, zeros,
bit flips over one or two ranges, the first block's step declarations among them, a cut tail) and
one that shifts them meets each file, each read window (4 KB to 4 MB) and both ways of reading (in
one go, while the file grows); a fixed seed draws where it falls. Every record the
damage left whole must be read, at its training step (train/global_step, even when the `metric`
records declaring it were lost), no value may be invented, a growing read must deliver what a
whole read does, and each damaged span is said in one line. Damage that shifts the bytes
(insertions, deletions) must still never raise and never lose a point before it.

(These 96 covering cases replaced 240 random ones, in 40% of the time: of nine deliberate bugs put in
the W&B log framing and reader, both sets caught the same three, and neither the other six.)
"""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers.snapshot import isolate_user_rules, run_cli
from helpers.wandb_files import RUN_FILE, records_of
from helpers.wandb_live import offline_env

from rltop.ingest.follow.loader import load
from rltop.ingest.sources.wandb import leveldb_log
from rltop.ingest.sources.wandb.kind import record_class
from rltop.ingest.sources.wandb.reader import WandbFileReader
from rltop.ingest.sources.wandb.records import RunRecords

SEED = 20261226
WINDOWS = (4096, 40_000, 1 << 22)
BLOCK = leveldb_log.BLOCK

WRITER = r"""
import json, math, sys
import wandb

root, expected_path = sys.argv[1], sys.argv[2]
config = {"beta": 0.04, "max_steps": 10**400, "seed": 2**70, "learning_rate": 1e-6}
run = wandb.init(project="rltop-odd", mode="offline", dir=root, config=config, id="oddvalues")
run.define_metric("train/global_step")
run.define_metric("*", step_metric="train/global_step", step_sync=True)  # as transformers' WandbCallback
odd_steps = [1e20, float("inf"), float("nan"), True, 2**63, -1e30, "step 7", 9.3e18, 10**30]
expected, skipped = [], 0

def keep(tag, step, value):
    expected.append([tag, step, repr(float(value))])

for i in range(1, 321):
    if i % 10 == 0:  # an odd step: the row's two points are skipped
        odd = odd_steps[i // 10 % len(odd_steps)]
        run.log({"train/loss": 1.0 / i, "train/odd_row": i, "train/global_step": odd})
        skipped += 2
        continue
    row = {"train/loss": 1.0 / i, "train/reward": math.sin(i) * 1000, "train/global_step": i}
    if i % 7 == 0:
        row["train/grad_norm"] = float("nan")
    if i % 13 == 0:  # the SDK writes 10**400 as Infinity; strings, None and lists are no points
        row.update({"train/huge": 10**400, "train/text": "x" * 50, "train/none": None, "train/list": [1, 2],
                    "train/nested": {"a": {"b": i}}})
    if i % 29 == 0:
        row["_timestamp"] = 1e30 if i % 2 else float("nan")  # no date: the previous row's time
    run.log(row)
    for key, value in row.items():
        if key == "train/huge":
            keep(key, i, math.inf)
        elif key == "train/nested":
            keep("train/nested.a.b", i, i)
        elif key.startswith("train/") and key not in ("train/global_step", "train/text", "train/none",
                                                      "train/list"):
            keep(key, i, value)
run.log({"train/negative_step": -1.0, "train/global_step": -5})
keep("train/negative_step", -5, -1.0)
run.log({"train/fraction": 0.5, "train/global_step": 321.5})
keep("train/fraction", 321, 0.5)
run.log({"train/int64_max": 1.0, "train/global_step": 2**63 - 1})
keep("train/int64_max", 2**63 - 1, 1.0)
run.finish()
with open(expected_path, "w") as handle:
    json.dump({"points": expected, "skipped": skipped}, handle)

# A run that declares no step metric (plain wandb.log): its steps are W&B's own row counter.
plain = wandb.init(project="rltop-odd", mode="offline", dir=root, id="plainsteps")
for i in range(60):
    plain.log({"train/loss": 1.0 / (i + 1)})
plain.finish()
"""


@dataclass
class Written:
    odd: Path  # the odd-values run file
    plain: Path  # the run without step declarations
    expected: set[tuple[str, int, str]]  # (tag, step, repr(value)) of every point of the odd run
    skipped: int


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Written:
    root = tmp_path_factory.mktemp("sdk")
    expected_path = root / "expected.json"
    command = [sys.executable, "-c", WRITER, str(root / "logs"), str(expected_path)]
    done = subprocess.run(
        command, env=offline_env(root), cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    (odd,) = (root / "logs" / "wandb").glob("offline-run-*-oddvalues/run-oddvalues.wandb")
    (plain,) = (root / "logs" / "wandb").glob("offline-run-*-plainsteps/run-plainsteps.wandb")
    document = json.loads(expected_path.read_text())
    expected = {(tag, step, value) for tag, step, value in document["points"]}
    return Written(odd, plain, expected, document["skipped"])


def read_all(path: Path, window: int = 1 << 22) -> tuple[list[tuple[str, int, str]], list[str]]:
    """Every point of a file read to its end (in windows), and every problem said, the end's too."""
    reader = WandbFileReader(str(path), window=window)
    got: list[tuple[str, int, str]] = []
    problems: list[str] = []
    read_to_end(reader, got, problems)
    tail = reader.unfinished()
    return got, problems + ([tail] if tail else [])


def read_to_end(reader: WandbFileReader, got: list, problems: list[str]) -> None:
    """Read until the reader has taken in the whole file, collecting the points and problems."""
    for _ in range(10_000):
        result = reader.read()
        got.extend(_each(result.decoded))
        problems.extend(result.problems)
        if not result.more:
            return
    raise AssertionError("the reader does not reach the end of the file")


def _each(decoded) -> list[tuple[str, int, str]]:
    return [
        (tag, int(s), repr(float(v))) for tag, p in decoded.scalars.items() for s, v in zip(p.steps, p.values)
    ]


# -- odd values ------------------------------------------------------------------------------------


def test_odd_values_written_by_the_sdk_are_read_or_counted(written: Written) -> None:
    for window in WINDOWS:
        got, problems = read_all(written.odd, window)
        assert len(got) == len(set(got))
        assert set(got) - {p for p in got if p[0].startswith("train/train_")} == written.expected, window
        (line,) = problems  # everything odd in one line, with the file and the counts
        assert line.startswith(f"{written.odd}: {written.skipped} points skipped (")
        assert (
            "at a step outside the 64-bit range" in line and "not finite" in line and "not a number" in line
        )
        assert "1 point at a fractional step placed at the whole step below" in line
        assert "rows with a _timestamp that is no date" in line
        assert "config values left out: max_steps (an integer beyond 64 bits), seed (an integer" in line


def test_values_the_sdk_cannot_write_never_raise() -> None:
    # A JSON text the SDK's own encoder would not produce (it recurses): nesting 100,000 deep,
    # a 5,000-digit integer, an overflowing float literal; as values, steps and config.
    Record = record_class()
    texts = ["[" * 100_000 + "]" * 100_000, "9" * 5000, "-" + "9" * 400, "1e999",
             '{"a": ' * 3000 + "1" + "}" * 3000, "true", "null", '"12"', "", "NaN", "-Infinity",
             "12.000000001", "-0"]  # fmt: skip
    decoder = RunRecords()
    losses: list[int] = []
    for number, text in enumerate(texts):
        config = Record()
        item = config.config.update.add()
        item.key, item.value_json = f"setting_{number}", text
        decoder.take(config)
        metric = Record()
        metric.metric.glob_name, metric.metric.step_metric = "*", "train/global_step"
        decoder.take(metric)
        row = Record()
        for key, value in (("train/global_step", text), ("train/value", text), ("train/loss", "1.5"),
                           ("_timestamp", text), ("_step", str(number))):  # fmt: skip
            part = row.history.item.add()
            part.nested_key.append(key)
            part.value_json = value
        decoder.take(row)
        loss = decoder.drain().scalars.get("train/loss")
        losses.extend([] if loss is None else loss.steps.tolist())
    # Only the fractional step (placed at 12) and "-0" are steps; null takes the last value (odd).
    assert losses == [12, 0] and decoder.skipped["at a step outside the 64-bit range"] >= 6
    assert decoder.odd_values() is not None
    assert {"setting_0", "setting_1"} <= set(decoder.odd_config)
    assert "setting_2" in decoder.odd_config and decoder.config["setting_3"] == math.inf


def test_an_odd_run_never_costs_another_run_its_points(
    written: Written, tmp_path, capsys, monkeypatch
) -> None:
    isolate_user_rules(monkeypatch, tmp_path)
    tree = tmp_path / "tree"
    shutil.copytree(written.odd.parent, tree / "a" / "wandb" / written.odd.parent.name)
    shutil.copytree(RUN_FILE.parent, tree / "b" / "wandb" / RUN_FILE.parent.name)
    clean = {
        tag: series.steps.tolist()
        for tag, series in load([str(RUN_FILE)]).store.runs["run-ntz0o0gs"].series.items()
    }
    code, out, err = run_cli(capsys, "export", str(tree))
    assert code == 0, err
    assert "Traceback" not in err and err.count("points skipped") == 1, err
    rows = [line.split(",") for line in out.splitlines()[1:]]
    exported = Counter(row[1] for row in rows if row[0] == "b/wandb/run-ntz0o0gs")
    assert exported == Counter({tag: len(steps) for tag, steps in clean.items()})
    assert any(row[0] == "a/wandb/run-oddvalues" and row[1] == "train/loss" for row in rows)
    code, out, err = run_cli(capsys, "snapshot", str(tree), "--format", "json")
    assert code == 3 and "Traceback" not in err, err  # points were skipped: exit 3 says so
    assert {run["name"] for run in json.loads(out)["runs"]} == {
        "a/wandb/run-oddvalues",
        "b/wandb/run-ntz0o0gs",
    }


# -- damage --------------------------------------------------------------------------------------


@dataclass
class Case:
    kind: str
    edits: list[tuple[int, bytes, bool]] = field(default_factory=list)  # (offset, bytes, XORed in)
    cut: int | None = None  # the file ends here
    shift: tuple[int, int, bytes] | None = None  # (offset, bytes deleted, bytes inserted)
    window: int = 1 << 22
    growing: list[int] = field(default_factory=list)  # sizes the file is read at while it grows


KINDS = ("garbage", "zeros", "bits", "first_block", "two", "cut", "garbage_cut", "shift")


def draw(rng: random.Random, size: int, kind: str, window: int, growing: bool) -> Case:
    """One damage of ``kind``: ranges overwritten in place (blocks keep their place), a cut, or a
    shift; where it falls is drawn. Read in ``window`` bytes, while the file grows if ``growing``."""
    case = Case(kind, window=window)

    def overwrite(start: int, length: int, how: str) -> None:
        length = max(1, min(length, size - start))
        if how == "zeros":
            case.edits.append((start, bytes(length), False))
        elif how == "bits":
            case.edits.append((start, bytes([1 << rng.randrange(8)]), True))
        else:
            case.edits.append((start, rng.randbytes(length), False))

    if kind == "first_block":  # the step declarations live here (the fixture's at byte ~8,000)
        start = rng.randrange(7, 9000)
        overwrite(start, rng.randrange(50, BLOCK), rng.choice(["garbage", "zeros"]))
    elif kind == "two":
        for _ in range(2):
            overwrite(
                rng.randrange(7, size), rng.randrange(1, 3 * BLOCK), rng.choice(["garbage", "zeros", "bits"])
            )
    elif kind in ("garbage", "zeros", "bits"):
        overwrite(rng.randrange(7, size), rng.choice([1, 10, 300, 5000, 40_000, 100_000]), kind)
    if kind in ("cut", "garbage_cut"):
        case.cut = rng.randrange(size // 3, size)
        if kind == "garbage_cut":
            overwrite(rng.randrange(7, case.cut), rng.randrange(1, 2000), "garbage")
    if kind == "shift":
        case.shift = (rng.randrange(7, size), rng.randrange(0, 500), rng.randbytes(rng.randrange(0, 300)))
    if growing:  # read while it grows, a few KB to a block or two at a time
        final = case.cut or size
        at = 0
        while at < final:
            at = min(final, at + rng.randrange(1, 3 * BLOCK))
            case.growing.append(at)
    return case


def damage(data: bytes, case: Case) -> bytes:
    damaged = bytearray(data)
    for start, written, xor in case.edits:
        if xor:
            damaged[start] ^= written[0]
        else:
            damaged[start : start + len(written)] = written
    if case.shift is not None:
        at, deleted, inserted = case.shift
        damaged[at : at + deleted] = inserted
    return bytes(damaged[: case.cut] if case.cut is not None else damaged)


def damaged_ranges(case: Case, size: int) -> list[tuple[int, int]]:
    spans = [(start, start + len(written)) for start, written, _ in case.edits]
    if case.cut is not None:
        spans.append((case.cut, size))
    return spans


def intact_points(data: bytes, case: Case) -> set[tuple[str, int, str]]:
    """The history points of every record no damage touched, at their training steps."""
    Record = record_class()
    hit = damaged_ranges(case, len(data))
    decoder = RunRecords(step_metrics={"*": "train/global_step"})
    for offset, end, payload in records_of(data):
        if any(start < end and offset < stop for start, stop in hit):
            continue
        message = Record()
        message.ParseFromString(payload)
        if message.WhichOneof("record_type") == "history":
            decoder.take(message)
    return set(_each(decoder.drain()))


def read_case(path: Path, damaged: bytes, case: Case) -> tuple[list, list[str]]:
    """The points and problems of the damaged file, read whole or while it grows."""
    if not case.growing:
        path.write_bytes(damaged)
        return read_all(path, case.window)
    path.write_bytes(b"")
    reader = WandbFileReader(str(path), window=case.window)
    got: list = []
    problems: list[str] = []
    written = 0
    sizes = {min(size, len(damaged)) for size in case.growing} | {len(damaged)}  # a shift moved the end
    for size in sorted(sizes):
        with path.open("ab") as handle:
            handle.write(damaged[written:size])
        written = size
        read_to_end(reader, got, problems)
    tail = reader.unfinished()
    return got, problems + ([tail] if tail else [])


def series_of(run) -> dict[str, tuple[list, list]]:
    return {tag: (series.steps.tolist(), series.values.tolist()) for tag, series in run.series.items()}


def beside_an_intact_run(tree: Path, damaged: bytes, clean: dict) -> list[str]:
    """Load a tree of the damaged file and an intact copy of the fixture: what went wrong."""
    _write(tree / "a" / "wandb" / "offline-run-20261226_000000-damaged" / "run-damaged.wandb", damaged)
    shutil.copytree(RUN_FILE.parent, tree / "b" / "wandb" / RUN_FILE.parent.name)
    result = load([str(tree)])
    assert set(result.store.runs) == {"a/wandb/run-damaged", "b/wandb/run-ntz0o0gs"}
    if series_of(result.store.runs["b/wandb/run-ntz0o0gs"]) != clean:
        return ["the intact run beside it lost points"]
    if any("run-ntz0o0gs" in problem for problem in result.problems):
        return [f"the intact run was blamed: {result.problems}"]
    return []


def test_damaged_wandb_files_lose_no_intact_record(written: Written, tmp_path) -> None:
    files = {"grpo": RUN_FILE.read_bytes(), "odd": written.odd.read_bytes()}
    clean_values = {name: {(tag, value) for tag, _, value in read_all(Path(path))[0]}
                    for name, path in (("grpo", RUN_FILE), ("odd", written.odd))}  # fmt: skip
    clean_counts = {
        name: Counter(read_all(Path(path))[0]) for name, path in (("grpo", RUN_FILE), ("odd", written.odd))
    }
    clean_series = series_of(load([str(RUN_FILE)]).store.runs["run-ntz0o0gs"])
    rng = random.Random(SEED)
    path = tmp_path / "run-fuzz.wandb"
    # Each file x kind of damage x window x whole/growing once: 2 x 8 x 3 x 2 = 96 cases.
    plan = [(name, kind, window, growing) for name in sorted(files) for kind in KINDS for window in WINDOWS
            for growing in (False, True)]  # fmt: skip
    kinds: Counter = Counter()
    failures: list[str] = []
    lines = intact_total = 0
    for number, (name, kind, window, growing) in enumerate(plan):
        data = files[name]
        case = draw(rng, len(data), kind, window, growing)
        kinds[case.kind] += 1
        damaged = damage(data, case)
        got, problems = read_case(path, damaged, case)
        errors = []
        if not {(tag, value) for tag, _, value in got} <= clean_values[name]:
            errors.append("a value no row logged")
        spans = [p for p in problems if "corrupt data" in p or "header" in p]
        if case.shift is None:
            intact = intact_points(data, case)
            intact_total += len(intact)
            missing = intact - set(got)
            if missing:
                errors.append(f"{len(missing)} intact points lost, e.g. {sorted(missing)[:3]}")
            # One line per damaged span (an edit makes at most one), the steps note, the odd values.
            if len(spans) > len(case.edits) + (case.cut is not None) or len(problems) > len(spans) + 3:
                errors.append(f"{len(problems)} lines for {len(case.edits)} damaged ranges: {problems}")
        else:
            before = intact_points(data, Case("cut", cut=case.shift[0]))
            if not before <= set(got):
                errors.append("points before the shift lost")
            if len(spans) > 2 + (len(data) - case.shift[0]) // BLOCK * 2:  # at most one per block after it
                errors.append(f"{len(spans)} damage lines")
        if case.growing:
            whole, _ = read_all(_write(tmp_path / "run-whole.wandb", damaged))
            if Counter(got) != Counter(whole):
                extra, lost = sorted(Counter(got) - Counter(whole)), sorted(Counter(whole) - Counter(got))
                errors.append(f"a growing read differs from a whole read: {extra[:3]} {lost[:3]}")
        elif Counter(got) - clean_counts[name] - Counter(set(got)):
            errors.append("a point delivered twice")
        if number % 8 == 0:  # in a tree beside an intact run: that run loads completely
            errors.extend(beside_an_intact_run(tmp_path / f"tree{number}", damaged, clean_series))
        lines += len(problems)
        if errors:
            edits = [(a, len(b)) for a, b, _ in case.edits]
            failures.append(f"case {number}: {name} {case.kind} edits {edits} "
                            f"cut {case.cut} shift {case.shift and case.shift[:2]} window {case.window} "
                            f"{'growing' if case.growing else 'whole'}: {errors}")  # fmt: skip
    assert not failures, "\n".join(failures[:8])
    assert set(kinds) == set(KINDS)
    assert intact_total > len(plan) * 100 and lines > 0


def test_first_block_damage_keeps_the_training_steps(written: Written, tmp_path) -> None:
    data = RUN_FILE.read_bytes()
    clean = _each_file(RUN_FILE)
    records = records_of(data)
    Record = record_class()
    declared = []
    for offset, end, payload in records:
        message = Record()
        message.ParseFromString(payload)
        if message.WhichOneof("record_type") == "metric":
            declared.append((offset, end))
    assert declared and declared[-1][1] < BLOCK  # transformers declares train/global_step early
    damaged = bytearray(data)
    damaged[declared[0][0] : declared[-1][1]] = bytes(declared[-1][1] - declared[0][0])
    got, problems = read_all(_write(tmp_path / "run-first.wandb", bytes(damaged)))
    assert sorted(got) == sorted(clean)  # the declarations held no point: every point, at its training step
    assert len(problems) == 2 and "corrupt data at byte" in problems[0]
    assert "train/global_step, which its rows carry, is taken as the step of every key" in problems[1]
    # A run that declares no step (plain wandb.log) cannot tell: it says so, and keeps W&B's _step.
    plain = bytearray(written.plain.read_bytes())
    plain[7:300] = bytes(293)
    got, problems = read_all(_write(tmp_path / "run-plain.wandb", bytes(plain)))
    assert sorted(step for tag, step, _ in got if tag == "train/loss") == list(range(60))
    assert (
        len(problems) == 2
        and "no row carries train/global_step: steps are W&B's row counter _step" in problems[1]
    )


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _each_file(path: Path) -> list[tuple[str, int, str]]:
    return read_all(path)[0]


# -- one line per damaged span --------------------------------------------------------------------


@pytest.mark.parametrize("fill", ["random", "zeros"])
@pytest.mark.parametrize("window", [4096, 1 << 22])
def test_a_file_of_garbage_is_one_damaged_span(tmp_path, fill, window) -> None:
    rng = random.Random(7)
    body = rng.randbytes(3_000_000) if fill == "random" else bytes(10_000_000)
    path = _write(tmp_path / "run-garbage.wandb", leveldb_log.FILE_HEADER + body)
    got, problems = read_all(path, window)
    assert got == []
    assert problems == [
        f"{path}: corrupt data at byte 7 ({len(body)} bytes, to the end of the file); skipped"
    ]


def test_garbage_between_good_records_is_one_span_and_the_records_after_it_are_read(tmp_path) -> None:
    data = RUN_FILE.read_bytes()
    at = 2 * BLOCK
    damaged = data[:at] + random.Random(3).randbytes(40 * BLOCK) + data[at:]  # whole blocks: alignment kept
    for window in (4096, 40_000, 1 << 22):
        got, problems = read_all(_write(tmp_path / "run-middle.wandb", damaged), window)
        assert len(problems) == 1 and "corrupt data at byte" in problems[0], problems
        first_hit = next(offset for offset, end, _ in records_of(data) if end > at)
        after = [r for r in records_of(data) if r[0] >= at]
        assert intact_points(data, Case("cut", cut=first_hit)) <= set(got)
        Record = record_class()
        decoder = RunRecords(step_metrics={"*": "train/global_step"})
        for _, _, payload in after:
            message = Record()
            message.ParseFromString(payload)
            if message.WhichOneof("record_type") == "history":
                decoder.take(message)
        assert set(_each(decoder.drain())) <= set(got)


def test_garbage_appended_while_watched_is_said_once(tmp_path) -> None:
    path = _write(tmp_path / "run-growing.wandb", RUN_FILE.read_bytes())
    reader = WandbFileReader(str(path))
    problems = list(reader.read().problems)
    rng = random.Random(11)
    for _ in range(120):  # a writer gone wrong: 120 appends of garbage, read after each
        with path.open("ab") as handle:
            handle.write(rng.randbytes(rng.randrange(1, 3 * BLOCK)))
        read_to_end(reader, [], problems)
    assert (
        len(problems) == 1
        and "corrupt data at byte" in problems[0]
        and "to the end of the file" in problems[0]
    )
    assert reader.unfinished() is None  # said already


@pytest.mark.parametrize("head", ["zeros", "random"])
def test_a_damaged_start_is_named_and_the_records_after_it_are_read(tmp_path, head) -> None:
    data = bytearray(RUN_FILE.read_bytes())
    data[:300] = bytes(300) if head == "zeros" else random.Random(5).randbytes(300)
    got, problems = read_all(_write(tmp_path / "run-head.wandb", bytes(data)))
    assert problems[0].startswith(f"{tmp_path / 'run-head.wandb'}: corrupt data at byte 0 (")
    assert "the W&B file header included" in problems[0] and len(problems) <= 2
    assert len(got) > 400  # the run's records after the damage: every trainer step


@pytest.mark.parametrize("size", [7, 70_000])
def test_a_file_of_zeros_is_named_not_empty_silently(tmp_path, size) -> None:
    path = _write(tmp_path / "run-zeros.wandb", bytes(size))
    got, problems = read_all(path)
    assert got == [] and len(problems) == 1
    assert "no W&B header and no valid record" in problems[0] and "zeros" in problems[0]
