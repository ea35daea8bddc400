"""The ``trackio`` source kind: trackio's local SQLite databases, one ``<project>.db`` a project.

* `kind` -- the kind's registration and the runs a database holds.
* `reader` -- polled reading of one run: the rows its project database gained since the last read
  (opened read-only through `rltop.ingest.storage.sqlite_readonly`: nothing is written beside it).
"""
