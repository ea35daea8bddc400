"""What every front end shows, computed once: no Textual, no Rich, no terminal.

The dashboard (`rltop.ui`) and every snapshot format (`rltop.report`) render the same models, so
they cannot disagree about a name, a level, a number or a sentence:

- `run_view`, `metric_view`, `alerts`: one `RunView` per run (facts, findings, folded alerts) holding
  one `MetricView` per tag (display name, level, statistics), built from a run and its health;
- `fleet`: every run at a glance (state counts, the worst run);
- `names`: display names of runs and metrics (shared parts dropped, never cut inside a word);
- `config`: the training arguments worth showing; `sentences`: the wording both front ends use;
- `marks`, `spark`, `numbers`, `humanize`, `text_fit`, `headline`, `cells`, `safe_text`: level labels
  and marks, sparkline glyphs, short numbers, durations, text that fits a width (an alert's number
  never cut), and text that is safe to print.

Layers: view sits on health and model; nothing here imports `rltop.report`, `rltop.ui` or a screen
library (``tests/test_import_hygiene.py``).
"""
