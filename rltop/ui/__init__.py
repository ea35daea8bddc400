"""The live dashboard: a Textual app over the series store, the health engine and the live watcher.

Layout of this package: `app` (the App: live feed, themes, keys that work everywhere), `session`
(store + health + which run, no Textual), ``screens/`` (dashboard, detail, runs, help),
``widgets/`` (one widget a file), ``app.tcss`` (all layout), ``themes/`` (TOML themes, loaded by
`themes`), and small Textual-free helpers: `header_info`, `levels`, `narrow`, `tag_filter`,
`chart`. What is shown (names, levels, numbers, sentences) comes from `rltop.view`, the
model the snapshot renders too; nothing here imports `rltop.report`. `messages` holds every message
class.
"""
