"""Native events: what wakes the watcher (and what must not), and network file system detection."""

from __future__ import annotations

import errno
from pathlib import Path

import helpers.watcher as test_watcher
import pytest
from helpers.watcher import EventLog, start_watcher, wait_for

from rltop.ingest.follow.fstype import filesystem_type, network_filesystem, parse_mountinfo
from rltop.ingest.follow.native import ChangeSignal, _Handler, failure_reason
from rltop.ingest.follow.run_tracker import RunTracker

# watchdog warns about a harmless race when nested directories appear at once (rltop filters it
# out of its own output; pytest resets warning filters per test).
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
stop_all = test_watcher.stop_all  # the fixture: stops watchers, checks for leftover threads

MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /scratch rw,relatime shared:20 - lustre 10.0.0.1@o2ib:/fs rw
41 22 0:36 / /home/me/my\\040logs rw - nfs4 server:/logs rw,vers=4.2
42 41 0:37 / /home/me/my\\040logs/local rw - tmpfs tmpfs rw
"""


def test_mountinfo_parsing_and_longest_prefix():
    assert parse_mountinfo(MOUNTINFO)[2] == ("/home/me/my logs", "nfs4")
    assert filesystem_type("/scratch/run1", MOUNTINFO) == "lustre"
    assert filesystem_type("/scratchy", MOUNTINFO) == "ext4"  # a prefix of the name is not a mount
    assert filesystem_type("/home/me/my logs/a", MOUNTINFO) == "nfs4"
    assert filesystem_type("/home/me/my logs/local/a", MOUNTINFO) == "tmpfs"
    assert network_filesystem(["/tmp", "/scratch/x"], MOUNTINFO) == ("/scratch/x", "lustre")
    assert network_filesystem(["/home/me/my logs/local"], MOUNTINFO) is None


def test_failure_reasons_name_the_limit_and_the_fix():
    assert "max_user_watches" in failure_reason(OSError(errno.ENOSPC, "inotify watch limit reached"))
    assert "max_user_instances" in failure_reason(OSError(errno.EMFILE, "x"))
    assert failure_reason(RuntimeError("no libc\nhere")) == "native file events unavailable (no libc here)"


class _Event:
    def __init__(self, event_type, src, dest="", is_directory=False):
        self.event_type, self.src_path, self.dest_path = event_type, src, dest
        self.is_directory = is_directory


def test_handler_keeps_only_what_matters():
    signal = ChangeSignal()
    handler = _Handler(signal, [("/real/", "/link/")])
    handler.dispatch(_Event("modified", "/real/run/events.out.tfevents.1.h"))
    handler.dispatch(_Event("modified", "/real/run/checkpoint-5/model.safetensors"))
    assert signal.take() == ({"/link/run/events.out.tfevents.1.h"}, False)
    handler.dispatch(_Event("created", "/real/run/optimizer.pt"))
    assert signal.take() == (set(), False)
    handler.dispatch(_Event("moved", "/real/run/tmp.partial", "/real/run/events.out.tfevents.2.h"))
    assert signal.take() == (set(), True)
    handler.dispatch(_Event("deleted", "/real/run", is_directory=True))
    assert signal.take() == (set(), True)


def test_idle_native_watcher_does_no_work(tmp_path, monkeypatch, stop_all):
    """rltop's own reads (open, close-no-write) must not wake it: no feedback loop."""
    cycles: list[set[str]] = []  # the runs each read cycle had to read
    real = RunTracker.read_dirty

    def counting(self, *args):
        cycles.append({Path(path).parent.name for path in self._dirty})
        return real(self, *args)

    monkeypatch.setattr(RunTracker, "read_dirty", counting)
    log = EventLog(tmp_path / "r")
    other = EventLog(tmp_path / "s", stamp=1700000001)
    written = log.add("x", [1])
    watcher, consumer = start_watcher([tmp_path], "native")
    stop_all(watcher)
    written += log.add("x", [2])
    wait_for(lambda: consumer.points("r", "x") == written, "one live update")
    settled = len(cycles)
    # Then a write to another run: the notifications rltop's read of r caused came before it, so
    # once its point arrives they were all handled; no cycle since may have read r again.
    later = other.add("x", [1])
    wait_for(lambda: consumer.points("s", "x") == later, "the other run's update")
    assert all(runs == {"s"} for runs in cycles[settled:]), cycles[settled:]
