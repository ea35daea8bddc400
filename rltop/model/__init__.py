"""Runs and their series (columnar numpy), value formatting. No Textual, no Rich.

* ``catalog/`` -- what every metric means, whatever a framework calls it: concepts, name tables and four
  lookups.
* `completion_checks` -- what a run's metrics say about its logged completions: the length cap and the
  clipped share.
* `completions` -- what the policy wrote: the index of a run's logged completions, and one step's rows
  once read.
* `decimal_columns` -- shortest round-trip decimals of whole columns, in integer numpy arithmetic, as
  ASCII bytes.
* `downsample` -- reduce a long series to a display width without losing its spikes. No Rich, no
  Textual.
* `durations` -- human durations, shared by the watcher, the health messages, the reports and the
  screen.
* `names` -- names and paths as text every output can carry, whatever bytes the file system gave.
* `run` -- a training run (a directory of event files, or an output_dir of checkpoints) and the store of
  all runs.
* `series` -- columnar storage of one scalar tag: steps, wall times and values as numpy arrays.
* `smoothing` -- tensorBoard's debiased exponential moving average, vectorised and NaN-safe.
* `stats` -- summary statistics of one series for displays and reports (snapshot, dashboard). No
  Rich/Textual.
* `summary` -- a live series' statistics and sparkline columns at a cost that does not grow with its
  history.
* `values` -- exact, shortest text for numbers: what export, tail and every report print.
"""
