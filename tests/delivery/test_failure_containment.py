"""Failure containment: one tenant's broken app must not fail (or hold) `pulumi up` for everyone.

Tenant workloads and the Flux objects that depend on the tenant's own sources carry
`pulumi.com/skipAwait`; the platform's objects (namespaces, guard rails, admission policy, data, the
Helm releases of Flux and the operators) do not, so a broken platform still fails `up` loudly.
"""

from __future__ import annotations

from components.delivery.objects import SKIP_AWAIT
from tests.support import kubernetes_objects
from tools.plan.harness import ProgramRun

NOT_AWAITED = {
    "Deployment",
    "Service",
    "HelmRelease",
    "OCIRepository",
    "HelmRepository",
    "GitRepository",
    "Kustomization",
}


def annotations_of(obj: dict[str, object]) -> dict[str, str]:
    metadata = obj["metadata"]
    assert isinstance(metadata, dict)
    found: dict[str, str] = metadata.get("annotations") or {}
    return found


def test_tenant_workloads_and_sources_are_not_awaited(example_plan: ProgramRun) -> None:
    tenant_objects = [
        o
        for o in kubernetes_objects(example_plan)
        if o["kind"] in NOT_AWAITED and o["metadata"].get("namespace", "").startswith("tenant-")
    ]
    assert {o["kind"] for o in tenant_objects} >= {"Deployment", "Service", "HelmRelease", "Kustomization"}
    for obj in tenant_objects:
        assert annotations_of(obj).items() >= SKIP_AWAIT.items(), (obj["kind"], obj["metadata"]["name"])


def test_platform_objects_stay_awaited(example_plan: ProgramRun) -> None:
    awaited = [o for o in kubernetes_objects(example_plan) if o["kind"] not in NOT_AWAITED]
    assert {"Namespace", "NetworkPolicy", "ResourceQuota", "RoleBinding", "ValidatingAdmissionPolicy"} <= {
        o["kind"] for o in awaited
    }
    # A tenant's own-domain certificate waits on the tenant's DNS delegation: the one platform-rendered
    # object that is not awaited (docs/adr/0012, components/model/core/await_rules.py).
    tenant_domain_certificates = {"tenant-domains-tls"}
    assert all(
        "pulumi.com/skipAwait" not in annotations_of(o)
        for o in awaited
        if not (o["kind"] == "Certificate" and o["metadata"]["name"] in tenant_domain_certificates)
    )
    releases = example_plan.of_type("kubernetes:helm.sh/v3:Release")
    assert all(not r.inputs.get("skipAwait") for r in releases)


def test_a_tenant_can_be_applied_alone_by_its_component_urn(dev_plan: ProgramRun) -> None:
    # docs/runbooks/kind.md: `pulumi up --target <urn> --target-dependents` retries one tenant.
    [acme] = [r for r in dev_plan.of_type("tenancy:index:Tenant") if r.name == "acme"]
    assert acme.urn == "urn:pulumi:dev::tenancy::pulumi:pulumi:Stack$tenancy:index:Tenant::acme"
