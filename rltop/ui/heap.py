"""The garbage collector's full passes kept off the live dashboard (issue 28's CPU goal).

Python's cyclic collector makes a full pass whenever the objects that outlived two young passes
have grown by a quarter of the old ones. On the live dashboard (a step a second), a repaint's
views, lines, strips and styles live until the next one, so they all outlive the young passes: a
full pass came about every 50 steps, each scanning every object of the app (Textual's widgets and
styles, the runs, the caches), 40–60 ms of the UI thread: about 1 ms a step, a twentieth of what a
step costs at 100×30.

`settle_heap` runs once, after the first complete picture: one collection, then the objects still
alive go to the collector's permanent generation (`gc.freeze`), which its passes no longer scan;
later passes read only what was made since. The price, bounded and paid once: an object alive at
that moment that later becomes garbage *inside a reference cycle* (the first layout's widgets,
after the layout changes) is not freed; everything made later is collected as before, and
acyclic garbage is freed by reference counting either way.
"""

from __future__ import annotations

import gc
import os

FREEZE_FIRST_PICTURE = os.environ.get("RLTOP_PLAIN_GC", "") != "1"
"""Goal: no full garbage-collector pass over the whole app while a run logs (issue 28's CPU). Off
(``RLTOP_PLAIN_GC=1``, read at import): the collector runs as Python sets it; what is drawn is the
same (tests/app/test_app_heap.py)."""


def settle_heap() -> bool:
    """Collect once, then exempt the surviving objects from later passes; False when switched off."""
    if not FREEZE_FIRST_PICTURE:
        return False
    gc.collect()
    gc.freeze()
    return True
