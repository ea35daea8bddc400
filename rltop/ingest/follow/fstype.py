"""Which file system a path lives on, to know when native file events cannot be trusted.

inotify only reports changes made through the local kernel: on NFS, Lustre, GPFS, SMB and the
like, a training job on another node appends to the event file and no event ever fires here. The
watcher therefore polls on those file systems from the start (and says so once).
"""

from __future__ import annotations

import os

MOUNTINFO = "/proc/self/mountinfo"

# File systems whose writes by other machines never reach local inotify.
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "9p", "vboxsf", "davfs",
        "lustre", "gpfs", "beegfs", "ceph", "glusterfs", "panfs", "wekafs", "orangefs", "pvfs2",
        "fuse.sshfs", "sshfs", "fuse.glusterfs", "fuse.gcsfuse", "fuse.s3fs", "fuse.rclone",
        "fuse.juicefs", "fuse.blobfuse", "fuse.blobfuse2", "fuse.davfs2", "fuse.cephfs",
        "fuse.weka", "fuse.goofys", "fuse.mountpoint-s3",
    }
)  # fmt: skip


def _unescape(field: str) -> str:
    """Mount points in mountinfo escape space, tab, newline and backslash as octal (``\\040``)."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[tuple[str, str]]:
    """(mount point, file system type) for each line of a ``/proc/<pid>/mountinfo`` text."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        types = right.split()
        if sep and len(fields) >= 5 and types:
            mounts.append((_unescape(fields[4]), types[0]))
    return mounts


def filesystem_type(path: str, mountinfo: str | None = None) -> str | None:
    """The type of the file system holding ``path`` (``"ext4"``, ``"nfs4"``...), None if unknown."""
    if mountinfo is None:
        try:
            with open(MOUNTINFO, encoding="utf-8", errors="replace") as handle:
                mountinfo = handle.read()
        except OSError:
            return None  # not Linux, or /proc not mounted
    target = os.path.realpath(path)
    best, best_type = "", None
    for point, kind in parse_mountinfo(mountinfo):
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):  # the last of equal mounts is the visible one
            best, best_type = point, kind
    return best_type


def network_filesystem(paths: list[str], mountinfo: str | None = None) -> tuple[str, str] | None:
    """The first (path, type) among ``paths`` on a network file system, or None."""
    for path in paths:
        kind = filesystem_type(path, mountinfo)
        if kind is not None and kind in NETWORK_FILESYSTEMS:
            return path, kind
    return None
