"""Comparing runs: the settings that differ, each run's verdict beside them, and which difference goes
with the failure.

* `diff` -- the settings that differ between the runs' configs (equal ones folded and counted; keys
  that only name a run left out).
* `split` -- the one line saying which setting's values split the runs into failing and healthy.
* `groups` -- the runs grouped by one setting, with each value's worst level.
* `comparison` -- the whole comparison for the front ends: diff, verdicts, summary, fitted table.
"""
