"""Run a Python program as another user, for tests about files shared between users.

The tests run as root, and the interpreter and its standard library may live where only root can
read (``/root/.pyenv``): a process that drops to another user at its start cannot even import
``json``. So each program is first run as root, recording every module it imported
(`record`); the run as the other user imports those modules first, then drops to the user's
ids, then runs the program (`as_user`). What it does after that (files it creates, the locks it
takes) is the other user's, exactly as a second user's process would do it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

LAUNCHER = r"""
import atexit, importlib, os, runpy, sys

mode, modules, uid, gid = sys.argv[1:5]
program = sys.argv[5:]
if mode == "record":
    atexit.register(lambda: open(modules, "w").write("\n".join(sorted(sys.modules))))
else:
    for name in open(modules).read().split():
        try:
            importlib.import_module(name)
        except BaseException:
            pass  # a module of the recording's platform paths: the program will say if it needs it
    os.setgroups([])
    os.setgid(int(gid))
    os.setuid(int(uid))
    os.umask(0o022)
if program[0] == "-m":
    sys.argv = program[1:]
    runpy.run_module(program[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = ["-c", *program[2:]]
    exec(compile(program[1], "<program>", "exec"), {"__name__": "__main__"})
"""


def is_root() -> bool:
    """True when this process may switch users (the tests that need it skip otherwise)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def record(modules: Path, *program: str) -> list[str]:
    """The command running ``program`` (``-m module args…`` or ``-c code args…``) as root, writing
    the modules it imported to ``modules`` when it ends."""
    return [sys.executable, "-c", LAUNCHER, "record", str(modules), "0", "0", *program]


def as_user(modules: Path, uid: int, *program: str) -> list[str]:
    """The command running ``program`` as the user ``uid`` (group ``uid`` too), after importing the
    modules a `record` run wrote to ``modules``."""
    return [sys.executable, "-c", LAUNCHER, "run", str(modules), str(uid), str(uid), *program]


def user_env(home: Path, name: str) -> dict[str, str]:
    """The environment of a user without a passwd entry: its name and a home it may write to."""
    return {**os.environ, "HOME": str(home), "USER": name, "LOGNAME": name}
