"""Unfinished records under a live reader: a huge text summary landing in pieces, and a lying header.

    python benchmarks/bench_pending.py                       # 100 MB summary, 64 MB after a lying header
    python benchmarks/bench_pending.py --mb 500
    python benchmarks/bench_pending.py --compare /path/to/other/checkout   # the same cases, side by side

Each case runs in a fresh interpreter (CPU = its process time, RSS = its peak resident set, VmHWM):

* **summary**: a text summary of ``--mb`` MB is appended 4 MB at a time; after each piece the reader
  reads until it has nothing more to do (as the watcher does on every poll). A reader that copies and
  re-scans its pending bytes on every window is quadratic here; rltop reads the record once it is
  complete and looks only at new bytes meanwhile.
* **lying header**: a header whose length CRC is valid claims 1 GB; then ``--after-mb`` MB of
  scalar records are appended 4 KB at a time (a torn write, then a writer that went on).
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

# The bytes are made in the parent (making a 100 MB record costs more memory than reading it); the
# child appends them from a source file piece by piece and reads, as a live reader does.
CASE = r"""
import json, os, sys, time
from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader

source, path, piece = sys.argv[1], sys.argv[2], int(sys.argv[3])
reader = EventFileReader(path)
start = time.process_time()
points = texts = 0
with open(source, "rb") as feed:
    while chunk := feed.read(piece):
        with open(path, "ab") as handle:
            handle.write(chunk)
        while True:
            result = reader.read()
            points += sum(p.steps.size for p in result.decoded.scalars.values())
            texts += len(result.decoded.texts)
            if not result.more:
                break
cpu = time.process_time() - start
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across exec.
rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
print(json.dumps({"cpu": cpu, "rss_mb": rss, "points": points, "texts": texts}))
"""


def make_source(kind: str, mb: float, folder: str) -> tuple[str, int, int]:
    """(path of the bytes to append, piece size, total bytes) of one case."""
    from rltop.ingest.sources.tfevents.tfrecord.crc import masked_crc32c, masked_crc32c_rows
    from rltop.ingest.sources.tfevents.tfrecord.writer import (
        encode_event,
        frame_record,
        scalar_value,
        text_value,
    )

    def header(length: int) -> bytes:
        raw = struct.pack("<Q", length)
        return raw + struct.pack("<I", masked_crc32c(raw))

    if kind == "summary":
        payload = encode_event(1.7e9, 1, text_value("args/text_summary", "x" * int(mb * 2**20)))
        raw = np.frombuffer(payload, np.uint8)
        crc = int(masked_crc32c_rows(raw, np.array([0]), np.array([len(payload)]))[0])
        data, piece = header(len(payload)) + payload + struct.pack("<I", crc), 4 << 20
    else:
        one = b"".join(
            frame_record(encode_event(1.7e9 + s, s, scalar_value("train/loss", s))) for s in range(1, 101)
        )
        data, piece = header(1 << 30) + one * int(mb * 2**20 / len(one)), 4096
    source = os.path.join(folder, "source.bin")
    Path(source).write_bytes(data)
    return source, piece, len(data)


def run(kind: str, mb: float, pythonpath: Path) -> dict:
    """One case in a fresh interpreter, rltop imported from ``pythonpath``."""
    from rltop.ingest.sources.tfevents.tfrecord.writer import encode_event, frame_record

    with tempfile.TemporaryDirectory() as folder:
        source, piece, total = make_source(kind, mb, folder)
        target = os.path.join(folder, "events.out.tfevents.1.host")
        Path(target).write_bytes(frame_record(encode_event(1.7e9, 0, file_version="brain.Event:2")))
        done = subprocess.run(
            [sys.executable, "-c", CASE, source, target, str(piece)], capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(pythonpath)}, cwd=folder,
        )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "mb": total / 2**20}


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=100, help="size of the text summary (default 100)")
    parser.add_argument("--after-mb", type=float, default=64, help="scalars after the lying header")
    parser.add_argument("--compare", type=Path, help="another checkout to run side by side")
    args = parser.parse_args()
    readers = {"rltop": ROOT}
    if args.compare is not None:
        readers["compare"] = args.compare
    print(
        f"{'case':<16}{'reader':<10}{'file MB':>9}{'CPU s':>8}{'peak RSS MB':>13}{'points':>10}{'texts':>7}"
    )
    for kind, mb in (("summary", args.mb), ("lying header", args.after_mb)):
        for name, where in readers.items():
            r = run(kind, mb, where)
            print(
                f"{kind:<16}{name:<10}{r['mb']:>9.0f}{r['cpu']:>8.2f}{r['rss_mb']:>13.0f}"
                f"{r['points']:>10,}{r['texts']:>7}"
            )


if __name__ == "__main__":
    main()
