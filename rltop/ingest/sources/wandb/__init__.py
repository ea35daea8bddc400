"""The ``wandb`` source kind: the wandb SDK's local run files (``run-<id>.wandb``).

* `kind` -- the kind's registration: which files it claims and which run they belong to.
* `leveldb_log` -- the LevelDB log framing the SDK writes.
* `reader` -- incremental reading of one run file from a byte offset.
* `records` -- what rltop takes from the SDK's ``Record`` messages: points, config, summary, exit.
"""
