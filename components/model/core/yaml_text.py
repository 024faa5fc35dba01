"""Parse trusted YAML text with libyaml's parser where PyYAML was built with it (its wheels are).

The pure-Python parser takes about a second per megabyte; stack files are read several times per
plan, and the tests and the real run read megabytes of upstream CRDs. libyaml parses the same
documents with the same safe constructors (the resolver and constructors are PyYAML's own).
"""

from __future__ import annotations

from typing import Any

import yaml

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


def load_yaml(text: str) -> Any:
    """The one YAML document in `text` (None for an empty text), as `yaml.safe_load` reads it."""
    return yaml.load(text, Loader=_SafeLoader)
