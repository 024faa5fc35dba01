"""tools/plan/collector.py: a run's collections skip the heap that existed before it, and the run's
own garbage is freed when it ends."""

from __future__ import annotations

import gc
import weakref

from tools.plan import collector


class _Node:
    """An object that can be part of a reference cycle and be watched with a weak reference."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def test_objects_from_before_are_frozen_only_inside_the_scope() -> None:
    before = gc.get_freeze_count()
    with collector.run_scope():
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == before


def test_a_cycle_made_inside_is_freed_on_exit() -> None:
    with collector.run_scope():
        first, second = _Node(), _Node()
        first.other, second.other = second, first
        watch = weakref.ref(first)
        del first, second
    assert watch() is None


def test_someone_elses_frozen_objects_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector.run_scope():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
