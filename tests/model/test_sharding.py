"""Shard assignment is stable: adding tenants moves none, and growing the shard count moves few."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.settings.sharding import shard_of
from tests.support import tenant_document, write_tenants

NAMES = [f"tenant-{index}" for index in range(2000)]


def test_assignment_depends_on_the_name_only() -> None:
    before = {name: shard_of(name, 8) for name in NAMES[:1000]}
    after = {name: shard_of(name, 8) for name in NAMES}  # 1000 tenants added
    assert all(after[name] == shard for name, shard in before.items())


def test_assignment_is_the_same_on_every_machine() -> None:
    # sha256-based, so these never change with Python's hash seed or version; a change here would move
    # real tenants between shard stacks.
    examples = ("acme", "genomics-lab", "northwind", "status-page")
    assert [shard_of(name, 4) for name in examples] == [2, 1, 1, 1]
    assert [shard_of(name, 16) for name in examples] == [2, 15, 12, 15]
    assert {shard_of(name, 4) for name in NAMES} == {0, 1, 2, 3}


def test_shards_are_balanced() -> None:
    counts = [0] * 8
    for name in NAMES:
        counts[shard_of(name, 8)] += 1
    assert min(counts) > 0.8 * len(NAMES) / 8
    assert max(counts) < 1.2 * len(NAMES) / 8


def test_growing_the_shard_count_moves_only_what_the_new_shard_takes() -> None:
    moved = [name for name in NAMES if shard_of(name, 8) != shard_of(name, 9)]
    assert all(shard_of(name, 9) == 8 for name in moved)  # every move goes to the new shard
    assert len(moved) < 1.3 * len(NAMES) / 9


def test_a_pin_wins() -> None:
    assert shard_of("acme", 4, pinned=2) == 2


def test_a_pin_outside_the_shard_count_is_an_error(tmp_path: Path) -> None:
    settings = parse_settings(
        {"tenancy:domainSuffix": "t.example.com", "tenancy:shards": '{"count": 2}'}, "Pulumi.test.yaml"
    )
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", shard=5))
    with pytest.raises(ConfigurationError) as raised:
        load_catalog(directory, settings, "dev", cloud=cloud_for(settings), root=tmp_path)
    assert [str(p) for p in raised.value.problems] == [
        "tenants/acme.yaml: shard: 5 is not a shard of this stack (shards.count is 2)"
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"tenancy:stackRole": "tenants", "tenancy:platformStack": "o/tenancy/p"},
            "needs shards.index between 0 and 0",
        ),
        (
            {
                "tenancy:stackRole": "tenants",
                "tenancy:shards": '{"count": 2, "index": 2}',
                "tenancy:platformStack": "o/t/p",
            },
            "needs shards.index between 0 and 1",
        ),
        ({"tenancy:stackRole": "tenants", "tenancy:shards": '{"index": 0}'}, "needs platformStack"),
        ({"tenancy:stackRole": "shard"}, "Input should be 'all', 'platform' or 'tenants'"),
    ],
)
def test_bad_shard_settings(config: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings({"tenancy:domainSuffix": "t.example.com", **config}, "Pulumi.test.yaml")
    assert message in str(raised.value)
