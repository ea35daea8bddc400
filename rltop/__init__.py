"""rltop: top for reinforcement-learning training of language models."""

import os as _os

__version__ = "0.1.0"

# rltop makes no BLAS call, yet OpenBLAS starts a worker per core when numpy loads it, and those
# workers spin: measured here, 0.13 CPU-s burnt in the first half second of every process (a
# fifth of a cold load of 900k scalars). OpenBLAS reads the variable once, when numpy loads it
# (later, after the first frame is painted). Processes rltop starts (``watch`` hooks) get the
# user's own environment back: see `inherited_environment`.
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
_BLAS_SET_HERE = BLAS_THREADS not in _os.environ
if _BLAS_SET_HERE:
    _os.environ[BLAS_THREADS] = "1"


def inherited_environment() -> dict[str, str]:
    """The environment for a process rltop starts: the user's, without what rltop set for itself."""
    environ = dict(_os.environ)
    if _BLAS_SET_HERE and environ.get(BLAS_THREADS) == "1":
        del environ[BLAS_THREADS]
    return environ
