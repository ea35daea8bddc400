"""The vectorised tier of the event-file reader, behind one switch; ignore it unless you work on speed.

The plain reader is the reference: frames are walked one by one (`tfrecord.frames`)
and every payload goes through the general wire decoder (`tfrecord.wire`, merged in
file order by `tfrecord.records`). This package reads the same points, bit for bit,
column-wise with numpy; the tests read every fixture both ways (``tests/e2e/test_reader_tiers.py``).

It serves the full-load goals of ``docs/internals/performance.md`` (a 900k-scalar log at least
100x faster than tbparse, a 6M-scalar log in at most 1.5 CPU-s and 5x faster than TensorBoard's
Rust data server): the plain reader takes 40-60x longer on them.

- `onevalue`: one-value scalar records (simple values, torch's and TF2's float tensors) decoded as
  columns, each record's CRC from its layout's template (`tfrecord.crc`);
- `framing`: every record start of a window found at once (`tfrecord.frames` walks
  only where the chain of records breaks);
- `tags`: the exact tag dictionary, remembered from one window of a file to the next (the column
  packs of a file's windows share its tag ids);
- `cycles` and `period`: a logging loop's records repeat one cycle of layouts; one cycle is parsed
  and every other record decoded from its wall time, step and value fields.

``RLTOP_PLAIN_READER=1`` in the environment (read once, at import) turns the tier off; tests and
benchmarks set `ENABLED` instead.
"""

from __future__ import annotations

import os

ENABLED: bool = os.environ.get("RLTOP_PLAIN_READER", "") in ("", "0")
