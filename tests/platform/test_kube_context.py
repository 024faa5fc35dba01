"""A local stack names the kubeconfig context it applies to (issue 24).

Without `tenancy:cluster.context` the Kubernetes provider takes whatever context is current, so
`make up` on a laptop whose current context is a production cluster would apply the dev stack
there. The program refuses such a local stack before registering anything, naming the key.
"""

from __future__ import annotations

import json

import pytest
import yaml

from components.model.core.errors import ConfigurationError
from tests.support import plan
from tools.plan.harness import PROJECT_ROOT, ProgramRun


def test_the_dev_stack_applies_to_its_kind_cluster_only(dev_plan: ProgramRun) -> None:
    document = yaml.safe_load((PROJECT_ROOT / "Pulumi.dev.yaml").read_text(encoding="utf-8"))
    cluster = document["config"]["tenancy:cluster"]
    kind = yaml.safe_load((PROJECT_ROOT / "kind" / "cluster.yaml").read_text(encoding="utf-8"))
    # kind names a cluster's context `kind-<name>` (kind's kubeconfig export).
    assert cluster["context"] == f"kind-{kind['name']}"
    [provider] = dev_plan.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["context"] == cluster["context"]


def test_a_local_stack_without_a_context_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigurationError) as caught:
        plan("dev", cluster=json.dumps({"name": "tenancy"}))
    [problem] = caught.value.problems
    assert str(problem).startswith("Pulumi.dev.yaml: tenancy:cluster.context: this stack must name the kubeconfig")
    assert "kind-tenancy" in problem.message
