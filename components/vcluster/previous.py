"""What the stack's last deployment gave each tenant: which environments had a virtual cluster.

Read synchronously before anything is registered, through the engine's builtin
`pulumi:pulumi:readStackOutputs` invoke (the one the Node.js SDK's StackReference.getOutputSync
uses) on this very stack, so the catalog can refuse a switch back to `namespace` with the file and
field named instead of failing halfway through an update. The stack output read is the one
`__main__.py` exports: `tenants.<name>.virtualClusters.<environment>`.

The offline plan has no deployed stack to ask: there the mocks answer the same invoke with the
previous plan's outputs.json (tools/plan/dirs.py `as_last_deployment`), so this module reads the
same thing on `make plan` and on `pulumi up`.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import pulumi
from pulumi.runtime import settings as runtime_settings

READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"
OUTPUT_KEY = "virtualClusters"
DEFAULT_ORGANIZATION = "organization"
# The engine answers from this stack's checkpoint, which it writes itself around the start of an
# update; the real run saw one read fail there ("failed to load checkpoint: EOF", docs/real-run.md).
# A few tries half a second apart ride that out; a stack whose state cannot be read still fails all.
READ_ATTEMPTS = 3
RETRY_PAUSE_SECONDS = 0.5
# One read per program run, whoever asks (the catalog's virtual clusters, the released names, the
# legacy keys): the engine answers each read by loading this stack's whole checkpoint
# (pulumi/pulumi v3.274.1 pkg/backend/backend.go `backendClient.GetStackOutputs` ->
# `SnapshotStackOutputs`), 65 MB at 300 tenants. Keyed by the run's resource monitor, which every
# run (the engine's, or the mocks' of a test) sets anew, so a later run never sees an earlier answer.
_READ: weakref.WeakKeyDictionary[object, Any] = weakref.WeakKeyDictionary()


def own_stack_name() -> str:
    """This stack's fully qualified name, as StackReferences name stacks (`organization` is what
    self-managed backends call the one organization they have)."""
    return f"{pulumi.get_organization() or DEFAULT_ORGANIZATION}/{pulumi.get_project()}/{pulumi.get_stack()}"


def virtual_clusters_in(outputs: Any) -> dict[str, list[str]]:
    """Tenant name -> environments with a virtual cluster, from a stack's outputs (any shape tolerated:
    an older deployment has no such key)."""
    tenants = outputs.get("tenants") if isinstance(outputs, dict) else None
    if not isinstance(tenants, dict):
        return {}
    found: dict[str, list[str]] = {}
    for name, summary in tenants.items():
        clusters = summary.get(OUTPUT_KEY) if isinstance(summary, dict) else None
        if isinstance(clusters, dict) and clusters:
            found[name] = sorted(clusters)
    return found


def read_last_outputs() -> Any:
    """This stack's last deployed outputs ({} on a first deployment), read through the engine once
    per run; the engine's error after READ_ATTEMPTS failed tries (then a later caller tries again)."""
    monitor = runtime_settings.get_monitor()
    if monitor is not None and monitor in _READ:
        return _READ[monitor]
    outputs = _read_through_engine()
    if monitor is not None:
        _READ[monitor] = outputs
    return outputs


def _read_through_engine() -> Any:
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            result = pulumi.runtime.invoke(READ_STACK_OUTPUTS, {"name": own_stack_name()})
            break
        except Exception:
            if attempt == READ_ATTEMPTS:
                raise
            time.sleep(RETRY_PAUSE_SECONDS)
    value = result.value if result.value is not None else {}
    return value.get("outputs", {})


def previous_virtual_clusters() -> dict[str, list[str]]:
    """What the last deployment of this stack exported; empty on a first deployment.

    If the engine cannot answer, nothing is refused here and the protected HelmRelease
    (objects.py) is what stops the deletion: a warning says so.
    """
    try:
        outputs = read_last_outputs()
    except Exception as error:
        pulumi.log.warn(f"could not read this stack's last outputs ({error}); virtual clusters rely on protection")
        return {}
    return virtual_clusters_in(outputs)
