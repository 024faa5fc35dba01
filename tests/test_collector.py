"""The program's garbage-collector tuning (components/collector.py): rare collections, a frozen heap."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from components.collector import MIDDLE_THRESHOLD, OLD_THRESHOLD, YOUNG_THRESHOLD, tune_for_registrations


@pytest.fixture
def collector_state() -> Iterator[None]:
    """Restore the worker's thresholds, freeze and enabled state whatever the test does."""
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    frozen_before = gc.get_freeze_count()
    try:
        yield
    finally:
        if gc.get_freeze_count() > frozen_before:
            gc.unfreeze()
        gc.set_threshold(*thresholds)
        (gc.enable if enabled else gc.disable)()


@pytest.mark.usefixtures("collector_state")
def test_registrations_raise_the_thresholds_and_freeze_what_is_loaded() -> None:
    gc.enable()
    gc.set_threshold(700, 10, 10)
    loaded = [object() for _ in range(10)] + [[] for _ in range(1000)]  # tracked containers
    tune_for_registrations()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
    assert gc.get_freeze_count() >= 1000
    assert loaded


@pytest.mark.usefixtures("collector_state")
def test_loading_garbage_is_collected_not_frozen() -> None:
    gc.enable()

    class Cycle:
        """An object that only the collector frees."""

    garbage = Cycle()
    garbage.me = garbage  # type: ignore[attr-defined]
    gc.unfreeze()
    frozen_before = gc.get_freeze_count()
    probe = __import__("weakref").ref(garbage)
    del garbage
    tune_for_registrations()
    assert probe() is None
    assert gc.get_freeze_count() >= frozen_before


@pytest.mark.usefixtures("collector_state")
def test_a_disabled_collector_is_left_alone() -> None:
    gc.disable()
    gc.set_threshold(700, 10, 10)
    tune_for_registrations()
    assert gc.get_threshold() == (700, 10, 10)
    assert not gc.isenabled()


def test_the_program_tunes_after_loading_and_before_registering() -> None:
    """`__main__.py` calls it once, after the catalog and providers, before the first component."""
    from pathlib import Path

    source = (Path(__file__).resolve().parents[1] / "__main__.py").read_text()
    tuned = source.index("tune_for_registrations()\n")
    assert source.index("catalog = load_catalog(") < tuned < source.index("build_cluster_platform(settings")
    assert source.count("tune_for_registrations()\n") == 1
