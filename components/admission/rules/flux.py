"""Rule 10, Flux objects: a tenant's Flux object acts as the tenant's deployer, in its own namespace.

One Flux serves every tenant. The lockdown (components/delivery/flux.py) only covers what a tenant
leaves out: `--default-service-account` applies when `serviceAccountName` is empty, and
`--no-cross-namespace-refs` refuses references to other namespaces. Everything a tenant *writes*
into a HelmRelease, Kustomization or source that makes a controller act as itself, or as an
account other than the deployer, is refused here:

- `spec.kubeConfig` (HelmRelease, Kustomization): the controller applies to whatever cluster the
  kubeconfig names, with its credentials, instead of impersonating the deployer here. A Secret the
  tenant writes may carry an inline token or client certificate (fluxcd/pkg runtime/client copies
  both; file references such as `tokenFile` are rejected by recent Flux and exec plugins are dropped
  unless `--insecure-kubeconfig-exec`), and `kubeConfig.configMapRef` with provider aws, gcp or
  azure makes the controller log in to a cluster with its *own* cloud identity. Either way the
  deployer's RBAC no longer bounds what the object does.
- `spec.provider` other than `generic` (OCIRepository, HelmRepository, Bucket, ImageRepository) or
  `generic`/`github` (GitRepository, where `github` reads a GitHub App from the tenant's own Secret):
  aws, gcp and azure make source-controller authenticate with the controller's cloud identity,
  which can read every registry or bucket the controller's role can, other tenants' included.
- `spec.decryption` without `secretRef` (Kustomization): SOPS then asks the cloud KMS with the
  controller's identity, a decryption oracle for any key the controller may use.
- `spec.serviceAccountName` other than the tenant's `deployer` (HelmRelease, Kustomization),
  including none: Flux impersonates any account of the object's namespace, and some hold more
  than the deployer (the virtual cluster's syncer); with none, a Flux without the lockdown flag
  runs the object as the controller itself (stack_checks.flux_problems only trusts the
  acknowledgement).
- `sourceRef.namespace`, `chart.spec.sourceRef.namespace`, `chartRef.namespace` naming another
  namespace: `--no-cross-namespace-refs` refuses them on a locked-down Flux, but on a stack that
  only acknowledges the lockdown (`fluxLockdownAcknowledged`) nothing here checks the flag.

Who and what passes: the platform identities (`tenancy:policy.platformIdentities`), which render
Flux objects from tenant files (the GitOps Kustomization of a virtual cluster environment sets
`kubeConfig` to the virtual cluster's own kubeconfig); a tenant cannot act as them. The
`tenancy.io/platform-owned` label is not this rule's exemption but a lock of its own (rules/
platform_owned.py, which the platform's GitOps GitRepository and Kustomization carry since red team
round 8). An UPDATE that leaves `spec` as it was passes, so Flux controllers add and remove their
finalizers, and an object stored before this rule can still be deleted.
"""

from __future__ import annotations

from components.admission.base import (
    TENANT_VARIABLE,
    PolicyDefinition,
    ResourceRule,
    Validation,
    literal_list,
    resource_rule,
)
from components.guardrails.access import DEPLOYER_ACCOUNT

_WRITE = ["CREATE", "UPDATE"]
_SOURCES = ["gitrepositories", "helmrepositories", "ocirepositories", "buckets"]
_APPLIERS = "request.kind.kind in ['HelmRelease', 'Kustomization']"


def platform_requester(users: list[str], groups: list[str]) -> str:
    """CEL: the request comes from one of the platform identities."""
    return (
        f"request.userInfo.username in {literal_list(users)} || (has(request.userInfo.groups)"
        f" && request.userInfo.groups.exists(g, g in {literal_list(groups)}))"
    )


def flux_resource_rules() -> list[ResourceRule]:
    """Every Flux kind a tenant could write that makes a controller act (HelmCharts are the controller's)."""
    return [
        resource_rule("helm.toolkit.fluxcd.io", ["helmreleases"], _WRITE),
        resource_rule("kustomize.toolkit.fluxcd.io", ["kustomizations"], _WRITE),
        resource_rule("source.toolkit.fluxcd.io", _SOURCES, _WRITE),
        resource_rule("image.toolkit.fluxcd.io", ["imagerepositories"], _WRITE),
    ]


def _message(text: str) -> str:
    return f"request.kind.kind + ' ' + object.metadata.name + ' of tenant ' + variables.tenant + ' {text}'"


def _same_namespace(ref: str) -> str:
    return f"!has({ref}.namespace) || {ref}.namespace == request.namespace"


def _validations() -> list[Validation]:
    spec = "object.spec"
    chart_ref = f"!has({spec}.chart) || !has({spec}.chart.spec) || !has({spec}.chart.spec.sourceRef)"
    return [
        {
            "expression": f"!has({spec}.kubeConfig)",
            "message_expression": _message(
                "may not set spec.kubeConfig: the controller would apply with the credentials of the kubeconfig "
                "or its own cloud identity instead of as the deployer"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": f"!has({spec}.provider) || {spec}.provider == 'generic'"
            f" || (request.kind.kind == 'GitRepository' && {spec}.provider == 'github')",
            "message_expression": _message(
                "may not set spec.provider ' + object.spec.provider + ': it would authenticate with the "
                "controller\\'s own cloud identity; use provider generic with a secretRef"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": f"!has({spec}.decryption) || has({spec}.decryption.secretRef)",
            "message_expression": _message(
                "must name the keys of spec.decryption in a secretRef: without one SOPS decrypts with the "
                "controller\\'s cloud identity"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": f"!({_APPLIERS}) || (has({spec}.serviceAccountName)"
            f" && {spec}.serviceAccountName == '{DEPLOYER_ACCOUNT}')",
            "message_expression": _message(
                f"must set spec.serviceAccountName: {DEPLOYER_ACCOUNT} (it runs as that account)"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": f"(!has({spec}.sourceRef) || {_same_namespace(f'{spec}.sourceRef')})"
            f" && (!has({spec}.chartRef) || {_same_namespace(f'{spec}.chartRef')})"
            f" && ({chart_ref} || {_same_namespace(f'{spec}.chart.spec.sourceRef')})",
            "message_expression": _message("may only use sources of its own namespace (' + request.namespace + ')"),
            "reason": "Forbidden",
        },
    ]


def policies(users: list[str], groups: list[str]) -> list[PolicyDefinition]:
    """One policy over the Flux kinds; it reads only the object, the old object and who asks."""
    return [
        PolicyDefinition(
            name="tenancy-flux",
            rule="flux",
            resource_rules=flux_resource_rules(),
            match_conditions=[
                {
                    "name": "tenant-authored",
                    "expression": f"!({platform_requester(users, groups)})",
                },
                {
                    # Finalizers, annotations and labels only: the spec that acts is as it was.
                    "name": "spec-changed",
                    "expression": "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec)"
                    " || object.spec != oldObject.spec",
                },
            ],
            variables=[TENANT_VARIABLE],
            validations=_validations(),
        )
    ]
