"""The live dashboard: a Textual app over the series store, the health engine and the live watcher.

Layout of this package: `app` (the App: live feed, themes, keys that work everywhere), `session`
(store + health + which run, no Textual), ``screens/`` (dashboard, detail, runs, help),
``widgets/`` (one widget a file), ``app.tcss`` (all layout), ``themes/`` (TOML themes, loaded by
`themes`), `chart` (plotext drawing), `plot_text` (the same text drawn with numpy), `ansi_text`
(a chart's ANSI text as Rich text), `alerting` (hooks, bell, title), `palette`, `key_bindings`,
`follow_focus`, `terminal_guard`, `input_driver` (Textual's terminal driver, its input thread
asleep until a key), `line_strips` (styled lines into strips as Textual makes them, cheaper),
`kept_styles` (component styles kept until a restyle), `kept_render` (a widget nothing changed
hands the compositor its last lines), and ``logic/``: every Textual-free helper (repaint policy, rates,
the key table, header facts, grid layout, chart sources, level classes, narrow cells, tag filter). What is
shown (names, levels, numbers, sentences) comes from `rltop.view`, the
model the snapshot renders too; nothing here imports `rltop.report`. `messages` holds every message
class.
"""
