"""GCP name rules as data, with their sources, and the one name the program has to shorten.

Every cloud name the program derives from tenant, environment, database and instance names is
checked against these rules at the model's limits (tests/clouds/test_gcp_names.py): tenant and
environment names are DNS labels whose namespace `tenant-<tenant>-<env>` fits 63 characters, so
tenant + environment <= 55 characters; database names are `[a-z][a-z0-9_]{0,30}`.

- Service account ids: data.py `service_account_id` (readable prefix + hash, always 6-30).
- CryptoKey names: data.py `key_name` (hash past 63 characters).
- Secret Manager ids: `tenancy_<tenant>_<env>_<secret>` / `..._db_<database>`: at most 199
  characters at the model's limits, well inside 255, from allowed characters only.
- Label values: components/model/core/labels.py `cloud_label_value` squeezes them.
- Certificate Manager ids: certificate_map.py `resource_id` (readable, hash past 63 characters).
- Cloud SQL instance ids: Pulumi auto-names them `<resource name>-<7 hex>`, which passes the
  documented 98 characters (with the project id) once tenant + environment + database names are
  long. `cloud_sql_instance_name` then names the instance itself, deterministically; names that fit
  keep their auto-name, so no instance in any state is renamed (renaming replaces it).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class NameRule:
    """What one GCP resource kind accepts as a name, and where that is documented."""

    pattern: re.Pattern[str]
    min_length: int
    max_length: int
    source: str

    def problems(self, name: str, reserved: int = 0) -> list[str]:
        """Why `name` is refused (`reserved`: characters the limit shares with, e.g. the project id)."""
        problems = []
        if not self.min_length <= len(name) <= self.max_length - reserved:
            problems.append(f"{name!r} is {len(name)} characters, not {self.min_length}-{self.max_length - reserved}")
        if not self.pattern.match(name):
            problems.append(f"{name!r} does not match {self.pattern.pattern}")
        return problems


RULES: dict[str, NameRule] = {
    # "Composed of lowercase letters, numbers, and hyphens; must start with a letter"; "the total
    # length of project-ID:instance-ID must be 98 characters or less".
    "cloud-sql-instance": NameRule(
        re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$"),
        1,
        98,
        "https://cloud.google.com/sql/docs/postgres/instance-settings (Instance ID); "
        "https://cloud.google.com/sql/docs/postgres/create-instance (98 characters with the project id)",
    ),
    # "must be 6-30 characters long, and match the regular expression [a-z]([-a-z0-9]*[a-z0-9])".
    "service-account-id": NameRule(
        re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])$"),
        6,
        30,
        "pulumi-gcp 10.2.0 pulumi_gcp/serviceaccount/account.py (account_id); "
        "https://cloud.google.com/iam/docs/service-accounts-create",
    ),
    "kms-crypto-key": NameRule(
        re.compile(r"^[a-zA-Z0-9_-]+$"),
        1,
        63,
        "https://cloud.google.com/kms/docs/reference/rest/v1/projects.locations.keyRings.cryptoKeys/create "
        "(cryptoKeyId: [a-zA-Z0-9_-]{1,63})",
    ),
    "kms-key-ring": NameRule(
        re.compile(r"^[a-zA-Z0-9_-]+$"),
        1,
        63,
        "https://cloud.google.com/kms/docs/reference/rest/v1/projects.locations.keyRings/create "
        "(keyRingId: [a-zA-Z0-9_-]{1,63})",
    ),
    "secret-manager-secret": NameRule(
        re.compile(r"^[a-zA-Z0-9_-]+$"),
        1,
        255,
        "https://cloud.google.com/secret-manager/docs/reference/rest/v1/projects.secrets/create "
        "(secretId: at most 255 characters, letters, numerals, hyphens and underscores)",
    ),
    # Lowercase letters, numeric characters, underscores and dashes; at most 63 characters
    # (international characters are allowed too; the program writes ASCII only).
    "label-value": NameRule(
        re.compile(r"^[a-z0-9_-]*$"),
        0,
        63,
        "https://cloud.google.com/resource-manager/docs/labels-overview#requirements",
    ),
    # Certificates, map entries, DNS authorizations (certificate_map.py `resource_id`).
    "certificate-manager": NameRule(
        re.compile(r"^[a-z0-9-]*$"),
        1,
        63,
        "https://cloud.google.com/certificate-manager/docs/reference/certificate-manager/rpc/"
        "google.cloud.certificatemanager.v1 (ids fully match [a-z0-9-]{1,63})",
    ),
    "label-key": NameRule(
        re.compile(r"^[a-z][a-z0-9_-]*$"),
        1,
        63,
        "https://cloud.google.com/resource-manager/docs/labels-overview#requirements",
    ),
}

# Pulumi's auto-name: the resource name, `-`, and 7 random hex characters.
AUTONAME_SUFFIX = 8


def cloud_sql_instance_name(resource_name: str, project: str) -> str | None:
    """The instance id to ask for, or None to keep Pulumi's auto-name (`<resource name>-<7 hex>`).

    Only a name whose auto-name Cloud SQL would refuse gets one of its own: a readable prefix and a
    hash of the whole resource name (unique per stack, so unique per project). Such an instance
    never existed, so naming it changes nothing in any state; every other instance keeps the name
    it has. Unlike an auto-name, this one is the same on every run: Cloud SQL keeps a deleted
    instance's name for up to a week, so a replacement of such an instance must wait (they are
    protected and kept, docs/adr/0008-data-outlives-its-tenant.md).
    """
    rule = RULES["cloud-sql-instance"]
    reserved = len(project) + 1
    if not rule.problems(f"{resource_name}-{'0' * (AUTONAME_SUFFIX - 1)}", reserved):
        return None
    digest = hashlib.sha256(resource_name.encode()).hexdigest()[:8]
    head = resource_name[: rule.max_length - reserved - len(digest) - 1].rstrip("-")
    return f"{head}-{digest}"
