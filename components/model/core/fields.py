"""Building blocks shared by the stack settings model and the tenant spec model.

Both models are read from YAML written by people, so they share the same strictness: unknown keys
are errors (a typo must never silently turn into a default), names use Kubernetes' camelCase in
files and snake_case in code, and quantities are parsed as the API server parses them (quantity.py).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator
from pydantic.alias_generators import to_camel

from components.model.core.labels import DNS_LABEL
from components.model.core.quantity import parse_quantity


class StrictModel(BaseModel):
    """Base for every model read from a file: camelCase keys, no unknown keys, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
    )


def _dns_label(value: str) -> str:
    if not DNS_LABEL.match(value) or len(value) > 63:
        raise ValueError(
            f"{value!r} is not a DNS label (lowercase letters, digits and '-', starting with a letter, "
            "at most 63 characters)"
        )
    return value


DnsLabel = Annotated[
    str,
    AfterValidator(_dns_label),
    WithJsonSchema({"type": "string", "pattern": DNS_LABEL.pattern, "maxLength": 63}),
]

_DNS_NAME = re.compile(r"^(\*\.)?([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)+[a-z]([-a-z0-9]*[a-z0-9])?$")


def check_domain(value: str) -> str:
    """A lowercase DNS name of two labels or more, a leading `*.` allowed; returned unchanged."""
    if len(value) > 253 or not _DNS_NAME.match(value):
        raise ValueError(
            f"{value!r} is not a lowercase DNS name with at least two labels (a leading '*.' is allowed for a wildcard)"
        )
    return value


Domain = Annotated[str, AfterValidator(check_domain), WithJsonSchema({"type": "string", "pattern": _DNS_NAME.pattern})]


def _quantity_string(value: Any) -> Any:
    # YAML turns `cpu: 2` into an int and `cpu: 0.5` into a float; Kubernetes wants strings.
    if isinstance(value, bool):
        raise ValueError("a quantity cannot be true/false")
    if isinstance(value, (int, float)):
        return str(value)
    return value


def _quantity(value: str) -> str:
    try:
        amount = parse_quantity(value)
    except ValueError as error:
        raise ValueError(f"{error} (for example 500m, 2, 512Mi, 4Gi)") from None
    # Every quantity a tenant or stack file sets is an amount (quota, limit, request, size): the
    # grammar allows a sign, the API server refuses negative amounts only when the object is applied.
    if amount < 0:
        raise ValueError(f"{value!r} is negative; amounts are 0 or more (for example 500m, 2, 512Mi, 4Gi)")
    return value


# The quantity grammar as a JSON Schema pattern, so editors flag `4 GB` while the file is written:
# the pattern controller-gen gives every resource.Quantity in a CRD (sigs.k8s.io/controller-tools
# pkg/crd/known_types.go; the same text in ../shared/crds/karpenter.k8s.aws_ec2nodeclasses.yaml),
# without the minus sign, since every amount here is 0 or more (a negative zero, `-0`, passes only
# the model). The model stays the judge: the
# pattern lets through an exponent with a fraction (`1e1.5`) and sizes past the API server's limits.
QUANTITY_PATTERN = (
    r"^\+?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

Quantity = Annotated[
    str,
    BeforeValidator(_quantity_string),
    AfterValidator(_quantity),
    WithJsonSchema(
        {
            "type": ["string", "number"],
            "pattern": QUANTITY_PATTERN,
            "minimum": 0,
            "description": "a Kubernetes quantity: 500m, 2, 512Mi",
        }
    ),
]


def quantity_value(value: str) -> Decimal:
    """The numeric value of a validated quantity, for comparisons such as requests <= limits."""
    return parse_quantity(value)


# Kubernetes resource name per ComputeAmounts field (`ephemeralStorage` in files).
COMPUTE_RESOURCES = {"cpu": "cpu", "memory": "memory", "ephemeral_storage": "ephemeral-storage"}


class ComputeAmounts(StrictModel):
    """CPU, memory and ephemeral-storage amounts (a quota's requests or limits, LimitRange defaults).

    Ephemeral storage (container writable layers, logs, emptyDir) fills the node's disk; without a
    cap one tenant's pods can get every other tenant's pods on the node evicted.
    """

    # CPU as a quantity: `500m` is half a core, `2` two cores.
    cpu: Quantity | None = None
    # Memory as a quantity in bytes: `512Mi`, `4Gi` (`M`/`G` are powers of 1000).
    memory: Quantity | None = None
    # Node-local disk (writable layers, logs, emptyDir) as a quantity: `1Gi`.
    ephemeral_storage: Quantity | None = None

    def resources(self) -> dict[str, str]:
        """The amounts by Kubernetes resource name (`ephemeral-storage`), unset ones left out."""
        values = {name: getattr(self, field) for field, name in COMPUTE_RESOURCES.items()}
        return {name: value for name, value in values.items() if value is not None}


# Object-count keys a ResourceQuota understands; `count/<resource>.<group>` covers the rest.
_OBJECT_COUNT_KEYS = {
    "pods",
    "services",
    "services.loadbalancers",
    "services.nodeports",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "replicationcontrollers",
    "resourcequotas",
    "requests.storage",
}
_COUNT_KEY = re.compile(r"^count/[a-z0-9.-]+$")


def _object_counts(value: dict[str, int]) -> dict[str, int]:
    for key in value:
        if key not in _OBJECT_COUNT_KEYS and not _COUNT_KEY.match(key):
            known = ", ".join(sorted(_OBJECT_COUNT_KEYS))
            raise ValueError(f"unknown object count {key!r}; use one of {known} or count/<resource>.<group>")
    return value


class QuotaSpec(StrictModel):
    """Explicit quota: compute requests and limits plus object counts, in one ResourceQuota."""

    requests: ComputeAmounts = ComputeAmounts()
    limits: ComputeAmounts = ComputeAmounts()
    # Total storage all PersistentVolumeClaims may request (`requests.storage`), such as `100Gi`.
    storage: Quantity | None = None
    # Object counts, such as `{pods: 50, services: 10, count/deployments.apps: 20}`: the keys a ResourceQuota
    # takes (`pods`, `services`, `secrets`, `configmaps`, `persistentvolumeclaims`, ...) or
    # `count/<resource>.<group>`.
    objects: Annotated[dict[str, Annotated[int, Field(ge=0)]], AfterValidator(_object_counts)] = {}

    @model_validator(mode="after")
    def _requests_within_limits(self) -> QuotaSpec:
        requests, limits = self.requests.resources(), self.limits.resources()
        for resource, request in requests.items():
            limit = limits.get(resource)
            if limit is not None and quantity_value(request) > quantity_value(limit):
                raise ValueError(f"requests.{resource} ({request}) is above limits.{resource} ({limit})")
        return self

    def hard(self) -> dict[str, str]:
        """The `spec.hard` map of a ResourceQuota."""
        hard: dict[str, str] = {}
        for prefix, amounts in (("requests", self.requests), ("limits", self.limits)):
            hard.update({f"{prefix}.{resource}": value for resource, value in amounts.resources().items()})
        if self.storage is not None:
            hard["requests.storage"] = self.storage
        hard.update({key: str(count) for key, count in self.objects.items()})
        return hard


def format_location(location: tuple[int | str, ...]) -> str:
    """`('apps', 0, 'chart', 'version')` -> `apps.0.chart.version`; pydantic's own tags dropped."""
    parts = [str(part) for part in location if not str(part).startswith("function-")]
    return ".".join(parts) if parts else "(file)"


def unique_names(items: list[Any]) -> list[Any]:
    """Validator: the `name` of every entry differs (databases, secrets, apps)."""
    names = [item.name for item in items]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"names must be unique; repeated: {', '.join(duplicates)}")
    return items


def unique(values: list[str]) -> list[str]:
    """Validator: no entry is listed twice."""
    duplicates = sorted({v for v in values if values.count(v) > 1})
    if duplicates:
        raise ValueError(f"duplicate entries: {', '.join(duplicates)}")
    return values
