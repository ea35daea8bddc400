"""Themes as data: TOML files of Textual `Theme` fields plus a ``[variables]`` table for rltop's keys.

Built-in themes live in ``rltop/ui/themes/`` (package data; the repository's top-level ``themes/``
is the same folder). Users add or override themes with ``~/.config/rltop/themes/*.toml`` (or
``$XDG_CONFIG_HOME/rltop/themes``). A broken file is reported and skipped, never fatal.
"""

from __future__ import annotations

import os
import sys
from dataclasses import fields
from pathlib import Path

from textual.app import App
from textual.theme import Theme

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

BUILTIN_DIR = Path(__file__).parent / "themes"
DEFAULT_THEME = "rltop-dark"
ANSI_THEME = "rltop-ansi"
RLTOP_THEMES = ("rltop-dark", "rltop-light", "rltop-ansi")
"""The themes ``t`` cycles through, besides the user's own."""


def _default_variables() -> dict[str, str]:
    """rltop's own CSS variables as the default theme sets them: the fallback of every theme."""
    data = tomllib.loads((BUILTIN_DIR / f"{DEFAULT_THEME}.toml").read_text(encoding="utf-8"))
    return {key: value for key, value in data.get("variables", {}).items() if key.startswith("rltop-")}


VARIABLE_DEFAULTS = _default_variables()
"""Every rltop CSS variable with a fallback (a theme that omits one still parses)."""

_THEME_FIELDS = {f.name for f in fields(Theme)}


def user_theme_dir() -> Path:
    """``$XDG_CONFIG_HOME/rltop/themes`` (default ``~/.config/rltop/themes``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "rltop" / "themes"


def theme_from_toml(text: str, origin: str) -> Theme:
    """Parse one theme file; ValueError with a one-line reason for anything wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{origin}: not valid TOML: {error}") from None
    unknown = sorted(set(data) - _THEME_FIELDS)
    if unknown:
        raise ValueError(f"{origin}: unknown key(s) {', '.join(unknown)}")
    for required in ("name", "primary"):
        if not isinstance(data.get(required), str):
            raise ValueError(f"{origin}: '{required}' must be a string")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ValueError(f"{origin}: [variables] must map names to colour strings")
    theme = Theme(**data)
    try:
        theme.to_color_system().generate()  # parses every colour now, not at the first repaint
    except Exception as error:
        raise ValueError(f"{origin}: bad colour: {error}") from None
    return theme


def load_themes(directories: list[Path] | None = None) -> tuple[list[Theme], list[str]]:
    """Every theme in ``directories`` (default: built-in, then the user's); later names override.

    Returns the themes and one problem line per file that could not be used.
    """
    directories = [BUILTIN_DIR, user_theme_dir()] if directories is None else directories
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = theme_from_toml(path.read_text(encoding="utf-8"), str(path))
            except (OSError, ValueError, TypeError) as error:
                problems.append(str(error))
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems


def install_themes(app: App, requested: str | None) -> tuple[list[str], list[str]]:
    """Register every theme with ``app`` and pick one; return (the ``t`` cycle, problem lines).

    The choice: ``requested`` (``--theme``), else ``$RLTOP_THEME``, else `ANSI_THEME` on a
    16-colour terminal (the terminal's own palette looks right there) and `DEFAULT_THEME` elsewhere.
    """
    loaded, problems = load_themes()
    for theme in loaded:
        app.register_theme(theme)
    cycle = [t.name for t in loaded if t.name in RLTOP_THEMES] + [
        t.name for t in loaded if t.name not in RLTOP_THEMES
    ]
    wanted = requested or os.environ.get("RLTOP_THEME")
    if wanted and wanted not in app.available_themes:
        problems.append(f"unknown theme {wanted!r}; using the default")
        wanted = None
    if wanted is None:
        wanted = ANSI_THEME if app.console.color_system == "standard" else DEFAULT_THEME
    if wanted in app.available_themes:
        app.theme = wanted
    return cycle, problems
