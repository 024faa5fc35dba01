"""The kubeconfig Secret the platform's GitOps Kustomization reads (issue 26): a tenant that could
write it would aim kustomize-controller at any server with any credential (request forgery from
the Flux namespace). Played through RBAC and admission on dev, prod and prod-aws in operator-lab's
virtual-cluster namespaces: the deployer (and a stray identity that may write Secrets) is refused,
the syncer and the platform write it, other Secrets stay the deployer's to write."""

from __future__ import annotations

from typing import Any

import pytest

from components.vcluster.values import KUBECONFIG_SECRET, SYNCER_ACCOUNT
from tests.admission.layers import Cluster, cluster, platform_identity
from tests.rbac import Subject
from tools.plan.harness import ProgramRun

SECRETS = "/v1/secrets"
NAMESPACES = ["tenant-operator-lab-dev", "tenant-operator-lab-prod"]


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


def _secret(name: str = KUBECONFIG_SECRET, server: str = "https://169.254.169.254") -> dict[str, Any]:
    config = f"apiVersion: v1\nkind: Config\nclusters: [{{name: x, cluster: {{server: '{server}'}}}}]\n"
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"config": config}}


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_the_deployer_may_not_forge_the_kubeconfig(stack: Cluster, namespace: str) -> None:
    deployer = Subject("ServiceAccount", "deployer", namespace)
    for operation, old in (("CREATE", None), ("UPDATE", _secret(server="https://vcluster.tenant:443"))):
        outcome = stack.attempt(deployer, operation, SECRETS, _secret(), namespace, old=old)
        assert outcome.denied_by("tenancy-vcluster-kubeconfig", "only the virtual cluster (its syncer)"), (
            stack.stack,
            operation,
            outcome,
        )
    # Its own Secrets under any other name are its to write.
    assert stack.attempt(deployer, "CREATE", SECRETS, _secret("app-config"), namespace).stopped_by is None
    # Deleting it only breaks the tenant's own environment until the syncer writes it again.
    assert stack.attempt(deployer, "DELETE", SECRETS, None, namespace, old=_secret()).stopped_by is None


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_the_syncer_and_the_platform_write_it(stack: Cluster, namespace: str) -> None:
    syncer = Subject("ServiceAccount", SYNCER_ACCOUNT, namespace)
    outcome = stack.attempt(syncer, "CREATE", SECRETS, _secret(server="https://vcluster.ns:443"), namespace)
    assert outcome.stopped_by is None, outcome.decision.denials
    outcome = stack.attempt(platform_identity(stack.stack), "UPDATE", SECRETS, _secret(), namespace, old=_secret())
    assert outcome.stopped_by is None, outcome.decision.denials


def test_another_namespaces_syncer_may_not(stack: Cluster) -> None:
    """The syncer of dev writing prod's kubeconfig: RBAC (its Role is namespaced) stops it first."""
    dev_syncer = Subject("ServiceAccount", SYNCER_ACCOUNT, NAMESPACES[0])
    assert stack.attempt(dev_syncer, "CREATE", SECRETS, _secret(), NAMESPACES[1]).stopped_by == "rbac"
