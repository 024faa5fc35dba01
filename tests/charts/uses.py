"""Every chart a plan installs or renders, with the values it gives it.

Two ways a chart reaches a cluster: a Helm release Pulumi installs (`kubernetes:helm.sh/v3:Release`:
Flux, the edge's controllers, `tenancy:installs`) and a Flux HelmRelease helm-controller installs
(a virtual cluster, a tenant's chart app). Both end in `helm install` with these values, so both
are checked against the chart at the version they name. A chart is known by where it comes from
(repository URL and chart name), not by its release's name: the same chart under two release
names is one chart, and a chart of the same name from another repository is another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support import kubernetes_objects
from tools.plan.harness import ProgramRun

RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"


@dataclass(frozen=True)
class ChartUse:
    """One chart at one version with the values one release gives it."""

    # Where it is in the plan: `Release <resource name>` or `HelmRelease <namespace>/<name>`.
    origin: str
    # The Helm repository URL, or the OCI reference without the chart's name.
    repository: str
    chart: str
    version: str
    values: dict[str, Any]


def _release_use(inputs: dict[str, Any], name: str) -> ChartUse:
    chart = str(inputs["chart"])
    if chart.startswith("oci://"):
        repository, _, chart = chart.rpartition("/")
    else:
        repository = str((inputs.get("repositoryOpts") or {}).get("repo", ""))
    return ChartUse(f"Release {name}", repository, chart, str(inputs["version"]), inputs.get("values") or {})


def _helm_release_use(release: dict[str, Any], sources: dict[tuple[str, str, str], dict[str, Any]]) -> ChartUse:
    meta, spec = release["metadata"], release["spec"]
    namespace = meta["namespace"]
    origin = f"HelmRelease {namespace}/{meta['name']}"
    values = spec.get("values") or {}
    if "chartRef" in spec:
        # An OCIRepository holds one chart: its URL ends in the chart's name, its tag is the version.
        ref = spec["chartRef"]
        source = sources[(ref["kind"], namespace, ref["name"])]["spec"]
        repository, _, chart = str(source["url"]).rpartition("/")
        return ChartUse(origin, repository, chart, str(source["ref"]["tag"]), values)
    chart_spec = spec["chart"]["spec"]
    ref = chart_spec["sourceRef"]
    source = sources[(ref["kind"], ref.get("namespace", namespace), ref["name"])]["spec"]
    return ChartUse(origin, str(source["url"]), str(chart_spec["chart"]), str(chart_spec["version"]), values)


def chart_uses(run: ProgramRun) -> list[ChartUse]:
    """Every Helm release and every rendered Flux HelmRelease of the plan."""
    uses = [_release_use(r.inputs, r.name) for r in run.of_type(RELEASE_TYPE)]
    objects = kubernetes_objects(run)
    sources = {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] in ("HelmRepository", "OCIRepository")
    }
    uses += [_helm_release_use(o, sources) for o in objects if o["kind"] == "HelmRelease"]
    return uses
