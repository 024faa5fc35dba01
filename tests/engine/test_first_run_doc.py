"""docs/first-run.md stays true: its CRD prerequisite table is the rules' list, and the order of
a first `up` it describes is the order the recorded dependencies give."""

from __future__ import annotations

import re

from tests.engine.mixes import records
from tools.plan.engine_rules import CRD_PREREQUISITES, PlanGraph
from tools.plan.harness import PROJECT_ROOT, ProgramRun

DOC = PROJECT_ROOT / "docs" / "first-run.md"


def _table() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- crd-prerequisites -->", 1)[1].split("<!-- /crd-prerequisites -->", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (.+) \|$", block, flags=re.MULTILINE)
    return dict(rows)


def test_the_documented_crd_prerequisites_are_the_rules_list() -> None:
    assert _table() == {group: p.installed_by for group, p in CRD_PREREQUISITES.items()}


def _urns(run: ProgramRun, type_suffix: str) -> list[str]:
    return [r.urn for r in run.resources if r.type.endswith(type_suffix) and r.custom]


def _all_wait(graph: PlanGraph, later: list[str], earlier: list[str]) -> bool:
    return bool(later and earlier) and all(set(earlier) <= graph.waits_for(urn) for urn in later)


def test_dev_tenants_wait_for_every_install(dev_plan: ProgramRun) -> None:
    graph = PlanGraph(records(dev_plan))
    releases = [r.urn for r in dev_plan.resources if r.type == "kubernetes:helm.sh/v3:Release"]
    installs = [urn for urn in releases if "platform-installs" in urn]
    assert _all_wait(graph, _urns(dev_plan, ":Namespace"), installs)
    assert _all_wait(graph, _urns(dev_plan, "postgresql.cnpg.io/v1:Cluster"), installs)


def test_prod_order_ring_agents_grants_key_then_what_it_encrypts(prod_plan: ProgramRun) -> None:
    graph = PlanGraph(records(prod_plan))
    agents = _urns(prod_plan, ":ServiceIdentity")
    grants = _urns(prod_plan, ":KeyRingIAMMember")
    keys = _urns(prod_plan, ":CryptoKey")
    assert _all_wait(graph, grants, _urns(prod_plan, ":KeyRing")) and all(
        any(agent in graph.waits_for(grant) for agent in agents) for grant in grants
    )
    assert _all_wait(graph, keys, grants)
    tenant_instances = [
        r.urn for r in prod_plan.of_type("gcp:sql/databaseInstance:DatabaseInstance") if prod_plan.tenant_of(r)
    ]
    assert tenant_instances and all(any(k in graph.waits_for(i) for k in keys) for i in tenant_instances)


def test_prod_aws_order_groups_and_keys_before_instances_classes_before_pools(prod_aws_plan: ProgramRun) -> None:
    graph = PlanGraph(records(prod_aws_plan))
    for instance in prod_aws_plan.of_type("aws:rds/instance:Instance"):
        waited = {graph.by_urn[u]["type"] for u in graph.waits_for(instance.urn) if u in graph.by_urn}
        assert {"aws:ec2/securityGroup:SecurityGroup", "aws:kms/key:Key"} <= waited, instance.name
    assert _all_wait(graph, _urns(prod_aws_plan, ":NodeGroup"), _urns(prod_aws_plan, ":LaunchTemplate"))
    for pool in _urns(prod_aws_plan, "karpenter.sh/v1:NodePool"):
        assert any(c in graph.waits_for(pool) for c in _urns(prod_aws_plan, ":EC2NodeClass"))
