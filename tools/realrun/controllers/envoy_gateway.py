"""Envoy Gateway in the real run: its controller as its chart runs it, and the checks of what it attached.

The binary is upstream's `envoy-gateway` (realrun/envoy-gateway, the version the stack's gateway-helm
chart pins). The chart is rendered from the module's own `charts/gateway-helm` with the values the
stack installs it with (components/model/settings/edge.py), and the run does what a Helm install
would before the controller's pod starts: the chart's CRDs the seed lacks (Envoy Gateway's own, and
the Gateway API kinds of its experimental channel that the seeded standard channel does not have),
the certgen hook Job's run (`envoy-gateway certgen`, as its own service account), the EnvoyGateway
ConfigMap and the topology injector's MutatingWebhookConfiguration (certgen writes its CA into it).
Then the controller runs as its chart's `envoy-gateway` account with the chart's arguments and env.

Two paths are fixed in the binary: the control plane's certificates are read from `/certs` (the
chart's Secret volume) and the Wasm cache is made under `/var/lib/eg`. The process therefore runs in
a private mount namespace, as the kubelet would give its container: a tmpfs over `/certs` with the
`envoy-gateway` Secret certgen wrote, and one over `/var/lib`; nothing is written on the host but
the empty `/certs` mount point where it does not exist, removed when the run stops.

Its listeners are upstream's and bind every interface (xDS 18000, Wasm 18002, health 8081, metrics
19001, the injector's webhook 9443; constants in v1.9.1 internal/xds/runner, internal/wasm,
internal/provider/kubernetes, api/v1alpha1): nothing connects to them here (the proxies are kwok's
pods, the webhook's Service does not exist and its failurePolicy is Ignore), and nothing is sent
beyond loopback.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from components.model.core.labels import TENANT_KEY
from components.model.settings.edge import EDGE_CLOUDS
from components.model.settings.stack import StackSettings
from tools.realrun import seed
from tools.realrun.cluster import ControlPlane
from tools.realrun.controllers import chart
from tools.realrun.controllers.binaries import ENVOY_GATEWAY_VERSION
from tools.realrun.kube import dynamic
from tools.realrun.toolchain import KUBERNETES_VERSION, module_dir

MODULE = "github.com/envoyproxy/gateway"
GATEWAY_API = "gateway.networking.k8s.io"
ENVOY_API = "gateway.envoyproxy.io"
# The kinds Envoy Gateway reconciles (Gateway API's and its own): the stand-in never writes on them.
SERVED = frozenset(
    {
        *(
            (GATEWAY_API, kind)
            for kind in (
                "GatewayClass",
                "Gateway",
                "HTTPRoute",
                "GRPCRoute",
                "TLSRoute",
                "TCPRoute",
                "UDPRoute",
                "ListenerSet",
                "ReferenceGrant",
                "BackendTLSPolicy",
            )
        ),
        *(
            (ENVOY_API, kind)
            for kind in (
                "EnvoyProxy",
                "ClientTrafficPolicy",
                "BackendTrafficPolicy",
                "SecurityPolicy",
                "EnvoyExtensionPolicy",
                "EnvoyPatchPolicy",
                "Backend",
                "HTTPRouteFilter",
            )
        ),
    }
)
# The field manager of its status writes and of the proxy objects it applies (its binary's name;
# internal/infrastructure/kubernetes/infra_client.go FieldOwner("envoy-gateway")).
MANAGER = "envoy-gateway"
# Who writes route and ListenerSet statuses for the stack's class (the chart's `gateway.controllerName`).
CONTROLLER_NAME = "gateway.envoyproxy.io/gatewayclass-controller"
# The release tooling fills values.tmpl.yaml in (upstream tools/make/helm.mk `helm-generate`:
# GatewayImage=${IMAGE}:${TAG} GatewayImagePullPolicy=${IMAGE_PULL_POLICY} envsubst); a release's
# image is docker.io/envoyproxy/gateway:<tag>, pulled IfNotPresent. Nothing pulls it here.
RELEASE_IMAGE = "docker.io/envoyproxy/gateway"
RELEASE_PULL_POLICY = "IfNotPresent"
# Paths the binary reads or writes, fixed in its source (see the module docstring).
CERTS = Path("/certs")
CACHE_PARENT = Path("/var/lib")
CERT_FILES = ("ca.crt", "tls.crt", "tls.key")
# What in a controller's log is a refusal by the API server: RBAC, admission, validation.
# (RBAC: "... is forbidden: User ... cannot ..."; a policy: "... denied request: ..."; a webhook:
# "admission webhook ... denied the request").
REFUSALS = ("is forbidden", "denied request", "denied the request")
CERTGEN_SECONDS = 120


@dataclass(frozen=True)
class Started:
    """The running controller and certgen's run: their identities, the CRDs added, what certgen made."""

    controller: chart.ChartIdentity
    certgen: chart.ChartIdentity
    crds_added: tuple[str, ...]
    config: Path

    def summary(self) -> str:
        added = f"; its chart's CRDs added: {len(self.crds_added)}" if self.crds_added else ""
        return (
            f"Envoy Gateway {ENVOY_GATEWAY_VERSION} as {self.controller.username} ({len(self.controller.objects)} "
            f"objects of its chart), args {' '.join(self.controller.args)}; certgen ran as "
            f"{self.certgen.username} ({len(self.certgen.objects)} objects){added}"
        )


def runs(settings: StackSettings) -> bool:
    """Whether the stack installs Envoy Gateway: the local cloud's controller with the Gateway on."""
    gateway = settings.edge.gateway
    facts = settings.edge_facts()
    install = gateway.controller or facts.controller
    return gateway.enabled and install is not None and install.chart == "gateway-helm"


def chart_values(settings: StackSettings) -> dict[str, Any]:
    """The values the stack installs gateway-helm with (its pinned ChartInstall)."""
    install = settings.edge.gateway.controller or settings.edge_facts().controller
    assert install is not None
    return dict(install.values)


def release_values_file(template: str) -> str:
    """values.yaml as a release of the chart has it: values.tmpl.yaml with the image filled in."""
    if "${GatewayImage}" not in template or "${GatewayImagePullPolicy}" not in template:
        raise chart.ChartError("gateway-helm's values.tmpl.yaml no longer has ${GatewayImage} and its pull policy")
    return template.replace("${GatewayImage}", f"{RELEASE_IMAGE}:{ENVOY_GATEWAY_VERSION}").replace(
        "${GatewayImagePullPolicy}", RELEASE_PULL_POLICY
    )


def staged_chart(source: Path, folder: Path) -> Path:
    """A copy of the module's chart folder with its release values.yaml (chart.render copies it again)."""
    staged = folder / "gateway-helm-source" / source.name
    shutil.rmtree(staged.parent, ignore_errors=True)
    shutil.copytree(source, staged)
    for path in [staged, *staged.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (staged / "values.yaml").write_text(release_values_file((staged / "values.tmpl.yaml").read_text()))
    return staged


def _one(documents: Iterable[Mapping[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [dict(d) for d in documents if d.get("kind") == kind and d["metadata"]["name"] == name]
    if len(found) != 1:
        raise chart.ChartError(f"the chart renders {len(found)} {kind} named {name}, not one")
    return found[0]


def host_args(args: Iterable[str], config_mount: str, config_folder: Path) -> list[str]:
    """The chart's arguments with the config volume's mount path (`/config`) mapped to the host
    folder holding the ConfigMap's files; an argument naming no other path is kept as it is."""
    mapped = [arg.replace(f"={config_mount}/", f"={config_folder}/") for arg in args]
    if mapped == list(args):
        raise chart.ChartError(f"no argument of the controller reads its config from {config_mount}")
    return mapped


def config_mount(deployment: Mapping[str, Any], configmap: str) -> str:
    """Where the Deployment mounts the ConfigMap `configmap` in the controller's container."""
    pod = deployment["spec"]["template"]["spec"]
    volumes = [v["name"] for v in pod.get("volumes") or [] if (v.get("configMap") or {}).get("name") == configmap]
    for container in pod["containers"]:
        for mount in container.get("volumeMounts") or []:
            if mount["name"] in volumes:
                return str(mount["mountPath"])
    raise chart.ChartError(f"the Deployment mounts no ConfigMap {configmap}")


# Inside the private mount namespace: the Secret volume at /certs and a writable /var/lib.
_MOUNT_SCRIPT = (
    f"mount -t tmpfs -o size=1m,mode=0755 realrun-envoy-gateway-certs {CERTS} && "
    f'cp "$REALRUN_CERTS/ca.crt" "$REALRUN_CERTS/tls.crt" "$REALRUN_CERTS/tls.key" {CERTS}/ && '
    f"mount -t tmpfs -o size=64m,mode=0755 realrun-envoy-gateway-cache {CACHE_PARENT} && "
    'exec "$@"'
)


def command(binary: Path, args: Iterable[str]) -> list[str]:
    """The controller in a private mount namespace (unshare) with the chart's volumes where it reads them."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", _MOUNT_SCRIPT, "envoy-gateway",
            str(binary), *args]  # fmt: skip


def _mount_point(plane: ControlPlane) -> None:
    """`/certs` must exist to be mounted over; made empty where it is missing and removed at the stop."""
    if CERTS.is_dir():
        return
    if CERTS.exists():
        raise chart.ChartError(f"{CERTS} exists and is not a folder: Envoy Gateway reads its certificates there")
    CERTS.mkdir(mode=0o755)

    def remove() -> None:
        if CERTS.is_dir() and not any(CERTS.iterdir()):
            CERTS.rmdir()

    plane.on_stop(f"remove the mount point {CERTS}", remove)


def _secret_files(api: client.ApiClient, namespace: str, name: str, folder: Path) -> Path:
    secret = client.CoreV1Api(api).read_namespaced_secret(name, namespace)
    data = secret.data or {}
    missing = [key for key in CERT_FILES if key not in data]
    if missing:
        raise chart.ChartError(f"certgen's Secret {namespace}/{name} lacks {missing}")
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    for key in CERT_FILES:
        (folder / key).write_bytes(base64.b64decode(data[key]))
        (folder / key).chmod(0o600)
    return folder


def _env(kubeconfig: Path, container_env: Mapping[str, str]) -> dict[str, str]:
    return {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(kubeconfig.parent), "KUBECONFIG": str(kubeconfig),
            **container_env}  # fmt: skip


def start(plane: ControlPlane, api: client.ApiClient, binaries: Mapping[str, Path], settings: StackSettings) -> Started:
    """Render the pinned chart, do what its install does before the pod, and start the controller."""
    install = settings.edge.gateway.controller or settings.edge_facts().controller
    assert install is not None
    if install.version != ENVOY_GATEWAY_VERSION:
        raise chart.ChartError(
            f"the stack pins gateway-helm {install.version}; realrun/envoy-gateway builds {ENVOY_GATEWAY_VERSION}"
        )
    folder = plane.folder / "charts"
    folder.mkdir(exist_ok=True)
    source = staged_chart(module_dir("envoy-gateway", MODULE) / "charts/gateway-helm", folder)
    documents = chart.render(
        binaries["helm"], source, install.chart, install.namespace, install.version, chart_values(settings),
        folder, KUBERNETES_VERSION,
    )  # fmt: skip
    existing = seed.crd_names(api)
    added = seed.install_crds(api, [d for d in chart.crds(documents) if d["metadata"]["name"] not in existing])
    # certgen: the pre-install hook Job, as its own account, before the controller's pod exists.
    job = f"{install.chart}-certgen"
    certgen = chart.identity(documents, job, "envoy-gateway-certgen", kind="Job")
    webhooks = [d for d in documents if d.get("kind") == "MutatingWebhookConfiguration"]
    chart.apply(api, [*certgen.objects, *webhooks], "realrun-chart-envoy-gateway")
    _run_certgen(plane, api, binaries["envoy-gateway"], documents, job, certgen, folder)
    # The controller: its ConfigMap (a file here, at the path its volume would have), account and RBAC.
    deployment = _one(documents, "Deployment", "envoy-gateway")
    configmap = _one(documents, "ConfigMap", "envoy-gateway-config")
    config_folder = plane.folder / "envoy-gateway" / "config"
    config_folder.mkdir(parents=True, exist_ok=True)
    for key, text in (configmap.get("data") or {}).items():
        (config_folder / key).write_text(text)
    controller = chart.identity(documents, "envoy-gateway", "envoy-gateway")
    chart.apply(
        api, [*controller.objects, configmap, *chart.aggregated_roles(documents)], "realrun-chart-envoy-gateway"
    )
    kubeconfig = chart.kubeconfig(
        api, controller, plane.server, plane.folder / "pki" / "ca.crt", folder / "envoy-gateway.kubeconfig"
    )
    certs = _secret_files(api, controller.namespace, "envoy-gateway", plane.folder / "envoy-gateway" / "certs")
    _mount_point(plane)
    args = host_args(controller.args, config_mount(deployment, "envoy-gateway-config"), config_folder)
    env = {
        **_env(kubeconfig, chart.container_env(documents, "envoy-gateway", "envoy-gateway")),
        "REALRUN_CERTS": str(certs),
    }
    plane.start("envoy-gateway", command(binaries["envoy-gateway"], args), env=env)
    return Started(controller, certgen, tuple(added), config_folder / "envoy-gateway.yaml")


def _run_certgen(
    plane: ControlPlane,
    api: client.ApiClient,
    binary: Path,
    documents: list[dict[str, Any]],
    job: str,
    certgen: chart.ChartIdentity,
    folder: Path,
) -> None:
    """`envoy-gateway certgen` with the Job's arguments, env and account; its output is its log."""
    container = _one(documents, "Job", job)["spec"]["template"]["spec"]["containers"][0]
    entry = list(container.get("command") or [])
    if entry[:2] != ["envoy-gateway", "certgen"]:
        raise chart.ChartError(f"the certgen Job runs {entry}, not `envoy-gateway certgen`")
    kubeconfig = chart.kubeconfig(
        api, certgen, plane.server, plane.folder / "pki" / "ca.crt", folder / "envoy-gateway-certgen.kubeconfig"
    )
    env = _env(kubeconfig, chart.container_env(documents, job, "envoy-gateway-certgen", kind="Job"))
    result = subprocess.run(
        [str(binary), *entry[1:], *certgen.args], env=env, capture_output=True, timeout=CERTGEN_SECONDS, check=False
    )
    (plane.folder / "logs" / "envoy-gateway-certgen.log").write_bytes(result.stdout + result.stderr)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).decode(errors="replace")[-2000:]
        raise chart.ChartError(f"envoy-gateway certgen failed ({result.returncode}):\n{tail}")


# The checks, after the converged `up`.


def _items(api: client.ApiClient, api_version: str, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
    resource = dynamic(api).resources.get(api_version=api_version, kind=kind)
    items: list[dict[str, Any]] = resource.get(namespace=namespace).to_dict()["items"]
    return items


def status_writers(item: Mapping[str, Any]) -> set[str]:
    return {
        m.get("manager", "") for m in item["metadata"].get("managedFields") or [] if m.get("subresource") == "status"
    }


def _condition(conditions: Iterable[Mapping[str, Any]] | None, kind: str) -> Mapping[str, Any] | None:
    return next((c for c in conditions or [] if c.get("type") == kind), None)


def _true(conditions: Iterable[Mapping[str, Any]] | None, *kinds: str) -> list[str]:
    """What is wrong with `conditions` for each of `kinds` that is not True (nothing: all True)."""
    wrong = []
    for kind in kinds:
        found = _condition(conditions, kind)
        if found is None:
            wrong.append(f"no {kind}")
        elif found.get("status") != "True":
            wrong.append(f"{kind} {found.get('status')} ({found.get('reason')}: {found.get('message', '')})")
        elif found.get("reason") == "RealRunStandIn":
            wrong.append(f"{kind} set by the stand-in")
    return wrong


def programmed(gateway: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the Gateway is Programmed by Envoy Gateway (its manager wrote the status), and what it says."""
    status = gateway.get("status") or {}
    wrong = _true(status.get("conditions"), "Accepted", "Programmed")
    writers = status_writers(gateway)
    if MANAGER not in writers:
        wrong.append(f"status written by {sorted(writers)}, not by {MANAGER}")
    found = _condition(status.get("conditions"), "Programmed") or {}
    addresses = [a.get("value") for a in status.get("addresses") or []]
    listeners = {
        listener.get("name"): ",".join(
            c["type"] for c in listener.get("conditions") or [] if c.get("status") == "True"
        )
        for listener in status.get("listeners") or []
    }  # fmt: skip
    detail = (
        f"Programmed ({found.get('message', '')}), addresses {addresses}, status written by {sorted(writers)}; "
        f"listeners {listeners}"
    )
    return not wrong, detail if not wrong else "; ".join(wrong) + f" | {detail}"


def route_problems(route: Mapping[str, Any]) -> list[str]:
    """Each parentRef of the route must have Envoy Gateway's status, Accepted and ResolvedRefs True."""
    meta = route["metadata"]
    where = f"{route['kind']} {meta['namespace']}/{meta['name']}"
    parents = (route.get("status") or {}).get("parents") or []
    ours = [p for p in parents if p.get("controllerName") == CONTROLLER_NAME]
    problems = []
    for ref in (route.get("spec") or {}).get("parentRefs") or []:
        match = [p for p in ours if _same_parent(p.get("parentRef") or {}, ref, meta["namespace"])]
        if not match:
            problems.append(f"{where}: no status from {CONTROLLER_NAME} for parent {ref.get('name')}")
        elif wrong := _true(match[0].get("conditions"), "Accepted", "ResolvedRefs"):
            problems.append(f"{where} parent {ref.get('name')}: {', '.join(wrong)}")
    if MANAGER not in status_writers(route):
        problems.append(f"{where}: status written by {sorted(status_writers(route))}")
    return problems


def _same_parent(status_ref: Mapping[str, Any], ref: Mapping[str, Any], namespace: str) -> bool:
    def key(r: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
        return (
            r.get("group") or GATEWAY_API,
            r.get("kind") or "Gateway",
            r.get("namespace") or namespace,
            r.get("name", ""),
            r.get("sectionName") or "",
        )

    return key(status_ref) == key(ref)


def listener_set_problems(listener_set: Mapping[str, Any]) -> list[str]:
    """The ListenerSet Accepted by Envoy Gateway, and each of its listeners Accepted with ResolvedRefs."""
    meta = listener_set["metadata"]
    where = f"ListenerSet {meta['namespace']}/{meta['name']}"
    status = listener_set.get("status") or {}
    problems = [f"{where}: {w}" for w in _true(status.get("conditions"), "Accepted")]
    statuses = {entry.get("name"): entry for entry in status.get("listeners") or []}
    for listener in (listener_set.get("spec") or {}).get("listeners") or []:
        entry = statuses.get(listener["name"])
        if entry is None:
            problems.append(f"{where} listener {listener['name']}: no status")
        elif wrong := _true(entry.get("conditions"), "Accepted", "ResolvedRefs"):
            problems.append(f"{where} listener {listener['name']}: {', '.join(wrong)}")
    if MANAGER not in status_writers(listener_set):
        problems.append(f"{where}: status written by {sorted(status_writers(listener_set))}")
    return problems


def tenant_namespaces(api: client.ApiClient) -> set[str]:
    return {
        n["metadata"]["name"]
        for n in _items(api, "v1", "Namespace")
        if TENANT_KEY in (n["metadata"].get("labels") or {})
    }


def attached(api: client.ApiClient) -> tuple[bool, str]:
    """The run's line: every tenant HTTPRoute and ListenerSet accepted, with resolved refs, by Envoy Gateway."""
    tenants = tenant_namespaces(api)
    routes = [r for r in _items(api, f"{GATEWAY_API}/v1", "HTTPRoute") if r["metadata"]["namespace"] in tenants]
    sets = [s for s in _items(api, f"{GATEWAY_API}/v1", "ListenerSet") if s["metadata"]["namespace"] in tenants]
    if not routes or not sets:
        return False, f"{len(routes)} tenant HTTPRoutes and {len(sets)} ListenerSets live: the dev stack renders both"
    problems = [p for r in routes for p in route_problems(r)] + [p for s in sets for p in listener_set_problems(s)]
    names = sorted(f"{o['kind']} {o['metadata']['namespace']}/{o['metadata']['name']}" for o in [*routes, *sets])
    if problems:
        return False, "; ".join(problems)[:3000]
    return True, f"{', '.join(names)}: Accepted with ResolvedRefs, status written by {MANAGER}"


def proxy_objects(api: client.ApiClient, namespace: str, log: Path) -> tuple[bool, str]:
    """The run's line: the objects Envoy Gateway made for the proxies exist in their namespace (the
    platform's admission let them in), the Deployment's pods are available, and its log shows no refusal."""
    selector = "app.kubernetes.io/managed-by=envoy-gateway"
    found: dict[str, list[str]] = {}
    available = 0
    for api_version, kind in (("apps/v1", "Deployment"), ("v1", "Service"), ("v1", "ServiceAccount"),
                              ("v1", "ConfigMap"), ("v1", "Pod")):  # fmt: skip
        items = (
            dynamic(api)
            .resources.get(api_version=api_version, kind=kind)
            .get(namespace=namespace, label_selector=selector)
            .to_dict()["items"]
        )
        found[kind] = sorted(i["metadata"]["name"] for i in items)
        if kind == "Deployment":
            available = sum((i.get("status") or {}).get("availableReplicas") or 0 for i in items)
    refusals = refusal_lines(log.read_text(errors="replace") if log.exists() else "")
    judged = policies_selecting(api, namespace)
    labels = dynamic(api).resources.get(api_version="v1", kind="Namespace").get(name=namespace).to_dict()["metadata"]
    security = {k: v for k, v in (labels.get("labels") or {}).items() if k.startswith("pod-security.kubernetes.io/")}
    missing = [kind for kind in ("Deployment", "Service", "ServiceAccount", "Pod") if not found[kind]]
    detail = (
        f"in {namespace} (policies binding it: {judged or 'none'}; Pod Security labels {security or 'none'}): "
        + "; ".join(f"{kind} {', '.join(names)}" for kind, names in found.items() if names)
    )
    ok = not missing and available > 0 and not refusals
    why = []
    if missing:
        why.append(f"none of {missing}")
    if not available:
        why.append("no proxy replica available")
    if refusals:
        why.append(f"refused in the controller's log: {refusals[:5]}")
    return ok, detail + (f"; {available} replica(s) available" if ok else "; " + "; ".join(why))


def selector_text(selector: Mapping[str, Any] | None) -> str:
    """A LabelSelector as the API's `labelSelector` query text (the server then evaluates it)."""
    selector = selector or {}
    terms = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    operators = {"In": "in", "NotIn": "notin"}
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        if operator in operators:
            terms.append(f"{key} {operators[operator]} ({','.join(expression.get('values') or [])})")
        elif operator == "Exists":
            terms.append(key)
        elif operator == "DoesNotExist":
            terms.append(f"!{key}")
        else:
            raise ValueError(f"unknown label selector operator {operator!r}")
    return ",".join(terms)


def policies_selecting(api: client.ApiClient, namespace: str) -> list[str]:
    """The admission policies that judge objects in `namespace`: a policy's `matchConstraints` and its
    binding's `matchResources` must both select it (k8s.io/apiserver pkg/admission/plugin/policy/generic
    `CollectPolicyEvaluations`: the policy's constraints, then each binding's), asked of the API server
    (a list of that namespace with each selector). Policies matching by object labels only are left out."""
    namespaces = dynamic(api).resources.get(api_version="v1", kind="Namespace")

    def selects(selector: Mapping[str, Any] | None) -> bool:
        found = namespaces.get(label_selector=selector_text(selector), field_selector=f"metadata.name={namespace}")
        return bool(found.to_dict()["items"])

    selected = []
    for kind in ("ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"):
        policies = {p["metadata"]["name"]: p for p in _items(api, "admissionregistration.k8s.io/v1", kind)}
        for binding in _items(api, "admissionregistration.k8s.io/v1", f"{kind}Binding"):
            policy = policies.get(binding["spec"]["policyName"])
            if policy is None:
                continue
            constraints = (policy.get("spec") or {}).get("matchConstraints") or {}
            resources = (binding.get("spec") or {}).get("matchResources") or {}
            if constraints.get("objectSelector") or resources.get("objectSelector"):
                continue
            if selects(constraints.get("namespaceSelector")) and selects(resources.get("namespaceSelector")):
                selected.append(str(policy["metadata"]["name"]))
    return sorted(set(selected))


def refusal_lines(log: str) -> list[str]:
    """The controller's log lines where the API server refused something (RBAC, admission, schema)."""
    return [line.strip()[:400] for line in log.splitlines() if any(word in line for word in REFUSALS)]


def attack_route(settings: StackSettings, namespace: str, hostname: str) -> dict[str, Any]:
    """A GRPCRoute a tenant may write (its role, the hostname and parent rules admit it) to the platform
    Gateway's HTTPS listener, whose `allowedRoutes.kinds` is HTTPRoute only (components/edge/platform.py):
    the Gateway must not attach it."""
    gateway = settings.edge.gateway
    return {
        "apiVersion": f"{GATEWAY_API}/v1",
        "kind": "GRPCRoute",
        "metadata": {"name": "realrun-not-attachable", "namespace": namespace},
        "spec": {
            "parentRefs": [
                {
                    "group": GATEWAY_API,
                    "kind": "Gateway",
                    "name": gateway.name,
                    "namespace": gateway.namespace,
                    "sectionName": "https",
                }
            ],
            "hostnames": [hostname],
        },
    }


def not_attached(route: Mapping[str, Any]) -> str:
    """'' when Envoy Gateway's status says the route is not accepted because no listener allows it."""
    parents = [
        p for p in (route.get("status") or {}).get("parents") or [] if p.get("controllerName") == CONTROLLER_NAME
    ]
    if not parents:
        return "no status from Envoy Gateway yet"
    accepted = _condition(parents[0].get("conditions"), "Accepted") or {}
    if accepted.get("status") == "False" and accepted.get("reason") == "NotAllowedByListeners":
        return ""
    return f"Accepted {accepted.get('status')} ({accepted.get('reason')}: {accepted.get('message', '')})"


def refused_attachment(
    api: client.ApiClient,
    settings: StackSettings,
    tenant: tuple[str, str],
    namespace: str,
    hostname: str,
    timeout: float = 60,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[bool, str]:
    """The run's line: the tenant (impersonated: a user in the tenant's access group) creates the attack
    route, admission lets it through, Envoy Gateway does not attach it (NotAllowedByListeners); then the
    tenant deletes it."""
    user, group = tenant
    acting = client.ApiClient(api.configuration)
    acting.set_default_header("Impersonate-User", user)  # type: ignore[no-untyped-call]
    acting.set_default_header("Impersonate-Group", group)  # type: ignore[no-untyped-call]
    routes = dynamic(acting).resources.get(api_version=f"{GATEWAY_API}/v1", kind="GRPCRoute")
    body = attack_route(settings, namespace, hostname)
    name = body["metadata"]["name"]
    try:
        routes.create(body=body, namespace=namespace)
    except client.ApiException as error:
        refusal = f"{user} could not create the GRPCRoute (the check needs one admission admits): {error.body}"
        return False, refusal[:1500]
    why = "not read"
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            why = not_attached(routes.get(name=name, namespace=namespace).to_dict())
            if not why:
                break
            sleep(1)
    finally:
        routes.delete(name=name, namespace=namespace)
    where = f"GRPCRoute {namespace}/{name} by {user} (group {group})"
    if why:
        return False, f"{where} admitted but {why}"
    return True, (
        f"{where} to {settings.edge.gateway.namespace}/{settings.edge.gateway.name} section https admitted; "
        f"Envoy Gateway: Accepted False, NotAllowedByListeners (the listener allows HTTPRoute only); deleted"
    )


def proxies_namespace() -> str:
    """Where Envoy Gateway puts the proxies (its own namespace by default; EDGE_CLOUDS local)."""
    proxies = EDGE_CLOUDS["local"].proxies
    assert proxies is not None
    return proxies[0]


def gateway_line(api: client.ApiClient, settings: StackSettings) -> tuple[bool, str]:
    gateway = settings.edge.gateway
    item = (
        dynamic(api)
        .resources.get(api_version=f"{GATEWAY_API}/v1", kind="Gateway")
        .get(name=gateway.name, namespace=gateway.namespace)
    )
    ok, detail = programmed(item.to_dict())
    return ok, f"{gateway.namespace}/{gateway.name}: {detail}"


def config_summary(config: Path) -> str:
    """The EnvoyGateway config the controller read: controller name, provider, proxies' Service type."""
    document = yaml.safe_load(config.read_text())
    service = (((document.get("envoyProxy") or {}).get("provider") or {}).get("kubernetes") or {}).get(
        "envoyService"
    ) or {}
    return (
        f"controllerName {document['gateway']['controllerName']}, provider {document['provider']['type']}, "
        f"proxies' Service {service.get('type', 'LoadBalancer (default)')}"
    )
