"""external-dns in the real run, with the program's own settings, and the records it would publish.

The dev stack runs on kind, which has no DNS zone, so the program installs external-dns on GKE and
EKS only. The run overrides `tenancy:edge.externalDns.enabled` (setup.py) and starts the pinned
external-dns (realrun/external-dns) as a host process with the values the program gives its chart
(components/edge/platform.py `external_dns_values`: sources, domain filters, policy, TXT registry
and owner, ListenerSets) rendered by the chart of the pinned module, as the chart's service account
with the chart's RBAC (chart.py). Only the provider differs: `inmemory`, whose zones are the stack's
domain filters (the names the stack's real zones hold), and which logs every change it is asked to
apply (`CREATE: <name> <ttl> IN <type> <set id> [targets] [...]`, provider/inmemory/inmemory.go
`InMemoryWithLogging`, v0.23.0): the log is the list of records the stack would publish.

Version skew: the stack pins chart 1.21.1 (app v0.21.0); the Go module proxy serves v0.23.0 only,
whose module carries chart 1.22.0. v0.22.0 moved the default annotation prefix to
`external-dns.kubernetes.io/` (the alpha prefix is read only with `--enable-legacy-annotation-prefix`),
so the run's controller reads the newer prefix; admission governs both (ingress_annotations.py).
"""

from __future__ import annotations

import re
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from components.clouds.registry import cloud_for
from components.edge.identity import EdgeIdentity
from components.edge.platform import PlatformEdgeArgs, external_dns_values
from components.model.catalog.load import load_catalog
from components.model.core.labels import namespace_name
from components.model.settings.edge import EXTERNAL_DNS_CHART
from components.model.settings.stack import StackSettings
from components.model.tenant_file.hostnames import covers, served_hostnames
from components.model.tenant_file.spec import TenantSpec
from tools.realrun.cluster import ControlPlane
from tools.realrun.controllers import chart
from tools.realrun.controllers.binaries import EXTERNAL_DNS_VERSION
from tools.realrun.controllers.external_dns_source import downloaded
from tools.realrun.kube import dynamic
from tools.realrun.toolchain import KUBERNETES_VERSION, ROOT

GATEWAY_API = "gateway.networking.k8s.io/v1"
PROVIDER = "inmemory"
EXTERNAL_DNS_PINNED_CHART = EXTERNAL_DNS_CHART.version
# The metrics endpoint (its last-sync gauge says when a sync ended): loopback, not the pod's `:7979`.
METRICS = "127.0.0.1:7979"
LAST_SYNC = "external_dns_controller_last_sync_timestamp_seconds"
CASES = ROOT / "scripts/e2e/cases"
# One change the in-memory provider logs, in logrus's text format: Endpoint.String() is
# `<name> <ttl> IN <type> <set id> <targets joined by ;> <provider-specific>` (endpoint/endpoint.go, v0.23.0).
_CHANGE = re.compile(
    r'msg="(CREATE|DELETE|UPDATE \(old\)|UPDATE \(new\)): (\S+) (-?\d+) IN (\S+) (\S*) (.*?) \[[^\]]*\]"'
)


@dataclass(frozen=True)
class Started:
    """The running external-dns: its chart identity, the values it was rendered with, its log."""

    identity: chart.ChartIdentity
    values: dict[str, Any]
    chart_version: str
    log: Path
    kubectl: Path
    kubeconfig: Path

    def summary(self) -> str:
        return (
            f"external-dns {EXTERNAL_DNS_VERSION} (its module's chart {self.chart_version}; the stack pins "
            f"{EXTERNAL_DNS_PINNED_CHART}) as {self.identity.username} ({len(self.identity.objects)} objects of its "
            f"chart), provider {PROVIDER}, args {' '.join(self.identity.args)}"
        )


def runs(settings: StackSettings) -> bool:
    """Whether the run starts external-dns: the stack (with the run's override) enables it and has a
    Gateway whose routes it reads."""
    return settings.edge.external_dns.enabled and settings.edge.gateway.enabled


def tenant_specs(settings: StackSettings, stack: str, tenants: Path) -> list[TenantSpec]:
    """The stack's tenants as the program reads them (the same catalog checks)."""
    catalog = load_catalog(tenants, settings, stack, cloud=cloud_for(settings))
    return [entry.spec for entry in catalog.for_stack_role(settings)]


def chart_values(settings: StackSettings, stack: str, specs: Sequence[TenantSpec]) -> dict[str, Any]:
    """The program's values for the chart, with the in-memory provider and one zone per domain filter."""
    values = {
        **settings.edge.external_dns.chart.values,
        **external_dns_values(PlatformEdgeArgs(settings, stack, specs), EdgeIdentity()),
    }
    values["provider"] = {"name": PROVIDER}
    values["extraArgs"] = [*values.get("extraArgs", []), *(f"--inmemory-zone={d}" for d in values["domainFilters"])]
    return values


def start(
    plane: ControlPlane,
    api: client.ApiClient,
    binaries: Mapping[str, Path],
    settings: StackSettings,
    stack: str,
    tenants: Path,
) -> Started:
    """Render the pinned module's chart with the program's values, create what it grants, start it."""
    install = settings.edge.external_dns.chart
    folder = plane.folder / "charts"
    folder.mkdir(exist_ok=True)
    values = chart_values(settings, stack, tenant_specs(settings, stack, tenants))
    # The module's own chart (1.22.0 in v0.23.0), rendered at its own version: the stack pins 1.21.1.
    chart_dir = downloaded() / "charts/external-dns"
    version = str(yaml.safe_load((chart_dir / "Chart.yaml").read_text())["version"])
    documents = chart.render(
        binaries["helm"], chart_dir, install.chart, install.namespace, version, values, folder, KUBERNETES_VERSION
    )
    identity = chart.identity(documents, "external-dns", "external-dns")
    # The chart's namespace: the program creates none for a chart it does not install on this cloud.
    if not _namespace_exists(api, install.namespace):
        namespace = client.V1Namespace(metadata=client.V1ObjectMeta(name=install.namespace))
        client.CoreV1Api(api).create_namespace(namespace)
    chart.apply(api, list(identity.objects), "realrun-chart-external-dns")
    kubeconfig = chart.kubeconfig(
        api, identity, plane.server, plane.folder / "pki" / "ca.crt", folder / "external-dns.kubeconfig"
    )
    plane.start(
        "external-dns",
        [str(binaries["external-dns"]), f"--kubeconfig={kubeconfig}", *identity.args, f"--metrics-address={METRICS}"],
    )
    log = plane.folder / "logs" / "external-dns.log"
    return Started(identity, values, version, log, binaries["kubectl"], plane.kubeconfig)


def _namespace_exists(api: client.ApiClient, name: str) -> bool:
    try:
        client.CoreV1Api(api).read_namespace(name)
    except client.ApiException as error:
        if error.status == 404:
            return False
        raise
    return True


@dataclass(frozen=True)
class Record:
    name: str
    record_type: str
    targets: tuple[str, ...]


def records(log: str) -> dict[tuple[str, str], Record]:
    """The records the provider holds after every change it logged: created or updated, not deleted."""
    held: dict[tuple[str, str], Record] = {}
    for action, name, _ttl, record_type, _set_id, targets in _CHANGE.findall(log):
        key = (name, record_type)
        if action in ("CREATE", "UPDATE (new)"):
            held[key] = Record(name, record_type, tuple(t.replace('\\"', "") for t in targets.split(";") if t))
        elif action == "DELETE":
            held.pop(key, None)
    return held


def address_records(held: Mapping[tuple[str, str], Record]) -> dict[str, Record]:
    """The records that send traffic somewhere (A, AAAA, CNAME), by name: the TXT ones are ownership."""
    return {r.name: r for r in held.values() if r.record_type != "TXT"}


def last_sync(address: str = METRICS) -> float:
    """When external-dns last ended a sync (its metric; 0 before the first)."""
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as answer:  # loopback only
            text = answer.read().decode()
    except OSError:  # not listening (yet, or any more): no sync seen
        return 0.0
    found = re.search(rf"^{LAST_SYNC} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def wait_for_fresh_sync(
    timeout: float = 200, read: Callable[[], float] = last_sync, sleep: Callable[[float], None] = time.sleep
) -> bool:
    """True once a sync has both started and ended after now: two syncs end after this call."""
    seen = read()
    ended = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and ended < 2:
        sleep(2)
        now = read()
        if now > seen:
            seen, ended = now, ended + 1
    return ended >= 2


def own_names(specs: Iterable[TenantSpec], suffix: str) -> dict[str, list[str]]:
    """Per tenant namespace, the names its environment serves (what admission holds its routes to)."""
    return {
        namespace_name(spec.name, environment): served_hostnames(spec, environment, suffix)
        for spec in specs
        for environment in spec.environments
    }


def _items(api: client.ApiClient, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (
        dynamic(api).resources.get(api_version=GATEWAY_API, kind=kind).get().to_dict()["items"]
    )
    return found


def gateway_addresses(api: client.ApiClient, settings: StackSettings) -> set[str]:
    gateway = settings.edge.gateway
    item = (
        dynamic(api)
        .resources.get(api_version=GATEWAY_API, kind="Gateway")
        .get(name=gateway.name, namespace=gateway.namespace)
    )
    return {a["value"] for a in (item.to_dict().get("status") or {}).get("addresses") or []}


def route_names(api: client.ApiClient, namespaces: Iterable[str]) -> dict[str, str]:
    """Every hostname of the live HTTPRoutes in these namespaces, with its namespace."""
    wanted = set(namespaces)
    return {
        name: route["metadata"]["namespace"]
        for route in _items(api, "HTTPRoute")
        if route["metadata"]["namespace"] in wanted
        for name in route["spec"].get("hostnames") or []
    }


def record_problems(
    published: Mapping[str, Record],
    routes: Mapping[str, str],
    own: Mapping[str, list[str]],
    addresses: set[str],
    complete: bool = True,
) -> list[str]:
    """What is wrong with the published records: one for a name no tenant route of that namespace
    may claim, a target other than the Gateway's addresses, and (`complete`: the routes are the
    program's, each name served by a listener) a route name without a record."""
    problems = []
    for name, record in sorted(published.items()):
        namespace = routes.get(name)
        if namespace is None:
            problems.append(f"{name} ({record.record_type}) is published but no tenant route names it")
        elif not any(covers(pattern, name) for pattern in own.get(namespace, [])):
            problems.append(f"{name} is published for {namespace}, whose names are {own.get(namespace)}")
        if not set(record.targets) <= addresses:
            problems.append(f"{name} points at {list(record.targets)}, not the Gateway's {sorted(addresses)}")
    if complete:
        problems += [
            f"{name} ({namespace}) has no record" for name, namespace in sorted(routes.items()) if name not in published
        ]
    return problems


def published_line(
    api: client.ApiClient, settings: StackSettings, started: Started, specs: Sequence[TenantSpec]
) -> tuple[bool, str]:
    """The run's line: after a full sync, the records are exactly the tenants' route names, each one its
    environment's own, pointing at the Gateway, each with its owner's TXT record."""
    if not wait_for_fresh_sync():
        return False, f"external-dns ended no two syncs in time (log {started.log})"
    own = own_names(specs, settings.domain_suffix)
    held = records(started.log.read_text())
    published = address_records(held)
    routes = route_names(api, own)
    problems = record_problems(published, routes, own, gateway_addresses(api, settings))
    owner = started.values["txtOwnerId"]
    txt = [r for r in held.values() if r.record_type == "TXT"]
    problems += [
        f"TXT {r.name} is not owned by {owner}: {r.targets}" for r in txt if f"owner={owner}" not in " ".join(r.targets)
    ]
    if not published:
        problems.append("no record published: the dev stack's tenants have routes")
    if problems:
        return False, "; ".join(problems)[:3000]
    return True, (
        f"{len(published)} records, exactly the names of the tenants' {len(routes)} route hostnames, each its "
        f"environment's own and pointing at the Gateway; {len(txt)} TXT records owned by {owner}: "
        + ", ".join(sorted(published))[:1500]
    )


@dataclass(frozen=True)
class Case:
    """One e2e case replayed for real: who applies which object, and what admission must answer."""

    name: str
    path: Path
    user: str
    groups: tuple[str, ...]
    expect: str
    policy: str


def edge_cases(cases: Path = CASES) -> list[Case]:
    """The e2e cases of routes and ListenerSets (scripts/e2e/cases/index.tsv)."""
    found = []
    for line in (cases / "index.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, file, user, groups, expect, policy, verb, *_ = line.split("\t")
        if verb == "create" and file.startswith(("route-", "listener-set-")):
            found.append(Case(name, cases / file, user, tuple(groups.split(",")), expect, policy))
    return found


def named_hostnames(document: Mapping[str, Any]) -> set[str]:
    """Every name an object asks for: route hostnames, listener hostnames, external-dns annotation values."""
    spec = document.get("spec") or {}
    names = set(spec.get("hostnames") or [])
    names |= {listener["hostname"] for listener in spec.get("listeners") or [] if listener.get("hostname")}
    for key, value in ((document.get("metadata") or {}).get("annotations") or {}).items():
        if key.startswith("external-dns.") and key.endswith(("/hostname", "/target")):
            names |= {part.strip() for part in str(value).split(",") if part.strip()}
    return names


def _kubectl(started: Started, case: Case, verb: str) -> subprocess.CompletedProcess[str]:
    identity = [f"--as={case.user}", *(f"--as-group={g}" for g in case.groups if g != "system:authenticated")]
    command = [str(started.kubectl), f"--kubeconfig={started.kubeconfig}", verb, "-f", str(case.path), *identity]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)


def _replay(
    api: client.ApiClient,
    settings: StackSettings,
    started: Started,
    own: Mapping[str, list[str]],
    cases: Sequence[Case],
    require_served: bool,
) -> tuple[list[str], int, dict[str, str]]:
    """One round of cases: create each as its identity, wait for two syncs, check the records, delete.

    With `require_served`, every name of an admitted case that the Gateway's `*.<suffix>` listener
    serves and its namespace owns must have a record (the routes round: a ListenerSet naming the same
    host exactly would take it from the wildcard listener, so ListenerSets run in a round of their own).
    Returns the problems, how many cases were admitted, and the names the round asked for that are
    not their namespace's own (with the case that asked)."""
    problems: list[str] = []
    applied: list[Case] = []
    attack_names: dict[str, str] = {}
    served: dict[str, str] = {}
    for case in cases:
        result = _kubectl(started, case, "create")
        admitted = result.returncode == 0
        if admitted:
            applied.append(case)
        if admitted != (case.expect == "admit") or (
            not admitted and not any(p in result.stderr for p in case.policy.split("|"))
        ):
            problems.append(
                f"{case.name}: expected {case.expect} ({case.policy}), got {result.stderr.strip()[-300:] or 'admitted'}"
            )
        document = yaml.safe_load(case.path.read_text())
        namespace = document["metadata"]["namespace"]
        for name in named_hostnames(document):
            if case.expect == "deny" or not any(covers(p, name) for p in own.get(namespace, [])):
                attack_names.setdefault(name, case.name)
            elif admitted and require_served and name.endswith(f".{settings.domain_suffix}"):
                served.setdefault(name, case.name)
    try:
        synced = wait_for_fresh_sync()
        published = address_records(records(started.log.read_text()))
        legit = route_names(api, own)
        problems += [
            f"{name} (from {case}) has a record"
            for name, case in sorted(attack_names.items())
            if name in published and name not in legit
        ]
        problems += [
            f"{name} (from {case}) has no record" for name, case in sorted(served.items()) if name not in published
        ]
        # Names outside the suffix (a tenant's own domain) need no record here: the Gateway's
        # listeners for them come from the tenants' ListenerSets, not these routes.
        problems += record_problems(published, legit, own, gateway_addresses(api, settings), complete=False)
        if not synced:
            problems.append("external-dns ended no two syncs in time")
    finally:
        for case in applied:
            _kubectl(started, case, "delete")
    return problems, len(applied), attack_names


def replay_rounds(cases: Sequence[Case]) -> list[tuple[list[Case], bool]]:
    """The cases in the order the run replays them: every ListenerSet in a first round, every route in
    a second that also requires records for the admitted routes' names. Together, a ListenerSet naming
    a host exactly takes it from the Gateway's `*.<suffix>` listener (Envoy Gateway v1.9.1
    `internal/gatewayapi/helpers.go` `computeHosts`: an exact hostname wins over a wildcard on the same
    port, even from a ListenerSet that is not accepted) and the route sharing that name is refused
    (`NoMatchingListenerHostname`), so external-dns rightly publishes nothing for it."""
    return [
        ([c for c in cases if c.path.name.startswith("listener-set-")], False),
        ([c for c in cases if c.path.name.startswith("route-")], True),
    ]


def attack_line(
    api: client.ApiClient, settings: StackSettings, started: Started, specs: Sequence[TenantSpec]
) -> tuple[bool, str]:
    """The run's line: the e2e route and ListenerSet cases applied for real as their identities, in two
    rounds (ListenerSets, then routes); the denied ones are refused live, and after a full sync no name
    of theirs that is not the namespace's own has a record, while every admitted route's own name under
    the suffix has one; each round's objects are deleted before the next."""
    own = own_names(specs, settings.domain_suffix)
    cases = edge_cases()
    problems: list[str] = []
    admitted = 0
    attack_names: dict[str, str] = {}
    for round_cases, require_served in replay_rounds(cases):
        found, applied, asked = _replay(api, settings, started, own, round_cases, require_served)
        problems += found
        admitted += applied
        attack_names.update(asked)
    if problems:
        return False, "; ".join(problems)[:3000]
    denied = [c.name for c in cases if c.expect == "deny"]
    return True, (
        f"{len(cases)} e2e route/ListenerSet cases applied for real in two rounds ({len(denied)} refused live by "
        f"admission, {admitted} admitted, their own names under the suffix published, deleted after the sync); no "
        f"record for any of {len(attack_names)} names they ask for that is not their namespace's own "
        f"({', '.join(sorted(attack_names))[:800]})"
    )
