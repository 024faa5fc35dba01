"""One RDS instance with the guards every data-bearing instance gets, dedicated or shared.

Deletion protection (the API refuses to delete it), a final snapshot if it ever is deleted,
automated backups that outlive it, encryption at rest with a KMS key, no public address, and
Pulumi `protect` through the caller's guard; TLS required through a parameter group of the
instance's own, no paid Extended Support, names AWS accepts (engine_rules.py, name_rules.py).
Kept in one place so a shared instance can never be registered with weaker guards than a tenant's
own.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from components.clouds.aws import engine_rules, name_rules
from components.model.settings.clouds import AwsSettings
from components.model.settings.data import DataSettings

CLASSES = {"small": "db.t4g.small", "medium": "db.m7g.large", "large": "db.m7g.xlarge"}
# Unset is gp2 ("The default is "io1" if `iops` is specified, "gp2" if not", pulumi-aws 7.51.1
# `rds/instance.py`): 3 IOPS per GiB at a higher price than gp3's 3,000 IOPS baseline
# (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html#gp3-storage). An existing
# gp2 instance is modified in place (a storage modification, no replacement).
STORAGE_TYPE = "gp3"


def rds_instance(
    resource_name: str,
    *,
    engine: str,
    version: str,
    size: str,
    storage_gb: int,
    username: str,
    password: pulumi.Input[str],
    kms_key: pulumi.Input[str] | None,
    final_snapshot: str,
    settings_aws: AwsSettings,
    subnet_group: str | None,
    security_groups: Sequence[pulumi.Input[str]],
    data: DataSettings,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
    db_name: str | None = None,
) -> aws.rds.Instance:
    """Register the instance; `opts` come from a `Guard.data()` so protection follows the lifecycle.

    `username` is cut to the engine's limit (MySQL 16). The parameter group is retained with the
    instance but not protected: a major upgrade replaces it."""
    parameters = _tls_parameters(resource_name, engine, version, tags, opts)
    return aws.rds.Instance(
        resource_name,
        identifier=name_rules.rds_identifier(resource_name),  # Pulumi's autoname where valid, else fitted
        engine=engine,
        engine_version=version,
        instance_class=CLASSES[size],
        allocated_storage=storage_gb,
        max_allocated_storage=storage_gb * data.storage_growth_factor,
        storage_type=STORAGE_TYPE,  # not gp2 (STORAGE_TYPE)
        db_name=db_name,
        username=engine_rules.master_username(engine, username),
        password=password,
        parameter_group_name=parameters.name,
        # No paid Extended Support: at the end of standard support RDS upgrades the instance.
        engine_lifecycle_support=engine_rules.EXTENDED_SUPPORT_DISABLED,
        # A tenant upgrades by changing `version` (RDS refuses a new major version without this).
        allow_major_version_upgrade=True,
        storage_encrypted=True,
        kms_key_id=kms_key,
        db_subnet_group_name=subnet_group,  # the environment's own DB subnets (subnets.py)
        # The stack's groups (the runner, people) and the groups of the pods that may connect.
        vpc_security_group_ids=[*settings_aws.db_security_group_ids, *security_groups],
        publicly_accessible=False,
        multi_az=size == "large",
        deletion_protection=True,  # with a final snapshot and backups that outlive it
        skip_final_snapshot=False,
        final_snapshot_identifier=name_rules.fit("rds-final-snapshot", final_snapshot),
        backup_retention_period=data.backup_retention_days,
        delete_automated_backups=False,
        copy_tags_to_snapshot=True,
        # Edits apply when `up` runs, or they diff until the window (docs/adr/0036-rds-changes-apply-when-merged.md).
        apply_immediately=True,
        tags=tags,
        # Lifecycle sent on create only: an existing instance keeps its enrolment (engine_rules.py).
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(ignore_changes=["engineLifecycleSupport"])),
    )


def _tls_parameters(
    resource_name: str, engine: str, version: str, tags: dict[str, str], opts: pulumi.ResourceOptions
) -> aws.rds.ParameterGroup:
    """The instance's own parameter group: its family's defaults with TLS required (engine_rules.py)."""
    family = engine_rules.family(engine, version)
    # The instance's guard for retention (kept with a released instance), not its protection: the
    # group holds no data, and a major upgrade replaces it (`family` cannot change in place), which
    # Pulumi refuses for a protected resource. Nor the instance's ignore_changes (instance inputs).
    group_opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions())
    group_opts.ignore_changes = None
    group_opts.protect = False
    return aws.rds.ParameterGroup(
        f"{resource_name}-parameters",
        # The family is in the name: a major upgrade creates the new group before the old goes.
        name=name_rules.fit("rds-parameter-group", f"{resource_name}-{family.replace('.', '-')}"),
        family=family,
        description=f"tenancy {resource_name}: TLS required",
        parameters=engine_rules.tls_parameters(engine),
        tags=tags,
        opts=group_opts,
    )
