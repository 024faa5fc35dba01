"""The platform's key ring is its own (docs/adr/0016-own-key-ring.md): never the ring of the stack's
state key, which exists before the first `up` and which no ring can be created over (409), and no
grant on the platform's ring reaches the state key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.clouds.gcp.key_ring import key_ring_problems, state_key_ring
from components.model.core.errors import ConfigurationError
from components.model.settings.clouds import GcpSettings
from tests.support import plan, write_tenants
from tools.plan.harness import PROJECT_ROOT

STATE_KEY = "gcpkms://projects/tenancy-prod/locations/europe-west1/keyRings/tenancy-prod/cryptoKeys/pulumi-state"


def _stack_file(tmp_path: Path, secrets_provider: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump({"secretsprovider": secrets_provider}), encoding="utf-8")
    return path


def test_a_gcp_stack_never_creates_the_ring_its_state_key_lives_in() -> None:
    # Every GCP stack file of the project: the program's ring is another ring than the state key's.
    checked = 0
    for path in sorted(PROJECT_ROOT.glob("Pulumi.*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        config = document.get("config", {})
        if config.get("tenancy:cloud") != "gcp":
            continue
        gcp = GcpSettings.model_validate(config["tenancy:gcp"])
        state = state_key_ring(document.get("secretsprovider"))
        assert state is not None, path  # prod stacks name a KMS secrets provider (test_project_files.py)
        assert state != (gcp.project, gcp.region, gcp.key_ring), path
        assert key_ring_problems(gcp, str(path)) == []
        checked += 1
    assert checked


def test_the_state_keys_ring_as_key_ring_is_refused_naming_the_key(tmp_path: Path) -> None:
    stack_file = _stack_file(tmp_path, STATE_KEY)
    same = GcpSettings(project="tenancy-prod", region="europe-west1", key_ring="tenancy-prod")
    (problem,) = key_ring_problems(same, str(stack_file))
    assert problem.file == str(stack_file) and problem.field == "tenancy:gcp.keyRing"
    assert "409" in problem.message and "secrets provider" in problem.message
    # Another ring, another location or project, or no KMS secrets provider: nothing to refuse.
    for other in (
        same.model_copy(update={"key_ring": "tenancy-tenant-keys"}),
        same.model_copy(update={"region": "europe-west4"}),
        same.model_copy(update={"project": "tenancy-other"}),
    ):
        assert key_ring_problems(other, str(stack_file)) == []
    assert key_ring_problems(same, str(_stack_file(tmp_path / "p", "passphrase"))) == []
    assert key_ring_problems(same, str(tmp_path / "missing.yaml")) == []


def test_the_prod_plan_refuses_the_state_ring(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as raised:
        plan(
            "prod",
            write_tenants(tmp_path),
            gcp='{"project": "tenancy-prod", "region": "europe-west1", "keyRing": "tenancy-prod", '
            '"network": "projects/tenancy-prod/global/networks/tenancy"}',
        )
    assert [p.field for p in raised.value.problems] == ["tenancy:gcp.keyRing"]


def test_grants_on_the_platform_ring_never_reach_the_state_key(tmp_path: Path) -> None:
    run = plan("prod", write_tenants(tmp_path))
    (ring,) = run.of_type("gcp:kms/keyRing:KeyRing")
    stack_file = yaml.safe_load((PROJECT_ROOT / "Pulumi.prod.yaml").read_text(encoding="utf-8"))
    state = state_key_ring(stack_file["secretsprovider"])
    assert state is not None and ring.inputs["name"] != state[2]
    for grant in run.of_type("gcp:kms/keyRingIAMMember:KeyRingIAMMember"):
        assert not str(grant.inputs["keyRingId"]).endswith(f"/keyRings/{state[2]}"), grant.name


def test_renaming_a_ring_that_exists_replaces_protected_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A stack whose ring was created under another name (here `tenancy-old`) must keep it: the
    # upgrade preview shows the ring and the keys in it replaced, refused because they are protected.
    from tools.operations import key_migration

    fixture = PROJECT_ROOT / "tests" / "tools" / "fixtures" / "state-before-per-environment-keys-prod.json"
    state = tmp_path / "state.json"
    state.write_text(
        fixture.read_text(encoding="utf-8").replace("tenancy-tenant-keys", "tenancy-old"), encoding="utf-8"
    )
    key_migration.main(["--state", str(state), "--stack", "prod"])
    out = capsys.readouterr().out
    assert "replace  tenancy-keyring (gcp:kms/keyRing:KeyRing) [name]  REFUSED (protected)" in out
    assert "replace  acme-prod-key (gcp:kms/cryptoKey:CryptoKey) [keyRing]  REFUSED (protected)" in out
