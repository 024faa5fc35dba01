"""The parts of a tenant file that name one stack's own things: its node pools, quota tiers, shards
and environments. They are checked against every stack the file targets, whichever stack is planned.

A tenant's `overrides.prod.nodePool: gpu-large` names a pool of prod: planning dev alone used to
pass it, and the mistake surfaced only when prod was planned (issue 27). The planned stack is
checked with its `--set` overrides; the other stacks with their committed `Pulumi.<stack>.yaml`.
A stack file that does not validate is skipped here: its own plan reports it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.core.yaml_text import load_yaml
from components.model.settings.stack import StackSettings
from components.model.tenant_file.spec import TenantSpec


def reference_problems(spec: TenantSpec, settings: StackSettings, stack: str) -> list[tuple[str, str]]:
    """(field, message) for each name in `spec` that `settings` does not define; `stack` words the
    stack in the message ("this stack", or "stack prod" for another one)."""
    problems: list[tuple[str, str]] = []
    if spec.node_pool is not None and spec.node_pool not in settings.node_pools:
        known = ", ".join(sorted(settings.node_pools)) or "none"
        problems.append(("nodePool", f"{spec.node_pool!r} is not a node pool of {stack} (defined: {known})"))
    if spec.quota is not None and spec.quota.tier is not None and spec.quota.tier not in settings.quota_tiers:
        known = ", ".join(sorted(settings.quota_tiers))
        problems.append(("quota.tier", f"{spec.quota.tier!r} is not a quota tier of {stack} (defined: {known})"))
    if spec.shard is not None and spec.shard >= settings.shards.count:
        problems.append(("shard", f"{spec.shard} is not a shard of {stack} (shards.count is {settings.shards.count})"))
    unknown_envs = sorted(set(spec.environments) - set(settings.environments))
    if unknown_envs:
        problems.append(
            (
                "environments",
                f"{', '.join(unknown_envs)} not hosted by {stack} (environments: {', '.join(settings.environments)})",
            )
        )
    elif (ordered := [env for env in settings.environments if env in spec.environments]) != list(spec.environments):
        # The last environment serves the tenant's bare name and domains (hostnames.py): an order other
        # than the stack's would silently move the production names to another environment.
        problems.append(
            (
                "environments",
                f"[{', '.join(spec.environments)}] is not in the order of {stack}'s tenancy:environments "
                f"({', '.join(settings.environments)}): the last one listed serves the tenant's own name and "
                f"domains, so environment {spec.environments[-1]} would serve them instead of "
                f"environment {ordered[-1]}; write [{', '.join(ordered)}]",
            )
        )
    return problems


def committed_settings(root: Path, stacks: set[str]) -> dict[str, StackSettings]:
    """Each stack's settings as its committed `Pulumi.<stack>.yaml` gives them; invalid ones left out."""
    found: dict[str, StackSettings] = {}
    for stack in sorted(stacks):
        source = f"Pulumi.{stack}.yaml"
        try:
            document = load_yaml((root / source).read_text(encoding="utf-8")) or {}
            found[stack] = parse_settings(document.get("config") or {}, source)
        except (OSError, yaml.YAMLError, ConfigurationError):
            continue
    return found
