"""Role-chaining trust (components/clouds/aws/trust_rules.py): every role the External Secrets
controller assumes on Pod Identity allows the tagged chained call STS makes, judged by the IAM
evaluator over the rendered prod-aws plan."""

from __future__ import annotations

import json

from components.clouds.aws.trust_rules import CONTROLLER_CHAINING, chained_actions
from tests.clouds.iam_policy import Request, allowed
from tests.clouds.test_identity_reach import _controller, _run
from tests.support import objects_of_kind
from tools.plan.harness import MOCK_ACCOUNT


def test_pod_identity_chaining_needs_tag_session() -> None:
    rule = CONTROLLER_CHAINING["podIdentity"]
    assert set(rule.actions) == {"sts:AssumeRole", "sts:TagSession"}
    assert rule.source.startswith("https://docs.aws.amazon.com/")
    # IRSA: ESO's jwt auth is one AssumeRoleWithWebIdentity, nothing chained.
    assert chained_actions("irsa") == []


def test_every_role_a_secret_store_names_allows_the_chained_call() -> None:
    run = _run("prod-aws")
    controller = _controller("prod-aws")
    assert controller is not None
    trusts = {r.name: json.loads(r.inputs["assumeRolePolicy"]) for r in run.of_type("aws:iam/role:Role") if not r.read}
    stores = [*objects_of_kind(run, "SecretStore"), *objects_of_kind(run, "ClusterSecretStore")]
    named = {
        store["spec"]["provider"]["aws"]["role"]
        for store in stores
        if "role" in store["spec"]["provider"].get("aws", {})
    }
    assert named, "prod-aws renders stores that name a role"
    assert named <= {f"arn:aws:iam::{MOCK_ACCOUNT}:role/{role}" for role in trusts}
    for role, trust in trusts.items():
        arn = f"arn:aws:iam::{MOCK_ACCOUNT}:role/{role}"
        if arn not in named:
            continue
        for action in chained_actions("podIdentity"):
            assert allowed([trust], Request(action, arn, ("AWS", controller))), (role, action)
