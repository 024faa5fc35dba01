"""Plan files tell mock-made values from real ones, and a redacted secret keeps its shape.

Offline, the cloud's computed values (a Cloud SQL private IP, a service account e-mail, a KMS key
ARN) are placeholders the mocks make up: the plan marks every field holding one. A secret map is
redacted value by value, so a Secret's manifest keeps its keys and still passes the schema."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.k8s_schema import validate_builtin
from tools.plan.harness import MOCK_SECRET_PREFIX, SECRET_PLACEHOLDER, ProgramRun, redact
from tools.plan.mock_marks import matcher, mock_paths
from tools.plan.run import write_plan

_SIG = "4dabf18193072939515e22adb298388d"
_SECRET = "1b47061264138c4ac30d75fd1eb44270"


def test_a_secret_map_keeps_its_keys_and_loses_its_values() -> None:
    wire = {"stringData": {_SIG: _SECRET, "value": {"username": "app", "password": "hunter2", "port": 5432.0}}}
    assert redact(wire) == {
        "stringData": {"username": SECRET_PLACEHOLDER, "password": SECRET_PLACEHOLDER, "port": SECRET_PLACEHOLDER}
    }
    assert redact({_SIG: _SECRET, "value": ["a", "b"]}) == [SECRET_PLACEHOLDER, SECRET_PLACEHOLDER]
    assert redact({_SIG: _SECRET, "value": "s3cr3t"}) == SECRET_PLACEHOLDER


def test_redacted_secrets_in_a_plan_pass_the_schema(tmp_path: Path, dev_plan: ProgramRun) -> None:
    write_plan(dev_plan, tmp_path)
    secrets = [yaml.safe_load(p.read_text()) for p in (tmp_path / "manifests").rglob("secret-*.yaml")]
    assert secrets
    for secret in secrets:
        validate_builtin(secret, "1.36")
        for field in ("data", "stringData"):
            if field in secret:
                assert isinstance(secret[field], dict) and set(secret[field].values()) == {SECRET_PLACEHOLDER}
    assert MOCK_SECRET_PREFIX not in json.dumps(secrets)


def test_mock_made_addresses_are_marked_in_manifests_and_records(tmp_path: Path, prod_plan: ProgramRun) -> None:
    run = prod_plan
    assert any(value.startswith("10.30.0.") for value in run.mock_made)
    write_plan(run, tmp_path)
    policy_file = tmp_path / "manifests" / "acme" / "networkpolicy-tenant-acme-prod-tenancy-databases.yaml"
    text = policy_file.read_text()
    assert text.startswith("# Offline plan: these fields hold values the mocks made up")
    assert "#   spec.egress[0].to[0].ipBlock.cidr\n" in text
    policy = yaml.safe_load(text)
    assert policy["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"].startswith("10.30.0.")
    validate_builtin(policy, "1.34")
    records = json.loads((tmp_path / "resources.json").read_text())
    marked = {r["name"]: r["mockMade"] for r in records if "mockMade" in r}
    assert any("inputs.metadata.annotations.iam.gke.io/gcp-service-account" in paths for paths in marked.values())


def test_a_stack_whose_mocks_make_nothing_up_marks_nothing(tmp_path: Path, dev_plan: ProgramRun) -> None:
    run = dev_plan
    assert run.mock_made == frozenset()
    write_plan(run, tmp_path)
    assert not any("mockMade" in r for r in json.loads((tmp_path / "resources.json").read_text()))
    assert not any(p.read_text().startswith("#") for p in (tmp_path / "manifests").rglob("*.yaml"))


def test_marks_find_values_inside_longer_strings() -> None:
    pattern = matcher(frozenset({"10.30.0.7", "sa@mock-project.iam.gserviceaccount.com"}))
    value = {
        "cidr": "10.30.0.7/32",
        "member": "serviceAccount:sa@mock-project.iam.gserviceaccount.com",
        "x": "10.30.0.8",
    }
    assert mock_paths(value, pattern) == ["cidr", "member"]
    assert mock_paths(value, None) == []
