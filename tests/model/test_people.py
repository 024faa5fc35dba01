"""`tenancy:people`: a tenant group the stack's group mapping cannot produce is refused at plan time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.support import tenant_document, write_tenants

BASE = {"tenancy:domainSuffix": "tenants.example.com"}


def problems(tmp_path: Path, people: dict[str, Any], access: dict[str, list[str]]) -> list[str]:
    settings = parse_settings({**BASE, "tenancy:people": json.dumps(people)}, "Pulumi.test.yaml")
    directory = write_tenants(tmp_path / "tenants", tenant_document("acme", access=access))
    try:
        load_catalog(directory, settings, "dev", cloud=cloud_for(settings), root=directory.parent)
    except ConfigurationError as error:
        return [str(p) for p in error.problems]
    return []


def test_any_mapping_checks_nothing(tmp_path: Path) -> None:
    assert problems(tmp_path, {}, {"admin": ["acme-admins"]}) == []


def test_google_groups_need_emails_in_the_domain(tmp_path: Path) -> None:
    people = {"mapping": "googleGroups", "groupDomain": "example.com"}
    assert problems(tmp_path, people, {"admin": ["acme-admins@example.com"]}) == []
    found = problems(tmp_path, people, {"admin": ["acme-admins@example.com"], "viewer": ["acme-support"]})
    assert found == [
        "tenants/acme.yaml: access.viewer.0: Google Groups for RBAC gives groups as emails in example.com: "
        "not 'acme-support'"
    ]


def test_oidc_groups_carry_the_prefix(tmp_path: Path) -> None:
    people = {"mapping": "oidc", "groupsPrefix": "oidc:"}
    assert problems(tmp_path, people, {"operator": ["oidc:acme-oncall"]}) == []
    (found,) = problems(tmp_path, people, {"operator": ["acme-oncall"]})
    assert found.startswith("tenants/acme.yaml: access.operator.0: the OIDC issuer's groups carry the prefix 'oidc:'")


def test_access_entries_name_their_groups(tmp_path: Path) -> None:
    people = {"mapping": "accessEntries", "groups": ["acme-admins"]}
    assert problems(tmp_path, people, {"admin": ["acme-admins"]}) == []
    (found,) = problems(tmp_path, people, {"admin": ["acme-admins", "acme-root"]})
    assert "access.admin.1: no access entry of the stack carries the group 'acme-root'" in found


@pytest.mark.parametrize(
    ("people", "message"),
    [
        ({"mapping": "googleGroups"}, "mapping googleGroups needs groupDomain"),
        ({"mapping": "accessEntries"}, "mapping accessEntries needs groups"),
        ({"mapping": "ldap"}, "tenancy:people.mapping"),
    ],
)
def test_an_incomplete_mapping_is_refused(people: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        parse_settings({**BASE, "tenancy:people": json.dumps(people)}, "Pulumi.test.yaml")
