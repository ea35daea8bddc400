"""MLflow: a tracking server (through its REST API), its SQLite store ``mlflow.db`` and the ``mlruns/``
file store, each a source kind.

* `rest` -- the read-only HTTP client of the REST API (auth by MLflow's own environment variables).
* `server` -- the server as a storage backend (``http``, ``https``, ``mlflow://``): experiments and
  runs shown as a tree of run files, so listing, polling and back-off are the remote stores';
  `server_reader` -- each run's metric histories, fetched from the offset already read.
* `database` -- the ``mlflow.db`` kind; `database_reader` -- its rows after the last one seen
  (read-only, as trackio's databases).
* `files` -- the ``mlruns/`` kind; `files_reader` -- its ``metrics/<key>`` files tailed by offset.
* `params` -- MLflow params turned back into values: the run's config.
"""
