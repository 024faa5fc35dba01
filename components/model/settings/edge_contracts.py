"""What each edge controller accepts, as data with its source: the subset of the CRDs it serves.

The CRDs allow more than any one controller does. A Gateway that validates can still serve nobody:
the AWS Load Balancer Controller reads no Secret, GKE's Gateway API may lack a kind the program
renders, external-dns skips what it was not told to read. Each fact below names where it is written
(repository, tag, file); tests/edge/test_edge_contracts.py checks every example plan against them
(components/edge/contract_check.py), and the model refuses stacks that break them.

Gateway implementations
- Envoy Gateway v1.9 (kind, v1.9.1 pinned): listener certificates from Secrets (`certificateRefs`), in-cluster
  proxies; ListenerSets served (envoyproxy/gateway v1.9.1, internal/gatewayapi/listenerset.go). A Gateway
  is `Programmed` only with an address (v1.9.1 internal/gatewayapi/status/gateway.go,
  `updateGatewayProgrammedCondition`), and its proxies' default Service is a LoadBalancer: on kind the
  chart's default EnvoyProxy makes it a ClusterIP (edge.py, ENVOY_GATEWAY_CHART).
- GKE Gateway controller (GKE 1.34): certificates from Secrets, pre-shared SSL certificates or
  Certificate Manager (https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway). Secrets
  and pre-shared certificates become SSL certificates on the target HTTPS proxy, at most 15 per proxy
  (https://cloud.google.com/load-balancing/docs/quotas, "SSL certificates per target HTTPS proxy"): 14
  tenants with domains. The platform uses Certificate Manager instead: the Gateway's annotation
  `networking.gke.io/certmap: <map>` points the proxy at one certificate map, and the proxy of a
  global external Application Load Balancer (`gke-l7-global-external-managed`, `gke-l7-gxlb`) takes
  a map whose entries the deploy guide says run to "thousands ... by default, and can scale to
  millions" (https://cloud.google.com/certificate-manager/docs/deploy); regional classes take at most
  100 Certificate Manager certificates directly and no map (same page). secure-gateway: the
  annotation with a `tls.certificateRefs` on the same Gateway is an error, so its listeners carry no
  `tls`. One map entry per hostname, one certificate each
  (https://cloud.google.com/certificate-manager/docs/map-entries: "For each subdomain, you must create
  a separate certificate map entry"); a DNS authorization covers a domain and its wildcard (pulumi-gcp
  10.2.0 `certificatemanager.DnsAuthorization.domain`). Project quotas: CERTIFICATE_MANAGER_QUOTAS.
- AWS Load Balancer Controller v3.5.0 (EKS): listener certificates from ACM only. Explicit ARNs in a
  LoadBalancerConfiguration `listenerConfigurations[].defaultCertificate/certificates`, else ACM
  discovery by listener hostname, which fails the whole Gateway's build when one hostname has no
  certificate (kubernetes-sigs/aws-load-balancer-controller v3.5.0 pkg/gateway/model/
  model_build_listener.go `buildCertificates`; (repo)/docs/guide/gateway/l7gateway.md: "ListenerTLSConfig -
  CertificateRefs: Use LB Config"). Default scheme `internal` ((repo)/docs/guide/gateway/loadbalancerconfig.md,
  Scheme), default target type `instance` ((repo)/docs/guide/gateway/targetgroupconfig.md, "Controller
  defaults"), which needs NodePort Services; tenant Services are ClusterIP (NodePort is refused to
  tenants), so targets must be `ip`. ListenerSets served (controllers/gateway/listenerset_status_reconciler.go).

Gateway API per cloud: ListenerSet and the Gateway's `allowedListeners` are in the standard channel
from v1.5.0 (kubernetes-sigs/gateway-api v1.5.0 CHANGELOG, GEP-1713 standard; external-dns v0.21.0
pkg/apis/externaldns/types.go, flag `gateway-listener-sets`: "requires Gateway API v1.5+ CRDs").
GKE installs the CRDs itself with `--gateway-api=standard`; GKE 1.34 installs v1.4.0
(https://cloud.google.com/kubernetes-engine/docs/concepts/gateway-api#gateway_api_versions). A field
the installed CRD lacks is pruned by the API server without an error, so the Gateway diffs on every `up`.

external-dns (chart 1.21.1, app v0.21.0, kubernetes-sigs/external-dns tag external-dns-helm-chart-1.21.1)
- google: lists managed zones at project level (provider/google/google.go `Zones`, ManagedZones.List
  on the project, v0.21.0), so its identity needs `dns.managedZones.list` on the project (a zone-level
  grant answers 403); zones are scoped with `--zone-id-filter`, which matches a zone's id or name;
  `--zone-name-filter` is read by Azure only (pkg/apis/externaldns/types.go, v0.21.0).
- aws: `--zone-id-filter` with hosted zone ids ((repo)/docs/tutorials/aws.md).
- Wildcard names with the TXT registry need `--txt-wildcard-replacement` (types.go, "used instead of
  an asterisk for TXT records corresponding to wildcard DNS records"; Cloud DNS refuses a TXT name
  with `*` in another label than the first).
- Routes attached through ListenerSets are read only with `--gateway-listener-sets`
  (chart value `enableGatewayListenerSets`, templates/deployment.yaml), from app v0.21.0.
- `policy: upsert-only` never deletes a record (chart values.yaml `policy`); `sync` deletes the
  records it owns (TXT registry, `txtOwnerId`) once no source names them, and none of anyone else's.
"""

from __future__ import annotations

from dataclasses import dataclass

SECRET = "secret"
ACM = "acm"
# GKE: the target proxy takes a Certificate Manager map named by a Gateway annotation.
CERTIFICATE_MAP = "certificate-map"
CERTMAP_ANNOTATION = "networking.gke.io/certmap"
# The GatewayClasses whose load balancer is a global external Application Load Balancer, the only
# GKE classes whose target proxy takes a certificate map (certificate-manager/docs/deploy).
CERTMAP_CLASSES = frozenset({"gke-l7-global-external-managed", "gke-l7-gxlb"})
LB_CONFIG_GROUP = "gateway.k8s.aws"
LB_CONFIG_KIND = "LoadBalancerConfiguration"
TG_CONFIG_KIND = "TargetGroupConfiguration"


@dataclass(frozen=True)
class GatewayImplementation:
    """What one Gateway controller serves of the Gateway API, and its defaults that matter here."""

    # Where listener certificates come from: `secret` (certificateRefs), `acm` (ARNs only) or
    # `certificate-map` (a Certificate Manager map on the Gateway, listeners without `tls`).
    certificate_source: str
    # Whether its GatewayClass serves ListenerSets (tenant domains as ListenerSets).
    listener_sets: bool
    # Defaults the platform must override (None: nothing to override).
    default_scheme: str | None = None
    default_target_type: str | None = None
    # The Gateway API release the cloud installs per Kubernetes minor version (None: the platform
    # brings its own CRDs with the controller's chart).
    gateway_api: dict[str, str] | None = None
    source: str = ""


# The Gateway API release (standard channel) GKE installs, per GKE minor version.
GKE_GATEWAY_API: dict[str, str] = {"1.34": "v1.4.0"}

GATEWAY_IMPLEMENTATIONS: dict[str, GatewayImplementation] = {
    "local": GatewayImplementation(
        certificate_source=SECRET,
        listener_sets=True,
        source="envoyproxy/gateway v1.9.1 internal/gatewayapi/listenerset.go",
    ),
    "gcp": GatewayImplementation(
        certificate_source=CERTIFICATE_MAP,
        listener_sets=False,
        gateway_api=GKE_GATEWAY_API,
        source="https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway; "
        "https://cloud.google.com/certificate-manager/docs/deploy",
    ),
    "aws": GatewayImplementation(
        certificate_source=ACM,
        listener_sets=True,
        default_scheme="internal",
        default_target_type="instance",
        source="kubernetes-sigs/aws-load-balancer-controller v3.5.0 pkg/gateway/model/model_build_listener.go, "
        "(repo)/docs/guide/gateway/loadbalancerconfig.md, (repo)/docs/guide/gateway/targetgroupconfig.md",
    ),
}


@dataclass(frozen=True)
class CertificateManagerQuotas:
    """Certificate Manager's per-project resource quotas the platform's map draws on (defaults; a
    project's granted values go in `tenancy:gcp.certificateManagerQuotas`)."""

    certificates: int
    map_entries: int
    dns_authorizations: int
    source: str


# Default resource quotas per project (https://cloud.google.com/certificate-manager/docs/quotas,
# "Resource quotas"); adjustable by a quota increase request
# (https://cloud.google.com/docs/quotas/help/request_increase). Confirm against the project's Quotas
# page before go-live (docs/go-live.md): the granted values override these.
CERTIFICATE_MANAGER_QUOTAS = CertificateManagerQuotas(
    certificates=1000,
    map_entries=1000,
    dns_authorizations=1000,
    source="https://cloud.google.com/certificate-manager/docs/quotas",
)

# What the platform sets where a controller's default does not serve tenants (EKS).
PUBLIC_SCHEME = "internet-facing"
IP_TARGETS = "ip"

# The first Gateway API release whose standard channel has ListenerSet and `allowedListeners`.
LISTENER_SETS_SINCE = (1, 5, 0)


@dataclass(frozen=True)
class ExternalDnsProvider:
    """How external-dns finds and scopes zones with one provider."""

    zone_flag: str
    # Permission it lists zones with, and where it must be granted.
    list_permission: str
    list_scope: str
    source: str


EXTERNAL_DNS_PROVIDERS: dict[str, ExternalDnsProvider] = {
    "google": ExternalDnsProvider(
        zone_flag="--zone-id-filter",
        list_permission="dns.managedZones.list",
        list_scope="project",
        source="kubernetes-sigs/external-dns v0.21.0 provider/google/google.go Zones; pkg/apis/externaldns/types.go",
    ),
    "aws": ExternalDnsProvider(
        zone_flag="--zone-id-filter",
        list_permission="route53:ListHostedZones",
        list_scope="account",
        source="kubernetes-sigs/external-dns v0.21.0 (repo)/docs/tutorials/aws.md",
    ),
}
# Flags only another provider reads (types.go v0.21.0: "only AzureDNS provider is using this flag").
EXTERNAL_DNS_FOREIGN_FLAGS: dict[str, str] = {"--zone-name-filter": "azure"}
EXTERNAL_DNS_WILDCARD_FLAG = "--txt-wildcard-replacement"
EXTERNAL_DNS_LISTENER_SETS_SINCE = (0, 21, 0)
# The policy that deletes the records it owns once their source is gone (offboarded tenants).
EXTERNAL_DNS_POLICY = "sync"
# external-dns chart -> the app version it runs (Chart.yaml appVersion at the chart's tag).
EXTERNAL_DNS_APP_VERSIONS: dict[str, str] = {"1.20.0": "0.20.0", "1.21.1": "0.21.0"}
# external-dns app -> the annotation prefix it reads by default, reviewed against the admission
# allow-list (source/annotations/annotations.go DefaultAnnotationPrefix at the app's tag; v0.22.0
# moves it to `external-dns.kubernetes.io/`, PR #6424). A chart bump to an app missing here fails
# tests/edge/test_route_annotations.py until its annotation keys are reviewed and the prefix is
# governed (components/model/settings/ingress_annotations.py EXTERNAL_DNS_PREFIXES).
EXTERNAL_DNS_ANNOTATION_PREFIX: dict[str, str] = {
    "0.20.0": "external-dns.alpha.kubernetes.io",
    "0.21.0": "external-dns.alpha.kubernetes.io",
}


def version_tuple(version: str) -> tuple[int, ...]:
    """`v1.4.0` -> (1, 4, 0)."""
    return tuple(int(part) for part in version.removeprefix("v").split(".") if part.isdigit())


def gateway_api_version(impl: GatewayImplementation, kubernetes_version: str) -> str | None:
    """The Gateway API release the cloud installs (None: the platform installs its own CRDs;
    `unknown`: a Kubernetes version the data does not list, treated as lacking newer kinds)."""
    if impl.gateway_api is None:
        return None
    return impl.gateway_api.get(kubernetes_version, "unknown")


def listener_sets_served(impl: GatewayImplementation, kubernetes_version: str) -> bool:
    """Whether tenant domains may be ListenerSets: the controller serves them and the CRDs have them."""
    if not impl.listener_sets:
        return False
    installed = gateway_api_version(impl, kubernetes_version)
    return installed is None or (installed != "unknown" and version_tuple(installed) >= LISTENER_SETS_SINCE)
