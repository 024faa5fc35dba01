"""Quotas that hold (issue 13, hole 11), on the quotas the real program renders for dev, prod and prod-aws.

Attacks: a tenant fills etcd with objects of a kind no quota counts (ExternalSecrets, HelmReleases,
ReplicaSets...), fills a node's disk through emptyDir and logs, or gets twice its tier by having
two environments. Legitimate use: a pod that states no ephemeral storage is still admitted by the
quota (the LimitRange fills it in), and a tenant with one environment keeps its whole tier.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import cast

import pytest

from components.guardrails.quota import QUOTA_NAME
from components.model.catalog.stack_config import parse_settings
from components.model.checks.quota_budget import environment_share, split_hard
from components.model.core.errors import ConfigurationError
from components.model.core.fields import quantity_value
from components.platform.roles import role_rules
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun

# Quota names of the kinds that have their own (pods, services...) instead of count/<resource>.
_OWN_QUOTA_NAME = {"pods", "services", "secrets", "configmaps", "persistentvolumeclaims"}


@pytest.fixture(scope="module")
def aws_plan(prod_aws_plan: ProgramRun) -> ProgramRun:
    return prod_aws_plan


def tenant_creatable_kinds() -> set[str]:
    """Every namespaced resource a tenant role (admin, deployer) may create, as a quota key."""
    keys: set[str] = set()
    rules = role_rules()
    for role in ("admin", "deployer", "operator"):
        for rule in rules[role]:
            # The rules are plain lists here; the Pulumi input types say they might be Outputs.
            verbs, resources, groups = (cast(list[str], rule[key]) for key in ("verbs", "resources", "api_groups"))
            if "create" not in verbs:
                continue
            for resource in resources:
                if "/" in resource:  # subresources (scale, exec) create no object
                    continue
                group = groups[0]
                if group == "" and resource in _OWN_QUOTA_NAME:
                    keys.add(resource)
                else:
                    keys.add(f"count/{resource}" + (f".{group}" if group else ""))
    return keys


def quotas(run: ProgramRun) -> dict[str, dict[str, str]]:
    found = {q["metadata"]["namespace"]: q["spec"]["hard"] for q in objects_of_kind(run, "ResourceQuota")}
    assert found and all(name.startswith("tenant-") for name in found)
    return found


def test_the_kinds_list_is_not_empty() -> None:
    # Guards the test below against a role_rules shape change that would make it vacuous.
    assert {
        "pods",
        "secrets",
        "count/externalsecrets.external-secrets.io",
        "count/jobs.batch",
    } <= tenant_creatable_kinds()


@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_every_kind_a_tenant_may_create_is_counted(
    stack: str, dev_plan: ProgramRun, prod_plan: ProgramRun, aws_plan: ProgramRun
) -> None:
    run = {"dev": dev_plan, "prod": prod_plan, "prod-aws": aws_plan}[stack]
    for namespace, hard in quotas(run).items():
        missing = tenant_creatable_kinds() - set(hard)
        assert not missing, (namespace, sorted(missing))


@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_ephemeral_storage_is_capped_and_defaulted(
    stack: str, dev_plan: ProgramRun, prod_plan: ProgramRun, aws_plan: ProgramRun
) -> None:
    run = {"dev": dev_plan, "prod": prod_plan, "prod-aws": aws_plan}[stack]
    for namespace, hard in quotas(run).items():
        assert {"requests.ephemeral-storage", "limits.ephemeral-storage"} <= set(hard), namespace
    # Legitimate use: a quota on requests.X rejects a pod whose containers state no X, unless the
    # LimitRange defaults X; so every per-container resource the quota caps has a default.
    for limit_range in objects_of_kind(run, "LimitRange"):
        (container,) = limit_range["spec"]["limits"]
        hard = quotas(run)[limit_range["metadata"]["namespace"]]
        capped = {
            key.split(".", 1)[1]
            for key in hard
            if key.startswith(("requests.", "limits.")) and key != "requests.storage"
        }
        assert capped <= set(container["defaultRequest"]) and capped <= set(container["default"]), capped


def _tenant_totals(run: ProgramRun) -> dict[str, dict[str, list[str]]]:
    """Per tenant, per quota key, the amounts of its environments."""
    totals: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for quota in objects_of_kind(run, "ResourceQuota"):
        assert quota["metadata"]["name"] == QUOTA_NAME
        tenant = quota["metadata"]["labels"]["tenancy.io/tenant"]
        for key, value in quota["spec"]["hard"].items():
            totals[tenant][key].append(value)
    return totals


@pytest.mark.parametrize(
    ("stack", "tier_of"),
    [
        ("dev", {"acme": "medium", "genomics-lab": "large"}),
        ("prod", {"acme": "medium", "genomics-lab": "large", "northwind": "small"}),
    ],
)
def test_environments_share_the_tier_never_double_it(
    stack: str, tier_of: dict[str, str], dev_plan: ProgramRun, prod_plan: ProgramRun
) -> None:
    run = dev_plan if stack == "dev" else prod_plan
    settings = parse_settings({"tenancy:domainSuffix": "x.example.com"}, "Pulumi.test.yaml")
    totals = _tenant_totals(run)
    for tenant, tier in tier_of.items():
        whole = settings.quota_tiers[tier].hard()
        for key, value in whole.items():
            spent = sum((quantity_value(v) for v in totals[tenant][key]), Decimal(0))
            assert spent <= quantity_value(value), (tenant, key, totals[tenant][key], value)
    # The attack this closes: acme has two environments, so neither gets the whole medium tier.
    assert totals["acme"]["requests.cpu"] == ["4", "4"] and totals["acme"]["pods"] == ["30", "30"]


def test_quota_split_weights_favour_prod(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", quota={"tier": "large"}))
    run = plan("dev", directory, quotaSplit='{"dev": 1, "prod": 3}')
    hard = {q["metadata"]["namespace"]: q["spec"]["hard"] for q in objects_of_kind(run, "ResourceQuota")}
    assert hard["tenant-acme-dev"]["requests.cpu"] == "8" and hard["tenant-acme-prod"]["requests.cpu"] == "24"
    assert hard["tenant-acme-dev"]["pods"] == "50" and hard["tenant-acme-prod"]["pods"] == "150"


def test_single_environment_keeps_the_whole_tier(tmp_path: Path) -> None:
    directory = write_tenants(
        tmp_path / "tenants", tenant_document("acme", environments=["prod"], quota={"tier": "large"})
    )
    (quota,) = objects_of_kind(plan("dev", directory), "ResourceQuota", "tenant-acme-prod")
    assert quota["spec"]["hard"]["requests.cpu"] == "32" and quota["spec"]["hard"]["pods"] == "200"


def test_split_rounds_down() -> None:
    share = environment_share("dev", ["dev", "prod", "qa"], {})
    assert share == Fraction(1, 3)
    split = split_hard({"requests.cpu": "1", "limits.memory": "1Gi", "pods": "10", "requests.storage": "100Gi"}, share)
    assert split == {"requests.cpu": "333m", "limits.memory": "341Mi", "pods": "3", "requests.storage": "34133Mi"}


def test_quota_split_must_name_hosted_environments() -> None:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings(
            {"tenancy:domainSuffix": "x.example.com", "tenancy:quotaSplit": '{"staging": 2}'}, "Pulumi.test.yaml"
        )
    assert [str(p) for p in raised.value.problems] == [
        "Pulumi.test.yaml: tenancy:quotaSplit.staging: not an environment of this stack (environments: dev, prod)"
    ]


def test_a_split_that_leaves_an_environment_nothing_is_refused(tmp_path: Path) -> None:
    """Rounding down keeps the total; it must not reach zero, or dev could start no pod."""
    custom = {
        "requests": {"cpu": "2", "memory": "4Gi"},
        "limits": {"cpu": "4", "memory": "8Gi"},
        "objects": {"pods": 3},
    }
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", quota={"custom": custom}))
    with pytest.raises(ConfigurationError) as raised:
        plan("dev", directory, quotaSplit='{"dev": 1, "prod": 3}')
    [problem] = [str(p) for p in raised.value.problems]
    assert "tenants/acme.yaml: quota.custom: the custom quota split over dev, prod" in problem, problem
    assert "leaves environment dev zero of pods (3)" in problem
    # Equal weights give dev one pod: admitted.
    assert objects_of_kind(plan("dev", directory), "ResourceQuota", "tenant-acme-dev")[0]["spec"]["hard"]["pods"] == "1"
