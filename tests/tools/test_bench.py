"""The benchmark's floors are what they claim: the typed floor registers the plan's own resources.

The typed floor is the bar the plan is held to (within 1.25x), so it must register the same typed
classes with the same inputs and options as the program, only flat: no components and no parents.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.support import write_tenants
from tools.plan.harness import RecordedResource, new_monitor, run_program, stack_config
from tools.scale.bench import linearity, markdown
from tools.scale.bench_runs import TYPED_FLOOR_PROGRAM, record_classes, stop_recording_classes, typed_recipe
from tools.scale.bench_tenants import typical_tenant


def _plan_with_classes(tmp_path: Path) -> tuple[list[RecordedResource], dict[str, str]]:
    directory = write_tenants(tmp_path / "tenants", typical_tenant(0), typical_tenant(1))
    config, secret_keys = stack_config("dev", {"tenancy:tenantsDir": str(directory)})
    monitor = new_monitor()
    classes = record_classes()
    try:
        run_program("dev", config, secret_keys, monitor=monitor)
    finally:
        stop_recording_classes()
    return monitor.recorded, classes


def _shape(resources: list[RecordedResource]) -> Counter[tuple[str, str, bool, bool, str]]:
    return Counter(
        (r.type, json.dumps(r.inputs, sort_keys=True), r.protect, r.retain_on_delete, ",".join(r.ignore_changes))
        for r in resources
    )


def test_the_typed_floor_registers_the_plans_resources_flat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recorded, classes = _plan_with_classes(tmp_path)
    recipe_file = tmp_path / "typed.json"
    recipe_file.write_text(json.dumps(typed_recipe(recorded, classes)), encoding="utf-8")
    program = tmp_path / "typed_floor.py"
    program.write_text(TYPED_FLOOR_PROGRAM, encoding="utf-8")
    monkeypatch.setenv("TENANCY_BENCH_TYPED", str(recipe_file))
    floor = run_program("dev", {}, [], program=program)
    managed = [r for r in recorded if r.custom and not r.read]
    assert len(floor.resources) == len(managed) > 50
    # The same types, inputs and options; flat (no parents), each with its provider.
    assert _shape(floor.resources) == _shape(managed)
    assert all(r.parent is None or r.parent.endswith("::tenancy-dev") for r in floor.resources)
    assert sum(1 for r in floor.resources if r.provider) == sum(1 for r in managed if r.provider)


def test_markdown_states_the_machine_and_the_linearity() -> None:
    row = {
        "tenants": 100,
        "resources": 3500,
        "wallSeconds": 20.0,
        "cpuSeconds": 19.0,
        "phases": {"program": 18.0, "grouping": 0.1, "writing": 1.9},
        "typedFloorSeconds": 16.0,
        "inputsFloorSeconds": 10.0,
        "floorSeconds": 6.0,
        "ratioToTypedFloor": 1.25,
        "cpuRatioToTypedFloor": 1.2,
        "ratioToInputsFloor": 2.0,
        "ratioToFloor": 3.33,
        "msPerTenant": 200.0,
        "kbPerResource": 60.0,
        "typedFloorKbPerResource": 55.0,
        "load1": 1.5,
    }
    machine = {"cpus": 2, "python": "3.11.7", "loadBefore": [1.0, 1.0, 1.0], "loadAfter": [1.5, 1.2, 1.1]}
    rows = [row, {**row, "tenants": 1000, "wallSeconds": 210.0, "cpuSeconds": 199.5}]
    result = {"stack": "dev", "rows": rows, "machine": machine, **linearity(rows)}
    assert result["linearity"] == 1.05 and result["cpuLinearity"] == 1.05
    text = markdown(result)
    assert "2 CPUs, load average [1.0, 1.0, 1.0] before" in text
    assert "| 100 | 3500 | 20.0 | 18.0 / 0.1 / 1.9 | 16.0 | 10.0 | 6.0 | 1.25x, 1.2x |" in text
    assert "| 200.0, 190.0 |" in text
    assert "ms per tenant at 1,000 / at 100: **1.05** by the wall clock, **1.05** in CPU time" in text
