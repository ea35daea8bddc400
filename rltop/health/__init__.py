"""rltop.health: the rules behind the colours (no Textual, no Rich).

* `engine` -- `HealthEngine` (incremental, per run and tag), `RunHealth`, `assess_store`.
* `findings` -- `Level`, `Stage` and `Finding`, what the UI and the reports consume.
* `settings` -- `load_rules` (each rule's defaults + ``~/.config/rltop/rules.toml`` + ``--rules``),
  `Rules`, `RuleParams`, `RulesError`, the keys every rule shares and `RuleDoc`.
* `rules/` -- one class a rule and one registry (`rules.EVERY`, `rules.DEFAULTS`, `rules.DOCS`):
  level rules, the ratio and dead updates, KL, spikes, entropy, reward, non-finite values, stall,
  and the run-level detectors.
* `persistence` -- m-of-n persistence, hysteresis and episodes of one rule on one tag.
* `verdicts` -- one rule's episodes folded into one finding, with its second look at the run.
* `evidence/` -- what the rest of a run says around an episode: signals, what a collapse does, text.
* `numerics/` -- robust window statistics and spike baselines, vectorised.
* `calibration` -- the run's own settings (``args/text_summary``) the rules read.
* `bands` -- the rules' thresholds along a series, for charts; `table` -- the rules as a table;
  `wording` -- how numbers read in messages.

Kept import-light on purpose: importing `rltop.health.findings` must not load the engine.
"""
