"""The preview identity may only dry-run (issue 28): `tenancy-preview-dry-run`, cluster-wide.

`pulumi preview` runs as a CI identity of its own (docs/bootstrap.md#4-ci-identities). The
Kubernetes provider previews a change with a server-side-apply dry run, a PATCH with `dryRun=All`,
which RBAC authorizes as `patch`, exactly like a real patch (dry-run requests are authorized like
real ones: https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run-authorization).
So the preview ClusterRole (deploy/identities/kubernetes-preview-clusterrole.yaml) would let anyone
who can run a pull-request preview job write to the cluster. Admission can tell the two apart: the
CEL `request` variable carries `dryRun` (k8s.io/apiserver v0.34.0 pkg/admission/plugin/cel/compile.go
declares `dryRun` on the request type; condition.go CreateAdmissionRequest always sets it from
`attr.IsDryRun()`; the field is AdmissionRequest.dryRun of admission.k8s.io/v1). This policy denies
every request of a preview identity (`tenancy:policy.previewIdentities`) that is not a dry run, on
every resource and subresource in every namespace and cluster-scoped.

Two things it cannot cover, both from the API server itself:
- ValidatingAdmissionPolicies never see requests on ValidatingAdmissionPolicy(Binding) and
  MutatingAdmissionPolicy(Binding) objects (k8s.io/apiserver v0.34.0
  pkg/admission/plugin/policy/generic/plugin.go: `admissionResources` is the default
  `excludedResources`, and Dispatch returns early for them), so this policy could not keep the
  preview identity from patching the bundle itself, this policy included. The preview ClusterRole
  therefore grants no `patch` on admissionregistration.k8s.io (tools/ci/preview_identity.py); a preview
  of those objects gets 403 from RBAC on its dry run and the provider falls back to a client-side
  diff (pulumi-kubernetes v4.32.0 provider/pkg/provider/provider.go, Create and Update:
  `if req.GetPreview() && apierrors.IsForbidden(awaitErr)` returns the inputs).
- The review resources kube-apiserver excludes from policies (tokenreviews, subjectaccessreviews,
  ...; kubernetes pkg/kubeapiserver/admission/exclusion/resources.go) persist nothing; the preview
  role grants none of them.

And the other side: the rules that let the platform identities write the platform's own objects
(`platformOwned`, `rbac`, `secretStores`, `flux`, the Flux part of `suspension`, the virtual
cluster's kubeconfig) let a preview identity's dry run through too (`as_platform`), so the preview
of a platform-owned quota or role binding is judged the way the real `pulumi up` will be. Dry runs
only: a real write by the preview is refused by those rules as well as by this one.
"""

from __future__ import annotations

from dataclasses import replace

from components.admission.base import MatchCondition, PolicyDefinition, ResourceRule, requester_in

POLICY = "tenancy-preview-dry-run"
# A server-side dry run (`?dryRun=All`): admission runs, nothing is persisted.
DRY_RUN = "request.dryRun == true"
# Every operation admission sees; CONNECT covers exec, attach, port-forward and proxy.
OPERATIONS = ["CREATE", "UPDATE", "DELETE", "CONNECT"]


def everything() -> ResourceRule:
    """Every resource and subresource of every group and version (`*/*` matches the resource itself too)."""
    return {"api_groups": ["*"], "api_versions": ["*"], "operations": OPERATIONS, "resources": ["*/*"]}


def preview_dry_run(users: list[str], groups: list[str]) -> str:
    """CEL: a dry run asked for by a preview identity."""
    return f"({DRY_RUN} && {requester_in(users, groups)})"


def policies(users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    """The dry-run-only rule, or nothing when no preview identity is configured."""
    if not users and not groups:
        return []
    return [
        PolicyDefinition(
            name=POLICY,
            rule="preview_dry_run",
            resource_rules=[everything()],
            match_conditions=[{"name": "preview-identity", "expression": requester_in(users, groups)}],
            validations=[
                {
                    "expression": DRY_RUN,
                    "message_expression": (
                        "request.userInfo.username + ' is a preview identity (tenancy:policy.previewIdentities)"
                        " and may only dry-run: ' + request.operation.lowerAscii() + ' of ' + request.kind.kind"
                        " + ' ' + request.name + ' refused'"
                    ),
                    "reason": "Forbidden",
                }
            ],
            cluster_wide=True,
        )
    ]


def as_platform(definitions: list[PolicyDefinition], users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    """`definitions` (rules the platform identities pass) are not applied to a preview identity's dry runs."""
    if not users and not groups:
        return definitions
    condition: MatchCondition = {"name": "not-a-preview-dry-run", "expression": f"!{preview_dry_run(users, groups)}"}
    return [replace(d, match_conditions=[*d.match_conditions, condition]) for d in definitions]
