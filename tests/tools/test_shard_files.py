"""`tools.scale.shards write` regenerates shard stack files without losing what `pulumi stack init` added.

`pulumi stack init --secrets-provider <kms url>` writes the stack's data key (`encryptedkey`, or
`encryptionsalt` for a passphrase) into `Pulumi.<stack>.yaml`; without it the CLI cannot decrypt
the stack's `secure:` config (https://www.pulumi.com/docs/iac/concepts/secrets/#configuring-secrets-encryption).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from tools.plan.harness import PROJECT_ROOT
from tools.scale.shards import generated_files

REPO = "https://git.example.org/platform/tenancy.git"


def _write(files: dict[Path, str]) -> None:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_rewriting_shard_files_keeps_the_keys_stack_init_added(tmp_path: Path) -> None:
    shutil.copy(PROJECT_ROOT / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod.yaml")
    _write(generated_files("prod", 2, "acme", REPO, root=tmp_path))
    shard = tmp_path / "Pulumi.prod-shard-1.yaml"
    platform = tmp_path / "Pulumi.prod-platform.yaml"
    # What `pulumi stack init prod-shard-1 --secrets-provider <url>` leaves in the file.
    for path, key in ((shard, "c2hhcmQta2V5"), (platform, "cGxhdGZvcm0ta2V5")):
        document = yaml.safe_load(path.read_text())
        path.write_text(yaml.safe_dump({**document, "encryptedkey": key, "environment": ["tenancy/prod"]}))

    files = generated_files("prod", 2, "acme", REPO, root=tmp_path)
    rewritten = yaml.safe_load(files[shard])
    assert rewritten["encryptedkey"] == "c2hhcmQta2V5"
    assert rewritten["environment"] == ["tenancy/prod"]
    assert yaml.safe_load(files[platform])["encryptedkey"] == "cGxhdGZvcm0ta2V5"
    # What `write` owns still comes from the base file.
    base = yaml.safe_load((PROJECT_ROOT / "Pulumi.prod.yaml").read_text())
    assert rewritten["secretsprovider"] == base["secretsprovider"]
    assert rewritten["config"]["tenancy:shards"] == {"count": 2, "index": 1}
    # A new shard has no data key yet: nothing is invented for it.
    grown = generated_files("prod", 3, "acme", REPO, root=tmp_path)
    assert "encryptedkey" not in yaml.safe_load(grown[tmp_path / "Pulumi.prod-shard-2.yaml"])


def test_check_is_clean_after_stack_init_added_its_key(tmp_path: Path) -> None:
    """`write --check` (CI) compares with the files as they are, data keys included."""
    shutil.copy(PROJECT_ROOT / "Pulumi.prod.yaml", tmp_path / "Pulumi.prod.yaml")
    _write(generated_files("prod", 1, "acme", REPO, root=tmp_path))
    shard = tmp_path / "Pulumi.prod-shard-0.yaml"
    shard.write_text(shard.read_text() + "encryptedkey: a2V5\n")
    files = generated_files("prod", 1, "acme", REPO, root=tmp_path)
    assert "encryptedkey: a2V5" in files[shard]
    _write(files)
    assert generated_files("prod", 1, "acme", REPO, root=tmp_path) == files
