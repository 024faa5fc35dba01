"""The real-engine bench's own bookkeeping (tools/realrun/bench.py): the edit it deploys and the
counts it reads from the engine's summary."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from components.model.core.yaml_text import load_yaml
from tools.realrun.bench import _change_tier, _count
from tools.scale.bench_tenants import typical_tenant
from tools.scale.tenant_mix import write_tenants


def test_the_edit_changes_one_tenants_tier_and_nothing_else(tmp_path: Path) -> None:
    tenants = write_tenants([typical_tenant(0), typical_tenant(1)], tmp_path / "tenants")
    before = {path.name: load_yaml(path.read_text()) for path in tenants.iterdir()}
    _change_tier(tenants, "t00000", "medium")
    after = {path.name: load_yaml(path.read_text()) for path in tenants.iterdir()}
    assert after["t00001.yaml"] == before["t00001.yaml"]
    assert after["t00000.yaml"] == {**before["t00000.yaml"], "quota": {"tier": "medium"}}


def test_counts_read_the_engines_summary_whatever_the_key_type() -> None:
    # The Automation API gives OpType members or plain strings, depending on the SDK version.
    result = SimpleNamespace(summary=SimpleNamespace(resource_changes={"create": 7, "same": 3}))
    assert (_count(result, "create"), _count(result, "update")) == (7, 0)
