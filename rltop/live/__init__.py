"""The one judged store every live consumer shares: the dashboard (`rltop.ui.session`) and ``watch``.

* `judged` -- `JudgedStore`: the runs as the watcher delivers them, the health engine's verdict on
  each, which runs changed since they were judged, and when each run's stall verdict can change by
  the clock alone (the stall verdict is the engine's: nothing else judges stalls).
* `activity` -- `ActivityLog`: what the stall rule reads of each run, kept from the batches without
  their points, for ``rltop tail`` (which holds none) to say stalls with the engine's rule.

Layers: live sits above ingest and health, below ui and commands (tests/e2e/test_import_hygiene.py).
"""
