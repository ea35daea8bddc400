"""The heap settled after the first complete picture (`rltop.ui.heap`): the objects alive then leave
the collector's passes, which is all it changes. The screen is the same with it and without it
(``RLTOP_PLAIN_GC=1``), and what is made later is still collected, a reference cycle included."""

from __future__ import annotations

import gc
import weakref

from helpers.ui import preloaded_app, screen_text, wait_until

from rltop.ui import heap


class _Node:
    """A reference cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


async def _first_picture(freeze: bool) -> str:
    """The screen once the first picture is drawn and the heap settled (or not: ``freeze``)."""
    frozen = gc.get_freeze_count()
    app = preloaded_app("grpo_healthy", "ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(
            pilot,
            lambda: app.heap_settled and (gc.get_freeze_count() > frozen or not freeze)
            and "grpo_healthy" in screen_text(app) and "⏎ Detail" in screen_text(app),
        )  # fmt: skip
        assert (gc.get_freeze_count() > frozen) == freeze
        cycle = weakref.ref(_Node())  # made after the freeze: the collector still frees it
        gc.collect()
        assert cycle() is None
        return screen_text(app)


async def test_the_first_complete_picture_settles_the_heap_and_changes_nothing_drawn(monkeypatch):
    monkeypatch.setattr(heap, "FREEZE_FIRST_PICTURE", True)
    settled = await _first_picture(True)
    monkeypatch.setattr(heap, "FREEZE_FIRST_PICTURE", False)
    assert settled == await _first_picture(False)
