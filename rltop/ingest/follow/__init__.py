"""Following the sources: which runs exist, which files changed, and reading what is new.

* `discovery` -- the runs under the paths a user gives, and the kind of source each is read from.
* `sessions` -- which ``runs/<datetime>_<host>/`` folders of one ``output_dir`` are one run.
* `runfiles` -- the source files of one run, each with its kind's reader.
* `run_tracker` -- `RunTracker`: the watcher's picture of the runs (which files exist, which need reading).
* `watcher` -- live tailing: the threads that follow every source file and feed consumers.
* `native` -- native file events (inotify, FSEvents) through watchdog; `fstype` -- which file systems
  cannot be trusted with them (NFS, Lustre: polling instead).
* `reachability` -- whether a remote root answers, and when to ask it again.
* `loader` -- one-shot loads (``snapshot``, ``export``): discover, read whole, fill a `Store`.
"""
