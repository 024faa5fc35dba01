"""Which checked-in chart data answers for which chart, and the few exceptions, each with its reason.

The data lives in tests/charts/data/<chart>/<version>/ (SOURCE.md in each names the repository,
tag and files it was read from). It is looked up by the version the plan names, so a version bump
without new data finds nothing and fails (tests/charts/test_chart_values.py): the data moves with
the pin, never behind it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"

# (repository, chart) as the plan names them -> the folder under data/ (where the chart's own source
# lives is in each SOURCE.md: the AWS Load Balancer Controller chart is published to aws/eks-charts
# from kubernetes-sigs/aws-load-balancer-controller's helm/ folder).
PLATFORM_CHARTS: dict[tuple[str, str], str] = {
    ("https://fluxcd-community.github.io/helm-charts", "flux2"): "flux2",
    ("https://charts.jetstack.io", "cert-manager"): "cert-manager",
    ("oci://docker.io/envoyproxy", "gateway-helm"): "gateway-helm",
    ("https://kubernetes-sigs.github.io/external-dns", "external-dns"): "external-dns",
    ("https://aws.github.io/eks-charts", "aws-load-balancer-controller"): "aws-load-balancer-controller",
    ("https://cloudnative-pg.github.io/charts", "cloudnative-pg"): "cloudnative-pg",
    ("oci://ghcr.io/mariadb-operator/charts", "mariadb-operator"): "mariadb-operator",
    ("oci://ghcr.io/mariadb-operator/charts", "mariadb-operator-crds"): "mariadb-operator-crds",
    ("https://charts.loft.sh", "vcluster"): "vcluster",
}

# Charts a plan renders that are not the platform's to check: a tenant's chart app takes the
# tenant's values for the tenant's chart, and a refusal fails that tenant's release only (Flux
# reports it on the HelmRelease). The example tenants' charts come from registries that do not exist.
TENANT_CHARTS: dict[tuple[str, str], str] = {
    ("oci://registry.acme-corp.example/charts", "acme-web"): "tenants/acme.yaml's own chart app (example registry)",
}

# Keys the platform sets that the chart's values.yaml does not list, each proven read by the
# chart's templates at the pinned version: (chart folder, dotted path) -> where the chart reads it.
# A path covers the keys under it (a map the template renders whole).
INTENTIONAL_KEYS: dict[tuple[str, str], str] = {
    ("cert-manager", "serviceAccount.name"): (
        "commented out in values.yaml; read by templates/_helpers.tpl cert-manager.serviceAccountName (v1.21.1)"
    ),
    ("cert-manager", "serviceAccount.annotations"): (
        "commented out in values.yaml; read by templates/serviceaccount.yaml (v1.21.1): the GKE workload identity"
    ),
    ("gateway-helm", "config.envoyGateway.envoyProxy"): (
        "not in values.tmpl.yaml; read by templates/_helpers.tpl eg.default-envoy-gateway-config (v1.9.1), "
        "rendered whole with toYaml into the EnvoyGateway config (the proxies' default EnvoyProxy)"
    ),
    ("vcluster", "controlPlane.statefulSet.security.containerSecurityContext"): (
        "values.yaml lists three of its keys; templates/statefulset.yaml renders the whole map with toYaml (v0.20.0)"
    ),
}


def is_intentional(chart: str, path: str) -> bool:
    """Whether `path` of `chart` is, or lies under, a key listed in INTENTIONAL_KEYS."""
    return any(c == chart and (path == p or path.startswith(f"{p}.")) for c, p in INTENTIONAL_KEYS)


@dataclass(frozen=True)
class ChartData:
    """A chart's checked-in schema (None where the chart ships none) and values.yaml key tree."""

    name: str
    version: str
    schema: dict[str, Any] | None
    keys: Any


@cache
def chart_data(name: str, version: str) -> ChartData | None:
    """The data for one chart version, or None where none is checked in."""
    folder = DATA / name / version
    if not (folder / "values.keys.json").is_file():
        return None
    schema_file = folder / "values.schema.json"
    schema = json.loads(schema_file.read_text("utf-8")) if schema_file.is_file() else None
    return ChartData(name, version, schema, json.loads((folder / "values.keys.json").read_text("utf-8")))
