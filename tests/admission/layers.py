"""Play a request through the layers a real API server applies, in order, for the attack tests.

1. RBAC (tests/rbac.py over the rendered roles and bindings): the identity must hold the verb.
2. Mutating admission, then validating admission (tests/cel_admission.py over the rendered
   policy bundle), with the identity's username and groups in `request.userInfo`.
3. Pod Security Admission is not evaluated offline: none of the attacks here is about what the
   `restricted` profile checks (nodeName, priority classes, Services, Ingress, Certificates,
   Secrets, PVCs are all outside it), and the legitimate pods here satisfy `restricted`.

Built-in mutating plugins that matter to a rule are named in the test that relies on them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from components.model.core.labels import AUTHORIZED_DOMAINS_KEY
from components.model.settings.admission import PolicySettings
from tests.cel_admission import AdmissionChain, Decision, Request
from tests.rbac import Authorizer, Subject, UserInfo, user_info
from tests.registry_strategies import prepare_for_create, prepare_for_update
from tests.support import kubernetes_objects, objects_of_kind
from tools.plan.harness import ProgramRun, stack_config

ACME_DEV, ACME_PROD = "tenant-acme-dev", "tenant-acme-prod"
ACME_ADMIN = Subject("Group", "acme-admins")
ACME_OPERATOR = Subject("Group", "acme-oncall")
VERBS = {"CREATE": "create", "UPDATE": "update", "DELETE": "delete"}


@dataclass
class Outcome:
    """Which layer stopped the request ('rbac', 'admission') or None when it was admitted."""

    stopped_by: str | None
    decision: Decision = field(default_factory=Decision)

    def denied_by(self, policy: str, text: str = "") -> bool:
        return self.stopped_by == "admission" and any(
            d.startswith(f"{policy}: ") and text in d for d in self.decision.denials
        )


@dataclass
class Cluster:
    """One example stack's rendered RBAC and admission bundle."""

    stack: str
    run: ProgramRun
    authz: Authorizer
    chain: AdmissionChain

    def namespace(self, name: str) -> dict[str, Any]:
        [found] = [n for n in objects_of_kind(self.run, "Namespace") if n["metadata"]["name"] == name]
        return found

    def own_hostname(self, namespace: str) -> str:
        """A name the namespace's environment serves: the first of its authorized domains (dev
        serves `acme-dev.<suffix>`, prod `acme.<suffix>` and the tenant's domains)."""
        annotations = self.namespace(namespace)["metadata"]["annotations"]
        return str(annotations[AUTHORIZED_DOMAINS_KEY].split(",")[0])

    def attempt(
        self,
        who: Subject | UserInfo,
        operation: str,
        resource: str,
        obj: dict[str, Any] | None,
        namespace: str,
        old: dict[str, Any] | None = None,
        subresource: str = "",
        verb: str | None = None,
        dry_run: bool = False,
    ) -> Outcome:
        """RBAC, then admission, for `operation` on `resource` (`group/version/plural`) in `namespace`.

        `namespace` is '' for cluster-scoped objects (Namespaces): only ClusterRoleBindings apply.
        `verb` is what RBAC checks when it is not the operation's own (`patch` for a server-side
        apply, whose admission operation is UPDATE, or CREATE when the object is new); `dry_run`
        is `?dryRun=All`, authorized like the real request.
        """
        user = user_info(who)
        group, _, plural = resource.split("/")
        target = f"{plural}/{subresource}" if subresource else plural
        if not self.authz.allowed(user, verb or VERBS[operation], target, namespace, group=group):
            return Outcome("rbac")
        source = obj if obj is not None else old
        assert source is not None
        for o in (obj, old):
            if o is not None and namespace:
                o.setdefault("metadata", {}).setdefault("namespace", namespace)
        if operation == "UPDATE" and subresource and obj is not None and old is not None:
            # What the registry keeps of a subresource write, before validating admission sees it.
            obj = prepare_for_update(group, plural, subresource, obj, old)
        if operation == "CREATE" and not subresource and obj is not None:
            # ... and what it makes of a new object (a claim's data sources as served).
            obj = prepare_for_create(group, plural, obj)
        request = Request(
            operation,
            resource,
            source["kind"],
            object=obj,
            old_object=old,
            # Cluster-scoped requests ('' namespace, e.g. Namespaces themselves) carry no namespaceObject.
            namespace_object=self.namespace(namespace) if namespace else None,
            subresource=subresource,
            username=user.name,
            groups=list(user.groups),
            dry_run=dry_run,
        )
        decision = self.chain.admit(request)
        return Outcome(None if decision.allowed else "admission", decision)


def stack_policy(stack: str, **changes: Any) -> str:
    """The stack's own `tenancy:policy` (JSON) with `changes` on top, for `plan(stack, policy=...)`.

    Replacing the whole setting would drop the stack's platform identities, which GKE and EKS
    stacks must keep (the program refuses them otherwise).
    """
    config, _ = stack_config(stack)
    return json.dumps({**json.loads(config.get("tenancy:policy", "{}")), **changes})


def platform_identity(stack: str) -> UserInfo:
    """Who runs `pulumi up` on this stack, as its `tenancy:policy.platformIdentities` names it."""
    identities = PolicySettings.model_validate(json.loads(stack_policy(stack))).platform_identities
    if identities.users:
        return UserInfo(identities.users[0], ("system:authenticated",))
    return UserInfo("tenancy-ci", (identities.groups[0], "system:authenticated"))


def platform_grant(stack: str) -> list[dict[str, Any]]:
    """What the cloud gives the platform identity outside the rendered objects: cluster-admin.

    GKE grants it through IAM (roles/container.admin), EKS through the access entry's
    AmazonEKSClusterAdminPolicy, kind through the admin kubeconfig; modelled as the upstream
    `cluster-admin` ClusterRole bound to the identity.
    """
    identity = platform_identity(stack)
    subject = (
        {"kind": "Group", "name": identity.groups[0]}
        if identity.name == "tenancy-ci"
        else {"kind": "User", "name": identity.name}
    )
    return [
        {
            "kind": "ClusterRole",
            "metadata": {"name": "cluster-admin"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
        },
        {
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "platform-cluster-admin"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [subject],
        },
    ]


def cluster(run: ProgramRun, extra: list[dict[str, Any]] | None = None) -> Cluster:
    """The stack's cluster; `extra` plants objects (a stray grant) beside the rendered ones."""
    objects = kubernetes_objects(run) + platform_grant(run.stack) + list(extra or [])
    return Cluster(run.stack, run, Authorizer(objects), AdmissionChain(objects))


# Who writes tenant objects: people in dev, the GitOps deployer in prod (humans are read-only there).
WRITERS = [(ACME_ADMIN, ACME_DEV), (Subject("ServiceAccount", "deployer", ACME_PROD), ACME_PROD)]
