"""Load every tenant file, apply this stack's overrides, and check the tenants against each other.

Problems are collected, never raised one at a time: a platform engineer fixing a pull request
wants the whole list. Nothing downstream runs unless the catalog is clean, which is what keeps a
bad file from half-applying.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from components.model.catalog.cascades import without_cascades
from components.model.catalog.stack_config import missing_cloud_first
from components.model.catalog.tenant_yaml import label_of, nested_file_problems, read_yaml
from components.model.checks import engine_support
from components.model.checks.capabilities import CloudRules
from components.model.checks.data import data_problems, pool_problems, stack_data_problems
from components.model.checks.domain_claims import Claim, DomainClaims
from components.model.checks.edge import tenant_edge_problems
from components.model.checks.edge_contracts import edge_contract_problems
from components.model.checks.isolation import stack_isolation_problems, switch_back_problems
from components.model.checks.names import file_name_problems
from components.model.checks.network import consent_problems, network_problems, network_stack_problems
from components.model.checks.quota import quota_ceiling_problems, quota_placement_problems, quota_split_problems
from components.model.checks.released_names import reonboarding_problems
from components.model.checks.stack import catalog_problems
from components.model.checks.stack_references import reference_problems
from components.model.checks.storage import shrink_problems, virtual_cluster_storage_problems
from components.model.core.errors import ConfigurationError, Problem
from components.model.core.fields import format_location
from components.model.core.labels import default_domain
from components.model.core.messages import problem_message
from components.model.settings.people import people_problems
from components.model.settings.sharding import shard_of
from components.model.settings.stack import StackSettings
from components.model.settings.storage import data_storage_class
from components.model.tenant_file.consistency import consistency_problems
from components.model.tenant_file.hostnames import environment_name
from components.model.tenant_file.spec import TenantFile, TenantSpec

# Fields an override may not change: they define identity and placement of the tenant itself.
_NOT_OVERRIDABLE = {"name", "stacks", "overrides", "shard"}


@dataclass(frozen=True)
class CatalogEntry:
    """A validated tenant and the file it came from."""

    spec: TenantSpec
    source: str


@dataclass(frozen=True)
class Catalog:
    """The tenants present in one stack, sorted by name, after every check has passed."""

    stack: str
    tenants: list[CatalogEntry]

    def names(self) -> list[str]:
        return [entry.spec.name for entry in self.tenants]

    def for_stack_role(self, settings: StackSettings) -> list[CatalogEntry]:
        """The tenants this stack manages: all of them, or one shard's worth in a tenants shard."""
        return _managed(self.tenants, settings)


def _managed(entries: Sequence[CatalogEntry], settings: StackSettings) -> list[CatalogEntry]:
    if settings.stack_role == "platform":
        return []
    if settings.stack_role == "tenants" and settings.shards.index is not None:
        count, index = settings.shards.count, settings.shards.index
        return [e for e in entries if shard_of(e.spec.name, count, e.spec.shard) == index]
    return list(entries)


def merge_override(base: Any, override: Any) -> Any:
    """Deep-merge an override into a base document.

    Mappings merge key by key; lists of named entries (apps, databases, secrets) merge entry by
    entry on `name`, so `{apps: [{name: web, chart: {version: 2.0.0}}]}` bumps one app only; any
    other value replaces the base.
    """
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = merge_override(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    if _is_named_list(base) and _is_named_list(override):
        merged_list = [copy.deepcopy(item) for item in base]
        index = {item["name"]: position for position, item in enumerate(merged_list)}
        for item in override:
            if item["name"] in index:
                merged_list[index[item["name"]]] = merge_override(merged_list[index[item["name"]]], item)
            else:
                merged_list.append(copy.deepcopy(item))
        return merged_list
    return copy.deepcopy(override)


def _is_named_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) and "name" in item for item in value)


def _validation_problems(
    label: str, error: ValidationError, prefix: str = "", model: type[BaseModel] = TenantFile
) -> list[Problem]:
    return [Problem(label, prefix + format_location(e["loc"]), problem_message(e, model)) for e in error.errors()]


def _unknown_stacks(as_written: TenantFile, known: set[str], label: str) -> list[Problem]:
    """`stacks:` entries and `overrides` keys that name no stack of the project: a typo there would
    silently drop the tenant from a stack, or skip the override."""
    named = [(f"stacks.{i}", name) for i, name in enumerate(as_written.stacks or [])]
    named += [(f"overrides.{name}", name) for name in as_written.overrides]
    problems = []
    for field, name in named:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(
                Problem(label, field, f"{name!r} is not a stack of this project ({', '.join(sorted(known))}){hint}")
            )
    return problems


def project_stacks(root: Path) -> set[str]:
    """The project's own stacks: every `Pulumi.<stack>.yaml` except those `tools.scale.shards` generates
    (shards read tenant files as their base stack, so tenants name base stacks only)."""
    return {
        path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        for path in root.glob("Pulumi.*.yaml")
        if not path.read_text(encoding="utf-8").startswith("# Generated from")
    }


def _resolve(
    document: dict[str, Any], stack: str, label: str, known_stacks: set[str] | None = None
) -> tuple[TenantSpec | None, bool, list[Problem]]:
    """Validate the file as written and as merged for every stack it overrides.

    Returns the spec as merged for `stack`, whether the tenant is present in `stack`, and problems.
    """
    try:
        as_written = TenantFile.model_validate(document)
    except ValidationError as error:
        return None, False, _validation_problems(label, error)

    problems: list[Problem] = []
    if known_stacks is not None:
        problems += _unknown_stacks(as_written, {stack, *known_stacks}, label)
    base = {k: v for k, v in document.items() if k != "overrides"}
    merged_for_stack: TenantSpec | None = None
    for override_stack in sorted({stack, *as_written.overrides}):
        override = as_written.overrides.get(override_stack, {})
        frozen = sorted(set(override) & _NOT_OVERRIDABLE)
        for key in frozen:
            problems.append(Problem(label, f"overrides.{override_stack}.{key}", "cannot be overridden per stack"))
        if frozen:
            continue
        try:
            spec = TenantSpec.model_validate(merge_override(base, override))
        except ValidationError as error:
            problems += _validation_problems(label, error, prefix=f"overrides.{override_stack} -> ", model=TenantSpec)
            continue
        if override_stack == stack:
            merged_for_stack = spec
    present = as_written.stacks is None or stack in as_written.stacks
    return merged_for_stack, present, problems


def _other_stack_problems(
    document: dict[str, Any],
    stack: str,
    label: str,
    other_settings: Mapping[str, StackSettings],
    reported_here: set[str],
) -> list[Problem]:
    """The names the file gives each other stack it targets (stack_references.py), merged with that
    stack's override; a field set by the override is reported under `overrides.<stack>`. A field of
    the file itself that the planned stack already refuses (`reported_here`) is not repeated."""
    stacks, overrides = document.get("stacks"), document.get("overrides") or {}
    base = {k: v for k, v in document.items() if k != "overrides"}
    problems: list[Problem] = []
    for other, settings in sorted(other_settings.items()):
        if other == stack or (stacks is not None and other not in stacks):
            continue
        override = overrides.get(other) or {}
        try:
            spec = TenantSpec.model_validate(merge_override(base, override))
        except ValidationError:
            continue  # reported by _resolve
        for where, message in reference_problems(spec, settings, f"stack {other}"):
            if where.split(".")[0] in override:
                problems.append(Problem(label, f"overrides.{other}.{where}", message))
            elif where not in reported_here:
                problems.append(Problem(label, where, message))
    return problems


def _domain_patterns(spec: TenantSpec, suffix: str) -> list[str]:
    """What the tenant claims against every other tenant: its name and everything below it, each
    environment's name (`<tenant>-<env>.<suffix>`: a tenant called `acme-dev` would collide with
    acme's dev), and its domains."""
    own = default_domain(spec.name, suffix)
    environments = [environment_name(spec.name, environment, suffix) for environment in spec.environments]
    return [own, f"*.{own}", *environments, *spec.domains]


def _cross_check(
    entries: list[CatalogEntry], settings: StackSettings, cloud: CloudRules, unreadable: frozenset[str] = frozenset()
) -> list[Problem]:
    """Each tenant against the stack, then the tenants together. `unreadable`: names of tenant files
    that have problems of their own and are left out; other files are not blamed for naming them."""
    problems: list[Problem] = []
    suffix = settings.domain_suffix
    claimed = DomainClaims()
    for entry in entries:
        spec, label = entry.spec, entry.source
        problems += [Problem(label, where, message) for where, message in data_problems(spec, settings, cloud)]
        problems += [Problem(label, where, message) for where, message in network_problems(spec, settings)]
        problems += [Problem(label, where, message) for where, message in tenant_edge_problems(spec, suffix)]
        problems += [Problem(label, where, message) for where, message in people_problems(spec, settings.people)]
        if spec.quota is None or spec.quota.tier is None or spec.quota.tier in settings.quota_tiers:
            problems += [Problem(label, where, message) for where, message in quota_split_problems(spec, settings)]
            placed = quota_placement_problems(spec, settings, cloud.capabilities)
            problems += [Problem(label, where, message) for where, message in placed]
        problems += [Problem(label, where, message) for where, message in quota_ceiling_problems(spec, settings)]
        problems += stack_isolation_problems(spec, label, settings)
        problems += [
            Problem(label, where, message) for where, message in reference_problems(spec, settings, "this stack")
        ]
        problems += _domain_problems(spec, label, suffix, claimed)
        for pattern in _domain_patterns(spec, suffix):
            claimed.add(Claim(pattern, spec.name, label))
    problems += stack_data_problems([entry.spec for entry in entries], settings, cloud)
    problems += pool_problems(settings, cloud)
    problems += network_stack_problems(settings, cloud.network)
    problems += consent_problems([(entry.spec, entry.source) for entry in entries], unreadable=unreadable)
    problems += catalog_problems([(entry.spec, entry.source) for entry in entries], settings, cloud)
    problems += edge_contract_problems([(entry.spec, entry.source) for entry in entries], settings)
    return problems


def _domain_problems(spec: TenantSpec, label: str, suffix: str, claimed: DomainClaims) -> list[Problem]:
    """Domains under the platform suffix must be the tenant's own; no two tenants' may overlap."""
    problems: list[Problem] = []
    own = default_domain(spec.name, suffix)
    for index, domain in enumerate(spec.domains):
        base = domain.removeprefix("*.")
        inside_suffix = base == suffix or base.endswith("." + suffix)
        if inside_suffix and not (base == own or base.endswith("." + own)):
            problems.append(
                Problem(
                    label,
                    f"domains.{index}",
                    f"{domain!r} is under the platform suffix {suffix!r} but outside the tenant's own {own!r}",
                )
            )
    for pattern in _domain_patterns(spec, suffix):
        for other in claimed.overlapping(pattern, spec.name):
            problems.append(
                Problem(
                    label,
                    "domains",
                    f"{pattern!r} overlaps {other.pattern!r} of tenant {other.tenant!r} ({other.source})",
                )
            )
    return problems


def _previous_run_problems(
    entries: Sequence[CatalogEntry],
    settings: StackSettings,
    cloud: CloudRules,
    previous_virtual_clusters: Mapping[str, Sequence[str]] | None,
    previous_outputs: Any,
) -> list[Problem]:
    """What the stack's last deployment forbids: a silent switch back from virtual clusters,
    re-onboarding a released name, a new database on a version past its end of standard support, a
    database disk smaller than the deployed one, a virtual cluster's volume unlike the one it was made with."""
    pairs = [(e.spec, e.source) for e in entries]
    previous = previous_outputs or {}
    # Only the stack's own tenants: its outputs list no other shard's databases.
    managed = [(e.spec, e.source) for e in _managed(entries, settings)]
    return [
        *switch_back_problems(pairs, previous_virtual_clusters or {}),
        *reonboarding_problems(pairs, previous, settings.data.reused_tenant_names, settings.source),
        *engine_support.past_support_problems(managed, settings, cloud.capabilities, previous, engine_support.today()),
        *shrink_problems(managed, settings, previous),
        *virtual_cluster_storage_problems(managed, settings, previous, data_storage_class(settings.storage)),
    ]


def load_catalog(
    tenants_dir: Path,
    settings: StackSettings,
    stack: str,
    *,
    cloud: CloudRules,
    root: Path | None = None,
    previous_virtual_clusters: Mapping[str, Sequence[str]] | None = None,
    known_stacks: set[str] | None = None,
    previous_outputs: Any = None,
    other_settings: Mapping[str, StackSettings] | None = None,
) -> Catalog:
    """Read `tenants_dir/*.yaml` for `stack`; raise ConfigurationError listing every problem.

    `cloud` is the stack's cloud (`components.clouds.registry.cloud_for`): what its databases can
    be and which of its own settings tenants' data needs; passed in because the model imports no
    component. `previous_virtual_clusters`: the environments that had a virtual cluster in the stack's
    last deployment, by tenant (components/vcluster/previous.py), for the switch-back check.
    `previous_outputs`: the stack's last outputs, for the re-onboarding check (released_names.py).
    With `known_stacks` (`project_stacks`), a tenant's `stacks:` and `overrides` must
    name stacks of the project, whichever stack is planned; with `other_settings` (the other stacks'
    committed settings, `stack_references.committed_settings`), what the file names in each stack it
    targets (pools, quota tiers, shards, environments) must exist there too."""
    problems: list[Problem] = []
    entries: list[CatalogEntry] = []
    files_by_name: dict[str, str] = {}
    # Tenants whose files have problems of their own and are left out of the cross-checks.
    invalid: set[str] = set()
    if not tenants_dir.is_dir():
        raise ConfigurationError([Problem(str(tenants_dir), "(directory)", "tenants directory does not exist")])
    paths = sorted([*tenants_dir.glob("*.yaml"), *tenants_dir.glob("*.yml")])
    problems += nested_file_problems(tenants_dir, root)
    for path in paths:
        label = label_of(path, root)
        document, read_problems = read_yaml(path, label)
        problems += read_problems
        if document is None:
            continue
        spec, present, file_problems = _resolve(document, stack, label, known_stacks)
        problems += file_problems
        name = document.get("name")
        problems += file_name_problems(name, path.stem, label, files_by_name)
        if spec is None:
            if isinstance(name, str):
                invalid.add(name)
            continue
        problems += [Problem(label, where, message) for where, message in consistency_problems(spec)]
        if other_settings:
            here = {where for where, _ in reference_problems(spec, settings, "this stack")} if present else set()
            problems += _other_stack_problems(document, stack, label, other_settings, here)
        if present:
            entries.append(CatalogEntry(spec=spec, source=label))
    entries.sort(key=lambda entry: entry.spec.name)
    problems += _cross_check(entries, settings, cloud, frozenset(invalid))
    problems += _previous_run_problems(entries, settings, cloud, previous_virtual_clusters, previous_outputs)
    if problems:
        raise ConfigurationError(missing_cloud_first(settings, without_cascades(problems)))
    return Catalog(stack=stack, tenants=entries)
