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


def parse_settings(raw_config: Mapping[str, Any], source: str) -> StackSettings:
    """Validate the `tenancy:*` keys of a stack's config; raise ConfigurationError naming each key."""
    prefix = f"{CONFIG_NAMESPACE}:"
    values = {key[len(prefix) :]: _decode(value) for key, value in raw_config.items() if key.startswith(prefix)}
    try:
        settings = StackSettings.model_validate(values)
    except ValidationError as error:
        problems = [
            Problem(source, f"{CONFIG_NAMESPACE}:{format_location(e['loc'])}", problem_message(e, StackSettings))
            for e in error.errors()
        ]
        raise ConfigurationError(problems) from None
    settings._source = source
    # Checks that need the whole settings and name a key of the file (stack_checks.py).
    problems = settings_problems(settings)
    if problems:
        raise ConfigurationError(problems)
    return settings


def read_stack_settings(stack: str) -> StackSettings:
    """Read and validate this stack's `tenancy:` config through the Pulumi runtime."""
    from pulumi.runtime import config as runtime_config

    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    return parse_settings(raw, f"Pulumi.{stack}.yaml")
