"""Reading training logs: the source kinds, following them live, and loading them once.

* `reading` -- what every source reader returns (`Decoded`, `ReadResult`, `SourceKind`, `SourceReader`).
* `columns` -- points of many tags, grouped by tag within each read, split by tag once for many reads.
* `feed` -- the change feed: what the watcher reports, and how a consumer applies it to its `Store`.
* `sources/` -- the registry of source kinds (`sources/__init__.py`) and one folder or module a kind:
  `tfevents/` (with its TFRecord/Event reader and writer), `wandb/`, `trackio/`, `mlflow/`, `verl/`,
  `trainer_state`, plus TRL's completions files and the line reader
  and content check that several kinds share.
* `follow/` -- following the sources: discovery, sessions, the watcher and its run tracker, native file
  events, the file-system kind, reachability of remote roots, and the one-shot loader.
* `storage/` -- local files and fsspec URLs behind one interface, and read-only SQLite.

No Textual and no Rich here: this layer runs in threads and in headless commands. Nothing in it
imports `rltop.health` or anything above; `sources` never imports `follow`
(``tests/e2e/test_import_hygiene.py``).
"""
