"""Stack config models for the cloud accounts (`tenancy:gcp`, `tenancy:aws`)."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from components.model.core.fields import DnsLabel, StrictModel
from components.model.settings import edge_contracts as contracts
from components.model.settings.network import Cidr


class CertificateManagerQuotaSettings(StrictModel):
    """The project's Certificate Manager resource quotas the platform's certificate map draws on:
    Google's defaults unless a quota increase was granted (docs/edge.md#tenant-domains-on-gke)."""

    # Certificates in the project: one per tenant domain name, plus the stack's wildcard.
    certificates: Annotated[int, Field(ge=1)] = contracts.CERTIFICATE_MANAGER_QUOTAS.certificates
    # Certificate map entries in the project: one per certificate.
    map_entries: Annotated[int, Field(ge=1)] = contracts.CERTIFICATE_MANAGER_QUOTAS.map_entries
    # DNS authorizations in the project: one per domain (a domain's wildcard shares it).
    dns_authorizations: Annotated[int, Field(ge=1)] = contracts.CERTIFICATE_MANAGER_QUOTAS.dns_authorizations


class GcpSettings(StrictModel):
    """The GCP project and region the platform's cloud resources live in."""

    # Project ID (not its number) the platform's cloud resources live in: keys, secrets, Cloud SQL, node pools,
    # service accounts.
    project: str = Field(pattern=r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")
    # Region of those resources and of the GKE cluster (`europe-west1`).
    region: str = Field(pattern=r"^[a-z]+-[a-z]+[0-9]$")
    # VPC (self link or `projects/<p>/global/networks/<n>`) with private services access:
    # Cloud SQL instances get a private IP there and no public one.
    network: str | None = None
    # The platform's key ring; every tenant gets one CryptoKey in it.
    key_ring: DnsLabel = "tenancy"
    # Rotation period of tenant keys, in days.
    key_rotation_days: Annotated[int, Field(ge=1, le=365)] = 90
    # Environments whose databases may ask for `poolSize`: Cloud SQL managed connection pooling runs
    # on the Enterprise Plus edition only, which costs more than Enterprise (docs/data-and-secrets.md).
    # A pooled database in any other environment is refused, never silently made Enterprise Plus.
    enterprise_plus_environments: list[DnsLabel] = []
    # Where the GKE cluster runs (region or zone), for ESO's workload identity; default: region.
    cluster_location: str | None = None
    # Per re-used tenant name (`data.reusedTenantNames`) the generation of its keys, 2 or more: a CryptoKey
    # can never be deleted, so the old tenant's keys keep their names and the new tenant's keys are named
    # `tenancy_<tenant>_<env>_g<N>`. Required for every re-used name on GCP; keep it for as long as the
    # tenant exists (changing it would replace its protected keys).
    key_generations: dict[DnsLabel, Annotated[int, Field(ge=2)]] = {}
    # The project's granted Certificate Manager quotas, where raised above Google's defaults: the plan
    # refuses more tenant domains than they hold (components/model/checks/edge_contracts.py).
    certificate_manager_quotas: CertificateManagerQuotaSettings = CertificateManagerQuotaSettings()


def _not_default(value: str) -> str:
    if value == "default":
        raise ValueError("'default' is RDS's own subnet group (the default VPC), not this environment's")
    return value


class DatabaseSubnets(StrictModel):
    """One tenant environment's database subnets: a DB subnet group (created with the VPC) and the
    CIDRs of its subnets, the only database addresses that environment's pods may reach."""

    # RDS DBSubnetGroupName: lowercase letters, digits, spaces, '.', '_' and '-', not `default`.
    subnet_group: Annotated[str, Field(pattern=r"^[a-z0-9 ._-]{1,255}$"), AfterValidator(_not_default)]
    # The CIDRs of that subnet group's subnets: the only database addresses the environment's pods may reach.
    cidrs: Annotated[list[Cidr], Field(min_length=1)]


class AwsSettings(StrictModel):
    """The AWS region (credentials come from the usual AWS environment) and the data network."""

    # Region of the EKS cluster and of the platform's AWS resources (`eu-west-1`): KMS keys, Secrets Manager,
    # RDS, IAM trust.
    region: str = Field(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$")
    # RDS placement: a DB subnet group in the cluster's VPC and the security groups of the databases.
    db_subnet_group: str | None = None
    # Security groups (`sg-...`) every RDS instance gets beside the per-environment groups the platform
    # creates: the one admitting the runner of `pulumi up` (it sets up databases on shared instances). It
    # must admit no cluster node or pod, or every environment reaches every database (docs/adr/0009).
    db_security_group_ids: list[str] = []
    # CIDRs of those DB subnets, for shared instances serving several environments: tenant
    # namespaces with a database on one may reach database ports there.
    database_cidrs: list[Cidr] = []
    # Per tenant environment its own DB subnets (docs/adr/0016): its dedicated instances (and
    # shared instances serving only it) live there, and its pods' egress opens only these CIDRs,
    # so dev cannot reach prod's database port by address. RDS endpoints are DNS names a
    # NetworkPolicy cannot name; the subnets are what it can.
    database_subnets: dict[DnsLabel, DatabaseSubnets] = {}
    # Database egress per tenant environment (docs/adr/0009): the VPC the per-environment database
    # security groups are created in, and the groups every tenant pod selected by a
    # SecurityGroupPolicy keeps besides (the EKS cluster security group: DNS, kubelet, egress).
    vpc_id: Annotated[str, Field(pattern=r"^vpc-[0-9a-f]{8,17}$")] | None = None
    # Security groups every tenant pod keeps besides its environment's database group (the EKS cluster security
    # group: DNS, kubelet, egress); required where pods get security groups (aws/checks.py).
    pod_security_group_ids: list[Annotated[str, Field(pattern=r"^sg-[0-9a-f]{8,17}$")]] = []
    # How tenant pods get their IAM role: `podIdentity` (EKS Pod Identity, default) or `irsa` (IAM roles
    # for service accounts through the cluster's OIDC provider).
    identity_mode: Literal["podIdentity", "irsa"] = "podIdentity"
    # IRSA: the cluster's IAM OIDC provider ARN and its issuer without `https://`
    # (`oidc.eks.<region>.amazonaws.com/id/<id>`, the part of the ARN after `oidc-provider/`).
    oidc_provider_arn: Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:oidc-provider/\S+$")] | None = None
    # IRSA only: the cluster's OIDC issuer without `https://` (`oidc.eks.<region>.amazonaws.com/id/<id>`), for
    # the trust policy of tenant roles.
    oidc_issuer: Annotated[str, Field(pattern=r"^[a-z0-9.-]+(/[A-Za-z0-9._-]+)*$")] | None = None
    # podIdentity: the role of the External Secrets Operator controller, allowed to assume tenant roles.
    secrets_controller_role_arn: Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/\S+$")] | None = None

    @model_validator(mode="after")
    def _separate_database_subnets(self) -> AwsSettings:
        """Environments' database CIDRs never overlap each other nor the shared ones: an overlap
        would open one environment's databases to another's pods."""
        ranges = [
            (f"databaseSubnets.{env}", cidr) for env, subnets in self.database_subnets.items() for cidr in subnets.cidrs
        ]
        ranges += [("databaseCidrs", cidr) for cidr in self.database_cidrs]
        for index, (owner, cidr) in enumerate(ranges):
            for other, other_cidr in ranges[index + 1 :]:
                if owner != other and ipaddress.ip_network(cidr).overlaps(ipaddress.ip_network(other_cidr)):
                    raise ValueError(
                        f"{owner} {cidr} overlaps {other} {other_cidr}: each environment's database subnets must be "
                        "its own, or its pods reach the other's databases"
                    )
        return self
