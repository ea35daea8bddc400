"""rltop.report: Rich renderables and exporters of the snapshot (text, Markdown, JSON, CSV, SVG, HTML)."""
