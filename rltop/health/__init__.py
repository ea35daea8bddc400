"""rltop.health: the rules behind the colours (no Textual, no Rich).

* `rltop.health.engine` -- `HealthEngine` (incremental, per run and tag), `RunHealth`, `assess_store`.
* `rltop.health.settings` -- `load_rules` (defaults + ``~/.config/rltop/rules.toml`` + ``--rules``),
  `Rules`, `RulesError`; `rltop.health.thresholds` holds every default in one place and
  `rltop.health.table` renders them as a table.
* `rltop.health.findings` -- `Level` and `Finding`, what the UI and the reports consume.
* Rules: `level_rules` (fixed thresholds), `relative_rules` (baselines, spikes), `reward_rules`,
  `non_finite`, `stall`; `machine` (m-of-n persistence, hysteresis, episodes), `calibration`
  (the run's logged config).

Kept import-light on purpose: importing `rltop.health.findings` must not load the engine.
"""
