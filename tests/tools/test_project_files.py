"""The project and stack files are what the Pulumi CLI will read: check them against the schema."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from tests.pins import pins
from tools.plan.harness import PROJECT_ROOT

PROJECT_SCHEMA = PROJECT_ROOT.parent / "shared" / "schemas" / "pulumi-project.schema.json"


def test_pulumi_yaml_matches_the_project_schema() -> None:
    if not PROJECT_SCHEMA.exists():
        pytest.skip(f"Pulumi project schema not found at {PROJECT_SCHEMA}")
    schema = json.loads(PROJECT_SCHEMA.read_text(encoding="utf-8"))
    project = yaml.safe_load((PROJECT_ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))
    jsonschema.validate(project, schema)
    assert project["name"] == "tenancy"
    assert project["runtime"]["name"] == "python"
    assert project["runtime"]["options"]["virtualenv"] == ".venv"


def test_the_project_schema_catches_a_bad_project() -> None:
    if not PROJECT_SCHEMA.exists():
        pytest.skip(f"Pulumi project schema not found at {PROJECT_SCHEMA}")
    schema = json.loads(PROJECT_SCHEMA.read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "tenancy", "runtime": {"name": "python", "options": 3}}, schema)


def test_stack_files_hold_only_tenancy_config_and_known_settings() -> None:
    for path in sorted(PROJECT_ROOT.glob("Pulumi.*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert set(document) <= {"config", "secretsprovider", "encryptionsalt", "encryptedkey", "environment"}, path
        for key in document.get("config", {}):
            assert key.split(":")[0] in {"tenancy", "kubernetes", "gcp", "aws", "pulumi"}, (path, key)


def test_dev_uses_passphrase_secrets_and_a_local_cluster() -> None:
    dev = yaml.safe_load((PROJECT_ROOT / "Pulumi.dev.yaml").read_text(encoding="utf-8"))
    assert dev["secretsprovider"] == "passphrase"
    assert dev["config"]["tenancy:cloud"] == "local"


def test_required_pulumi_version_admits_the_cli_ci_installs() -> None:
    from packaging.specifiers import SpecifierSet

    project = yaml.safe_load((PROJECT_ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))
    # Pulumi reads a semver range ("a b" means both); as PEP 440 specifiers the same bounds read "a, b".
    required = SpecifierSet(",".join(project["requiredPulumiVersion"].split()))
    sdk_pins = pins(PROJECT_ROOT / "requirements.txt")
    sdk = sdk_pins["pulumi"]
    assert sdk in required, (sdk, required)
    assert "4.0.0" not in required


@pytest.mark.parametrize(
    ("stack", "scheme"), [("prod", "gcpkms://projects/tenancy-prod/"), ("prod-aws", "awskms://alias/")]
)
def test_prod_stacks_name_their_cloud_kms_secrets_provider(stack: str, scheme: str) -> None:
    document = yaml.safe_load((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
    assert document["secretsprovider"].startswith(scheme), document.get("secretsprovider")
