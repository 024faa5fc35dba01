"""The benchmark's tenant files: a typical customer tenant and a minimal one, numbered.

The benchmark (bench.py) and its child runs (bench_runs.py) both write these, and the tests,
the catalog timing and the tenant mix reuse the typical one; living apart from both bench modules
keeps them from importing each other (no import cycle: tests/test_layout.py).
"""

from __future__ import annotations

from typing import Any


def typical_tenant(index: int) -> dict[str, Any]:
    """Two environments, a Postgres database, two secrets, one app: what a customer tenant carries."""
    name = f"t{index:05d}"
    return {
        "name": name,
        "displayName": f"Tenant {index}",
        "contact": f"team-{index}@example.org",
        "costCenter": f"cc-{index % 50}",
        "environments": ["dev", "prod"],
        "access": {"admin": [f"{name}-admins"], "operator": [f"{name}-ops"], "viewer": [f"{name}-viewers"]},
        "quota": {"tier": "small"},
        "nodePool": "shared",
        "databases": [{"name": "app", "engine": "postgres", "version": "16", "poolSize": 20}],
        "secrets": [{"name": "session-key", "source": "generated"}, {"name": "api-token", "source": "external"}],
        "apps": [
            {
                "name": "web",
                "chart": {"repository": "oci://registry.example.org/charts", "name": "web", "version": "1.2.3"},
            }
        ],
    }


def minimal_tenant(index: int) -> dict[str, Any]:
    name = f"m{index:05d}"
    return {"name": name, "displayName": f"Minimal {index}", "contact": "a@example.org", "costCenter": "cc"}
