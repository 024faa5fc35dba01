"""Provider safety: the cluster's identity is pinned, and no resource can use a default provider.

`cluster_identifier` is what keeps a renamed or switched kubeconfig context from replacing the
Kubernetes provider (and so every object of every tenant); `pulumi:disable-default-providers`
makes the engine refuse any kubernetes, gcp or aws resource that did not get an explicit provider,
instead of quietly building one from ambient credentials. The engine enforces the second setting
only with the real CLI, so the mocked runs check what it would enforce: every resource of those
packages names an explicit provider of this stack.
"""

from __future__ import annotations

import json

import pytest
import yaml

from tests.support import plan
from tools.plan.harness import PROJECT_ROOT, ProgramRun

STACKS = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in PROJECT_ROOT.glob("Pulumi.*.yaml"))
GUARDED_PACKAGES = {"kubernetes", "gcp", "aws"}


@pytest.fixture(scope="module", params=STACKS)
def run(request: pytest.FixtureRequest) -> ProgramRun:
    return plan(request.param)


def test_every_stack_file_disables_default_providers_for_kubernetes_gcp_and_aws() -> None:
    for stack in STACKS:
        document = yaml.safe_load((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
        disabled = document["config"].get("pulumi:disable-default-providers")
        assert isinstance(disabled, list), f"Pulumi.{stack}.yaml: pulumi:disable-default-providers is not a list"
        assert set(disabled) >= GUARDED_PACKAGES, f"Pulumi.{stack}.yaml: {disabled}"


def test_kubernetes_provider_pins_the_cluster_identity(run: ProgramRun) -> None:
    providers = run.of_type("pulumi:providers:kubernetes")
    assert len(providers) == 1
    stack_file = yaml.safe_load((PROJECT_ROOT / f"Pulumi.{run.stack}.yaml").read_text(encoding="utf-8"))
    cluster_name = (stack_file["config"].get("tenancy:cluster") or {}).get("name", "tenancy")
    assert providers[0].inputs["clusterIdentifier"] == cluster_name


def test_cluster_identity_does_not_follow_the_kubeconfig_context(dev_plan: ProgramRun) -> None:
    # Switching the context changes the provider's context input, never its identity.
    before = dev_plan.of_type("pulumi:providers:kubernetes")[0].inputs
    after = (
        plan("dev", cluster='{"name": "tenancy", "context": "kind-renamed"}')
        .of_type("pulumi:providers:kubernetes")[0]
        .inputs
    )
    assert after["context"] == "kind-renamed" and before.get("context") != "kind-renamed"
    assert before["clusterIdentifier"] == after["clusterIdentifier"] == "tenancy"


def test_every_guarded_resource_has_an_explicit_provider(run: ProgramRun) -> None:
    provider_urns = {r.urn for r in run.resources if r.type.startswith("pulumi:providers:")}
    for resource in run.resources:
        package = resource.type.split(":")[0]
        if package in GUARDED_PACKAGES and resource.custom:
            assert resource.provider, f"{resource.type} {resource.name} would use a default provider"
            # A provider reference is "<provider urn>::<provider id>".
            assert resource.provider.rsplit("::", 1)[0] in provider_urns, (resource.name, resource.provider)


def test_the_provider_client_rate_comes_from_the_stack(dev_plan: ProgramRun) -> None:
    """The client's rate limit bounds first previews and first `up`s (docs/scale.md): the program sets
    it on the one provider, from `cluster.clientQps` and `cluster.clientBurst`, above the provider's
    own 50/120."""
    # Provider inputs travel JSON-encoded, as the provider reads `kubernetes:config:kubeClientSettings`.
    default = json.loads(dev_plan.of_type("pulumi:providers:kubernetes")[0].inputs["kubeClientSettings"])
    assert default == {"qps": 200, "burst": 400}
    configured = plan(
        "dev", cluster='{"name": "tenancy", "context": "kind-tenancy", "clientQps": 80, "clientBurst": 160}'
    )
    provider = configured.of_type("pulumi:providers:kubernetes")[0]
    assert json.loads(provider.inputs["kubeClientSettings"]) == {"qps": 80, "burst": 160}


@pytest.mark.parametrize(
    ("cluster", "field"),
    [('{"clientQps": 0}', "cluster.clientQps"), ('{"clientBurst": 0}', "cluster.clientBurst")],
)
def test_a_rate_that_would_stop_the_provider_is_refused_by_field(cluster: str, field: str) -> None:
    from components.model.catalog.stack_config import parse_settings
    from components.model.core.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as raised:
        parse_settings({"tenancy:domainSuffix": "tenants.example.com", "tenancy:cluster": cluster}, "Pulumi.test.yaml")
    assert any(field in str(problem) and "Pulumi.test.yaml" in str(problem) for problem in raised.value.problems)
