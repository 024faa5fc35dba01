"""What the security groups of a rendered AWS plan admit, for the database egress tests.

nca sees NetworkPolicies, not security groups: on AWS the tenant's NetworkPolicy opens the DB
subnets, and the groups decide which instance a pod reaches (docs/adr/0009). The model, after
the EC2 and Security Groups for Pods documentation:

- A pod a SecurityGroupPolicy of its namespace selects (`podSelector.matchLabels` all on the pod;
  an empty selector selects every pod) carries exactly the policy's `groupIds`; any other pod
  carries the node's groups (`NODE`).
- An instance admits a pod on a port when one of the instance's groups has an ingress rule for
  that port whose source is the group itself (`self`: the pod is a member) or a group the pod
  carries. Groups the plan does not render (the stack's `aws.dbSecurityGroupIds`, for the runner)
  admit no pod: the documented requirement on them.
- Group ids are the mocks' (`<resource name>-id`, tools/plan/harness.py).
"""

from __future__ import annotations

from typing import Any

from tests.support import objects_of_kind
from tools.plan.harness import ProgramRun, RecordedResource

NODE = "node-security-group"


def pod_groups(run: ProgramRun, namespace: str, labels: dict[str, str] | None = None) -> set[str]:
    """The groups a pod with `labels` in `namespace` carries."""
    pod_labels = labels or {}
    policies = objects_of_kind(run, "SecurityGroupPolicy", namespace)
    for policy in policies:
        selector = policy["spec"].get("podSelector")
        assert selector is not None and set(selector) <= {"matchLabels"}, f"unmodelled selector: {selector}"
        if all(pod_labels.get(key) == value for key, value in selector.get("matchLabels", {}).items()):
            return set(policy["spec"]["securityGroups"]["groupIds"])
    return {NODE}


def _rules(run: ProgramRun) -> dict[str, list[dict[str, Any]]]:
    return {
        f"{g.name}-id": list(g.inputs.get("ingress", [])) for g in run.of_type("aws:ec2/securityGroup:SecurityGroup")
    }


def admits(
    run: ProgramRun, namespace: str, instance: RecordedResource, port: int, labels: dict[str, str] | None = None
) -> bool:
    """Whether `instance`'s groups admit a pod with `labels` in `namespace` on `port`."""
    carried = pod_groups(run, namespace, labels)
    rules = _rules(run)
    for group in instance.inputs.get("vpcSecurityGroupIds", []):
        for rule in rules.get(group, []):
            if not (rule["protocol"] in ("tcp", "-1") and rule["fromPort"] <= port <= rule["toPort"]):
                continue
            assert not rule.get("cidrBlocks") and not rule.get("ipv6CidrBlocks"), f"unmodelled CIDR rule: {rule}"
            sources = set(rule.get("securityGroups", [])) | ({group} if rule.get("self") else set())
            if sources & carried:
                return True
    return False
