"""Textual bindings from the key table (`rltop.ui.logic.keys`): the footer shows what the help lists."""

from __future__ import annotations

from textual.binding import Binding

from rltop.ui.logic.keys import Key


def bindings(table: tuple[Key, ...], scope: str = "screen") -> list[Binding]:
    """The bindings of ``table``'s rows bound at ``scope`` ("app" or "screen")."""
    return [
        Binding(
            key.keys, key.action, key.label, show=key.show, key_display=key.display, priority=key.priority
        )
        for key in table
        if key.action and key.scope == scope
    ]
