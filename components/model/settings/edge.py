"""Stack config for the platform edge (`tenancy:edge`): Gateway API, TLS and DNS, per cloud.

Every tenant owns hostnames (`<tenant>.<suffix>`, `*.<tenant>.<suffix>` and the domains of its file);
the edge is what serves them. Gateway API is the default: one platform Gateway per cluster whose
HTTPS listener covers the stack's domain suffix, attachable only from tenant namespaces, and a
ListenerSet per tenant for the domains it owns. Ingress stays an option for clusters that keep a
controller, off by default: ingress-nginx was retired on 2026-03-24 (no releases or security fixes
since; https://kubernetes.io/blog/2025/11/11/ingress-nginx-retirement/).

What differs per cloud is data here (`EDGE_CLOUDS`), with its source:
- local (kind): Envoy Gateway, installed as a pinned chart; its proxies run in the controller's
  namespace (https://gateway.envoyproxy.io/docs/install/install-helm/, v1.9).
- gcp (GKE): the GKE Gateway controller, built into GKE once the cluster has the Gateway API
  enabled (`gcloud container clusters update --gateway-api=standard`); its classes are `gke-l7-*`
  (https://cloud.google.com/kubernetes-engine/docs/concepts/gateway-api#gatewayclass). The load
  balancer's Google Front Ends reach pods through NEGs from 35.191.0.0/16 and 130.211.0.0/22
  (https://cloud.google.com/load-balancing/docs/health-check-concepts#ip-ranges).
- aws (EKS): the AWS Load Balancer Controller's Gateway API support (controller `gateway.k8s.aws/alb`,
  https://kubernetes-sigs.github.io/aws-load-balancer-controller/v3.5/guide/gateway/l7gateway/); the
  ALB reaches pods (target type ip) from its own addresses in the stack's load balancer subnets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import EmailStr, Field, model_validator

from components.model.core.fields import DnsLabel, StrictModel
from components.model.settings.edge_contracts import GATEWAY_IMPLEMENTATIONS, GatewayImplementation
from components.model.settings.installs import ChartInstall
from components.model.settings.network import Cidr

AwsRoleArn = Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/\S+$")]
AcmCertificateArn = Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/\S+$")]


@dataclass(frozen=True)
class EdgeCloud:
    """What one cloud's Gateway implementation is, as data (sources in the module docstring)."""

    # The GatewayClass tenants' traffic goes through.
    class_name: str
    # The controller the platform creates the class for; None where the cloud ships the class (GKE).
    controller_name: str | None
    # In-cluster proxies: (namespace, pod labels); None where the data plane is a cloud load balancer.
    proxies: tuple[str, dict[str, str]] | None
    # Address ranges a cloud load balancer reaches pods from (the stack adds its own where needed).
    source_cidrs: tuple[str, ...] = ()
    # Whether the stack must name the data plane's address ranges itself (ALB subnets).
    needs_source_cidrs: bool = False
    # The controller chart the platform installs by default (None: the cloud ships it, GKE).
    controller: ChartInstall | None = None
    # Certificates from ACME DNS-01 in the cloud's DNS and external-dns (False: a local CA, no DNS).
    cloud_dns: bool = False
    # The edge's controllers act as IAM roles the stack names (EKS Pod Identity).
    needs_roles: bool = False
    # What its Gateway implementation accepts (edge_contracts.py, with sources).
    gateway: GatewayImplementation = GATEWAY_IMPLEMENTATIONS["local"]


# Pinned charts, each the version whose CRDs or documentation the program follows.
ENVOY_GATEWAY_CHART = ChartInstall(
    # https://gateway.envoyproxy.io/news/releases/v1.9/ (v1.9.1, 2026-08-28); ships the Gateway API CRDs.
    repository="oci://docker.io/envoyproxy",
    chart="gateway-helm",
    version="v1.9.1",
    namespace="envoy-gateway-system",
    # The proxies' Service is a ClusterIP: Envoy Gateway's default is a LoadBalancer, whose address
    # only a load balancer implementation assigns (kind has none), and a Gateway without an address is
    # never `Programmed` (v1.9.1 internal/gatewayapi/status/gateway.go, updateGatewayProgrammedCondition:
    # AddressNotAssigned), so `pulumi up`, which awaits it, would wait until its timeout. A ClusterIP
    # address is the Service's own; the Gateway is reached by port-forward (docs/edge.md). The chart's
    # `config.envoyGateway.envoyProxy` is the default EnvoyProxy of every proxy (EnvoyGatewaySpec.EnvoyProxy).
    values={
        "config": {
            "envoyGateway": {
                "envoyProxy": {
                    "provider": {"type": "Kubernetes", "kubernetes": {"envoyService": {"type": "ClusterIP"}}}
                }
            }
        }
    },
)
CERT_MANAGER_CHART = ChartInstall(
    # The release whose CRDs tests validate against (../shared/crds/SOURCES.md: v1.21.1).
    repository="https://charts.jetstack.io",
    chart="cert-manager",
    version="v1.21.1",
    namespace="cert-manager",
    values={"crds": {"enabled": True}},
)
EXTERNAL_DNS_CHART = ChartInstall(
    # kubernetes-sigs/external-dns tag external-dns-helm-chart-1.21.1 (app v0.21.0): reads routes
    # attached through ListenerSets (`enableGatewayListenerSets`), edge_contracts.py.
    repository="https://kubernetes-sigs.github.io/external-dns",
    chart="external-dns",
    version="1.21.1",
    namespace="external-dns",
)
LOAD_BALANCER_CONTROLLER_CHART = ChartInstall(
    # https://github.com/aws/eks-charts/tree/master/stable/aws-load-balancer-controller (LBC v3.5).
    repository="https://aws.github.io/eks-charts",
    chart="aws-load-balancer-controller",
    version="3.5.0",
    namespace="kube-system",
)


ENVOY_NAMESPACE = ENVOY_GATEWAY_CHART.namespace
EDGE_CLOUDS: dict[str, EdgeCloud] = {
    # Envoy Gateway labels every proxy pod it deploys with these two (internal/infrastructure/
    # kubernetes/proxy/resource.go, envoyLabels, v1.9.1), in its own namespace by default.
    "local": EdgeCloud(
        class_name="tenancy-envoy",
        controller_name="gateway.envoyproxy.io/gatewayclass-controller",
        proxies=(
            ENVOY_NAMESPACE,
            {"app.kubernetes.io/component": "proxy", "app.kubernetes.io/managed-by": "envoy-gateway"},
        ),
        controller=ENVOY_GATEWAY_CHART,
        gateway=GATEWAY_IMPLEMENTATIONS["local"],
    ),
    "gcp": EdgeCloud(
        class_name="gke-l7-global-external-managed",
        controller_name=None,
        proxies=None,
        source_cidrs=("35.191.0.0/16", "130.211.0.0/22"),
        cloud_dns=True,
        gateway=GATEWAY_IMPLEMENTATIONS["gcp"],
    ),
    "aws": EdgeCloud(
        class_name="tenancy-alb",
        controller_name="gateway.k8s.aws/alb",
        proxies=None,
        needs_source_cidrs=True,
        controller=LOAD_BALANCER_CONTROLLER_CHART,
        cloud_dns=True,
        needs_roles=True,
        gateway=GATEWAY_IMPLEMENTATIONS["aws"],
    ),
}


class GatewaySettings(StrictModel):
    """The platform Gateway: one per cluster, HTTPS for `*.<domainSuffix>`, tenant routes only."""

    # Render the platform Gateway (and its controller where the platform installs one); off leaves
    # tenants' hostnames unserved by this program.
    enabled: bool = True
    # The namespace the Gateway object (and its wildcard certificate) lives in.
    namespace: DnsLabel = "tenancy-gateway"
    # The Gateway object's name; tenant HTTPRoutes and ListenerSets name it in their parentRefs.
    name: DnsLabel = "platform"
    # The GatewayClass; default: the cloud's (EDGE_CLOUDS). On GKE another `gke-l7-*` class may be named.
    class_name: DnsLabel | None = None
    # Address ranges the cloud load balancer reaches pods from, added to the cloud's own (EKS: the
    # subnets the ALB is placed in; GKE regional classes: the proxy-only subnet).
    source_cidrs: list[Cidr] = []
    # The controller chart where the platform installs one (kind: Envoy Gateway; EKS: the LBC).
    controller: ChartInstall | None = None
    # EKS: the Load Balancer Controller's IAM role, bound to its service account by Pod Identity.
    controller_role_arn: AwsRoleArn | None = None
    # Tenant-owned domains (a tenant file's `domains`) get a ListenerSet in the tenant's namespace
    # where the cloud's Gateway serves ListenerSets; on GKE, a listener on the platform Gateway
    # (docs/adr/0033-tenant-domains-without-listener-sets.md).
    tenant_listener_sets: bool = True
    # EKS: the ACM certificate (ARN) for each hostname the ALB Gateway serves, the stack's wildcard
    # and every tenant domain: the AWS Load Balancer Controller takes certificates from ACM only
    # (docs/adr/0034-alb-certificates-from-acm.md).
    acm_certificates: dict[str, AcmCertificateArn] = {}


class IngressSettings(StrictModel):
    """Kubernetes Ingress, for clusters that keep a controller: off by default (ingress-nginx is retired)."""

    # Admit tenant Ingress objects (their hostnames held to the tenant's own) for a controller the
    # cluster keeps; the program installs none (docs/edge.md).
    enabled: bool = False
    # The controller's namespace; it must be one of `platformNamespaces` (which opens tenant pods to it).
    namespace: DnsLabel = "ingress-nginx"


class AcmeSettings(StrictModel):
    """An ACME account for DNS-01 certificates (Let's Encrypt by default)."""

    # The ACME account's contact address (expiry and revocation notices from the CA).
    email: EmailStr
    # The ACME directory URL; Let's Encrypt production by default, its staging URL for trials.
    server: Annotated[str, Field(pattern=r"^https://\S+$")] = "https://acme-v02.api.letsencrypt.org/directory"


class TlsSettings(StrictModel):
    """cert-manager and the stack's ClusterIssuer (kind: a local CA; GKE/EKS: ACME DNS-01)."""

    # Install cert-manager and the stack's ClusterIssuer; the Gateway needs it for its certificates.
    enabled: bool = True
    chart: ChartInstall = CERT_MANAGER_CHART
    # Required on GKE and EKS: the ACME account the issuer registers.
    acme: AcmeSettings | None = None
    # EKS: cert-manager's IAM role (Route 53 changes in the stack's zones), bound by Pod Identity.
    role_arn: AwsRoleArn | None = None


class ExternalDnsSettings(StrictModel):
    """external-dns on GKE and EKS: records for the Gateway's routes, in the stack's zones only."""

    # Install external-dns (GKE, EKS); off where DNS records are managed elsewhere (kind has no zone).
    enabled: bool = True
    chart: ChartInstall = EXTERNAL_DNS_CHART
    # Owner of its TXT registry records; default `tenancy-<stack>`, so stacks never delete each other's.
    txt_owner_id: DnsLabel | None = None
    # EKS: external-dns's IAM role (Route 53 changes in `zones`), bound by Pod Identity.
    role_arn: AwsRoleArn | None = None


class EdgeSettings(StrictModel):
    """How tenants' hostnames are served in this stack (docs/edge.md)."""

    # The DNS zones of the stack's domain suffix (Cloud DNS managed zone names, Route 53 hosted zone
    # ids): external-dns writes there only, and ACME DNS-01 challenges are answered in the first.
    zones: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]] = []
    gateway: GatewaySettings = GatewaySettings()
    ingress: IngressSettings = IngressSettings()
    tls: TlsSettings = TlsSettings()
    external_dns: ExternalDnsSettings = ExternalDnsSettings()

    @classmethod
    def off(cls) -> EdgeSettings:
        """No edge: what a GKE or EKS stack without `tenancy:edge` gets (it needs zones, an ACME
        account and, on EKS, roles that only the stack can name)."""
        return cls.model_validate(
            {"gateway": {"enabled": False}, "tls": {"enabled": False}, "externalDns": {"enabled": False}}
        )

    @model_validator(mode="after")
    def _tls_for_gateway(self) -> EdgeSettings:
        if self.gateway.enabled and not self.tls.enabled:
            raise ValueError(
                "gateway.enabled needs tls.enabled: the platform Gateway's HTTPS listener needs a certificate"
            )
        return self


def edge_cloud(cloud: str) -> EdgeCloud:
    """The edge facts of a cloud (`local`, `gcp`, `aws`)."""
    return EDGE_CLOUDS[cloud]


def gateway_class(settings: GatewaySettings, facts: EdgeCloud) -> str:
    """The GatewayClass the platform Gateway uses."""
    return settings.class_name or facts.class_name


def controller_chart(settings: GatewaySettings, facts: EdgeCloud) -> ChartInstall | None:
    """The controller chart the platform installs: the stack's, else the cloud's default (none on GKE)."""
    return settings.controller if settings.controller is not None else facts.controller


@dataclass(frozen=True)
class DataPlane:
    """Where the Gateway's traffic reaches tenant pods from: proxy pods, or load balancer addresses."""

    namespace: str | None
    pod_labels: dict[str, str]
    cidrs: tuple[str, ...]


def data_plane(settings: GatewaySettings, facts: EdgeCloud) -> DataPlane:
    """The Gateway's data plane of this stack (only it may reach tenant pods, on their route ports)."""
    if facts.proxies is not None:
        namespace, labels = facts.proxies
        return DataPlane(namespace, dict(labels), ())
    return DataPlane(None, {}, (*facts.source_cidrs, *settings.source_cidrs))


def wildcard_domain(domain_suffix: str) -> str:
    """The platform listener's hostname: every `<tenant>.<suffix>`."""
    return f"*.{domain_suffix}"


def txt_owner_id(settings: ExternalDnsSettings, stack: str) -> str:
    """external-dns's owner id: the stack's, so two stacks sharing a zone never touch each other's records."""
    return settings.txt_owner_id or f"tenancy-{stack}"
