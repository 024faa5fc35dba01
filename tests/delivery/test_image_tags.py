"""Branch-like image tags are refused by one rule, with the file's acknowledgement as the way out
(docs/delivery.md#image-tags)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from components.model.tenant_file.apps import ImageSource

REPOSITORY = "ghcr.io/acme/web"
DIGEST = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    "tag", ["latest", "main", "master", "develop", "staging", "release-2.3", "hotfix-12", "Release_7"]
)
def test_a_branch_like_tag_is_refused_naming_the_way_out(tag: str) -> None:
    with pytest.raises(ValidationError) as refused:
        ImageSource.model_validate({"repository": REPOSITORY, "tag": tag})
    message = str(refused.value)
    assert f"tag {tag!r} names a branch or channel that moves with every push" in message
    assert "image.floatingTagAcknowledged: true" in message


@pytest.mark.parametrize("tag", ["1.29.4-alpine3.23", "v2.3.0", "20261129", "sha-4f2c9e1", "2.3"])
def test_a_version_date_or_commit_tag_is_accepted(tag: str) -> None:
    assert ImageSource.model_validate({"repository": REPOSITORY, "tag": tag}).tag == tag


@pytest.mark.parametrize("tag", ["develop", "release-2.3"])
def test_an_acknowledged_or_digest_pinned_branch_tag_is_accepted(tag: str) -> None:
    acknowledged = ImageSource.model_validate({"repository": REPOSITORY, "tag": tag, "floatingTagAcknowledged": True})
    assert acknowledged.floating_tag_acknowledged
    assert ImageSource.model_validate({"repository": REPOSITORY, "tag": tag, "digest": DIGEST}).digest == DIGEST
