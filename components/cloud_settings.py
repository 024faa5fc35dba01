"""Stack config models for the cloud accounts (`tenancy:gcp`, `tenancy:aws`)."""

from __future__ import annotations

from pydantic import Field

from components.common import StrictModel


class GcpSettings(StrictModel):
    """The GCP project and region the platform's cloud resources live in."""

    project: str = Field(pattern=r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")
    region: str = Field(pattern=r"^[a-z]+-[a-z]+[0-9]$")


class AwsSettings(StrictModel):
    """The AWS region (credentials come from the usual AWS environment)."""

    region: str = Field(pattern=r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$")
