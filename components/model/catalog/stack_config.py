"""Reading a stack's `tenancy:` config into checked `StackSettings` (`parse_settings`).

The settings model (stack.py) sits below the checks that need the whole settings
(stack_checks.py); this reader sits above both, so parsing can run those checks without the model
importing its own checks (no import cycle: tests/test_layout.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from components.model.checks.stack import settings_problems
from components.model.core.errors import ConfigurationError, Problem
from components.model.core.fields import format_location
from components.model.core.messages import problem_message
from components.model.settings.stack import StackSettings

CONFIG_NAMESPACE = "tenancy"


def _decode(value: Any) -> Any:
    """Pulumi hands structured config values to programs as JSON text; scalars stay strings.

    Scalars are left for the model to coerce ("true" -> bool, "3" -> int) so that a version such as
    "1.30" is never read as the number 1.3.
    """
    if not isinstance(value, str) or not value.lstrip().startswith(("{", "[")):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


# What in a stack file says which cloud it was written for: its account section, or its pools' kinds.
_CLOUD_OF_SECTION = {"gcp": "gcp", "aws": "aws"}
_CLOUD_OF_POOL_KIND = {"gke": "gcp", "eks": "aws", "karpenter": "aws"}


def _missing_cloud(source: str, written_for: set[str]) -> list[Problem]:
    """The first problem of a stack file without `tenancy:cloud` whose keys are for gcp or aws: it is
    read as `local`, and every such key then fails on its own, none naming the key that is missing."""
    if not written_for:
        return []
    return [
        Problem(
            source,
            f"{CONFIG_NAMESPACE}:cloud",
            f"not set, so the stack is read as cloud 'local' (a kind cluster); its other keys are for "
            f"{' or '.join(sorted(written_for))}: set tenancy:cloud to local, gcp or aws (the problems after this "
            "one may follow from it)",
        )
    ]


def missing_cloud_first(settings: StackSettings, problems: list[Problem]) -> list[Problem]:
    """`problems`, led by one naming `tenancy:cloud` when the stack file leaves it out and a problem
    is charged to that file."""
    if "cloud" in settings.model_fields_set or not any(problem.file == settings.source for problem in problems):
        return problems
    written_for = {cloud for section, cloud in _CLOUD_OF_SECTION.items() if getattr(settings, section) is not None}
    kinds = {pool.kind for pool in settings.node_pools.values()}
    written_for |= {_CLOUD_OF_POOL_KIND[kind] for kind in kinds if kind in _CLOUD_OF_POOL_KIND}
    return [*_missing_cloud(settings.source, written_for), *problems]


def _written_for(values: Mapping[str, Any]) -> set[str]:
    """The clouds a stack file's raw keys are for (their account sections, their pools' kinds)."""
    written_for = {cloud for section, cloud in _CLOUD_OF_SECTION.items() if values.get(section) is not None}
    pools = values.get("nodePools")
    if isinstance(pools, dict):
        written_for |= {
            _CLOUD_OF_POOL_KIND[pool["kind"]]
            for pool in pools.values()
            if isinstance(pool, dict) and pool.get("kind") in _CLOUD_OF_POOL_KIND
        }
    return written_for


def parse_settings(raw_config: Mapping[str, Any], source: str) -> StackSettings:
    """Validate the `tenancy:*` keys of a stack's config; raise ConfigurationError naming each key."""
    prefix = f"{CONFIG_NAMESPACE}:"
    values = {key[len(prefix) :]: _decode(value) for key, value in raw_config.items() if key.startswith(prefix)}
    first = [] if "cloud" in values else _missing_cloud(source, _written_for(values))
    try:
        settings = StackSettings.model_validate(values)
    except ValidationError as error:
        problems = [
            Problem(source, f"{CONFIG_NAMESPACE}:{format_location(e['loc'])}", problem_message(e, StackSettings))
            for e in error.errors()
        ]
        raise ConfigurationError(first + problems) from None
    settings._source = source
    # Checks that need the whole settings and name a key of the file (stack_checks.py).
    problems = settings_problems(settings)
    if problems:
        raise ConfigurationError(missing_cloud_first(settings, problems))
    return settings


def read_stack_settings(stack: str) -> StackSettings:
    """Read and validate this stack's `tenancy:` config through the Pulumi runtime."""
    from pulumi.runtime import config as runtime_config

    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return parse_settings(raw, f"Pulumi.{stack}.yaml")
