"""What every front end shows, computed once: no Textual, no Rich, no terminal.

The dashboard (`rltop.ui`) and every snapshot format (`rltop.report`) render the same models, so
they cannot disagree about a name, a level, a number or a sentence:

- `run_view`, `metric_view`, `alerts`: one `RunView` per run (facts, findings, folded alerts) holding
  one `MetricView` per tag (display name, level, statistics), built from a run and its health;
- `fleet`: every run at a glance (state counts, the worst run);
- `names`: display names of runs and metrics (shared parts dropped, never cut inside a word);
- `config`: the training arguments worth showing; `completions`: one step's completions;
  `seed_groups`, `group_view`: runs that differ only in their seed, and their spread;
- `chart/`: what a chart draws, its scale, options, cursor, seed bands, and the sparklines;
- `text/`: cells and fitting, safe text, short numbers, times, the shared wording, headlines, marks.

Layers: view sits on health and model; nothing here imports `rltop.report`, `rltop.ui` or a screen
library (``tests/e2e/test_import_hygiene.py``).

* ``compare/`` -- comparing runs: the settings that differ, each run's verdict beside them, and which
  difference goes with the failure.
"""
