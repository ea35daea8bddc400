"""rltop.report: Rich renderables and exporters of the snapshot (text, Markdown, JSON, CSV, SVG, HTML).

* `completions_out` -- ``rltop completions`` output: one step's completions as text, JSON Lines or
  Markdown.
* `csv_bytes` -- the CSV lines of one series built as one block of bytes, with numpy, instead of line by
  line.
* `csv_report` -- the snapshot as CSV: one row per run × tag, for spreadsheets and ``pandas.read_csv``.
* `export` -- ``rltop export``/``rltop tail`` lines: every point as CSV or JSON Lines, values exact.
* `formats` -- names and limits the snapshot command and the renderers share (imports nothing heavy).
* `group_report` -- seed groups in the snapshot: the JSON ``groups`` list and the Markdown "Seed groups"
  table.
* `html_charts` -- the charts of the HTML and SVG snapshots: per run its key metrics and every metric
  with a finding, per seed group its key metrics as a mean with a band, drawn like the dashboard draws
  them.
* `json_report` -- the snapshot as JSON, in the stable schema documented in
  ``rltop/report/schema.json``.
* `markdown` -- the snapshot as GitHub-flavoured Markdown: a heading per run, findings and metrics as
  GFM tables.
* `render` -- turn a `Snapshot` into the text of one output format.
* `snapshot` -- the picture a snapshot prints, built once from the store and the health verdicts.
* `svg_chart` -- a `rltop.view.chart.data.Figure` as an inline SVG chart: the report's twin of the
  terminal chart.
* `text_view` -- the text snapshot as Rich renderables: per run a header, the findings, the grouped
  metric table.

* `compare_render` -- ``rltop diff``'s output: the comparison (and the runs grouped by a setting) in one
  format.
* `compare_report` -- the runs compared, in the snapshot and ``rltop diff``: text (Rich), Markdown and
  JSON.
"""
