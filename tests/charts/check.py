"""Judge one release's values the way Helm and the chart would.

Two questions, two answers:
- would Helm install it? Helm validates the merged values against the chart's values.schema.json
  before rendering and refuses the release on any error (helm/helm v3 pkg/chartutil/jsonschema.go
  ValidateAgainstSchema): so every schema error is a release that never installs;
- does the chart read it? A key the chart's values.yaml does not have is, for a chart without
  `additionalProperties: false`, silently ignored: the platform believes it set something the
  cluster never sees. Such a key fails unless pinned.INTENTIONAL_KEYS says where the chart reads it.
"""

from __future__ import annotations

from typing import Any

import jsonschema

from tests.charts.pinned import ChartData, is_intentional

# Key-tree leaves under which any key is the chart's to accept (empty maps, null defaults).
_FREE_FORM = frozenset({"map", "any"})


def schema_errors(values: dict[str, Any], schema: dict[str, Any] | None) -> list[str]:
    """Every error the chart's schema reports for the values (as Helm would), `path: message`."""
    if schema is None:
        return []
    validator = jsonschema.validators.validator_for(schema)(schema)
    return sorted(
        f"{'.'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in validator.iter_errors(values)
    )


def unknown_keys(values: Any, tree: Any, path: str = "") -> list[str]:
    """Dotted paths of the keys in `values` that the chart's values.yaml key tree does not have."""
    if not isinstance(values, dict) or (isinstance(tree, str) and tree in _FREE_FORM):
        return []
    if not isinstance(tree, dict):
        return [f"{path} (a map here, a {tree} in the chart's values.yaml)"]
    found: list[str] = []
    for key, value in values.items():
        here = f"{path}.{key}" if path else str(key)
        found += unknown_keys(value, tree[key], here) if key in tree else [here]
    return found


def problems(values: dict[str, Any], data: ChartData) -> list[str]:
    """Schema errors, then keys the chart does not list and that are not intentional."""
    return schema_errors(values, data.schema) + [
        f"{path}: not a key of the chart's values.yaml"
        for path in unknown_keys(values, data.keys)
        if not is_intentional(data.name, path)
    ]
