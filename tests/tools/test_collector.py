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
    # The exact count is not compared: a frozen object freed by its reference count leaves the
    # permanent generation at any time (CI saw 837,535 -> 837,533). Unfreezing empties it, and
    # freezing again would add the objects made since; neither may happen.
    theirs = [_Node() for _ in range(1000)]
    gc.freeze()
    try:
        with collector.run_scope():
            ours = [_Node() for _ in range(1000)]
        assert gc.get_freeze_count() >= len(theirs)
        frozen_after_scope = gc.get_freeze_count()
        gc.freeze()
        assert gc.get_freeze_count() >= frozen_after_scope + len(ours)
    finally:
        gc.unfreeze()
