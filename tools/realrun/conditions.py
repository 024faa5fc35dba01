"""The operators' part of `pulumi up`'s waiting, stood in for (docs/real-run.md#controllers).

Some operators run in the real run (tools/realrun/controllers/), but the program awaits the platform's custom resources
(`pulumi.com/waitFor`, components/model/core/await_rules.py): a Gateway until `Programmed`,
cert-manager objects, CloudNativePG Clusters and MariaDB objects until `Ready`. Without someone to
set those conditions every `up` would wait until its timeout. This stand-in does what each
operator does once the object serves, and nothing else: it sets the awaited condition to True on
the status subresource of every object that carries a `waitFor` annotation, of the kinds whose
controller does not run here (`served` names those that do: the stand-in never touches them, so a
condition on them was written by their real controller). So for the stood-in kinds the run verifies
that the program asks to wait for the right condition on the right objects and that the provider
waits for it; it cannot verify that the operator ever gets there.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

from kubernetes import client

from components.model.core.await_rules import AWAITED, WAIT_FOR, expected_conditions
from tools.realrun.kube import dynamic


def stood_in_kinds(served: frozenset[tuple[str, str]]) -> list[tuple[str, str]]:
    """The awaited kinds the stand-in serves: every one of AWAITED whose controller does not run."""
    return [key for key in AWAITED if key not in served]


class ConditionStandIn:
    """A thread that sets awaited conditions until stopped; `set` counts what it set."""

    def __init__(
        self, api: client.ApiClient, served: frozenset[tuple[str, str]] = frozenset(), interval: float = 1.0
    ) -> None:
        self._api = api
        # (group, kind) of the kinds whose real controller runs: never stood in for.
        self.served = served
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="condition-stand-in", daemon=True)
        self.set: dict[str, str] = {}
        self.errors: list[str] = []

    def __enter__(self) -> ConditionStandIn:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        dyn = dynamic(self._api)
        while not self._stop.is_set():
            for group, kind in stood_in_kinds(self.served):
                try:
                    self._serve(dyn, group, kind)
                except Exception as error:  # a kind the cluster does not serve, a race with a delete
                    message = f"{kind}: {error}"[:300]
                    if message not in self.errors:
                        self.errors.append(message)
            self._stop.wait(self._interval)

    def _serve(self, dyn: Any, group: str, kind: str) -> None:
        resources = [r for r in dyn.resources.search(group=group, kind=kind) if "/" not in r.name]
        if not resources:
            return
        resource = resources[0]
        for item in resource.get().to_dict().get("items", []):
            meta = item["metadata"]
            wanted = expected_conditions(meta.get("annotations") or {})
            if not wanted or "deletionTimestamp" in meta:
                continue
            have = {c["type"] for c in (item.get("status") or {}).get("conditions") or [] if c.get("status") == "True"}
            missing = [c for c in wanted if c not in have]
            if not missing:
                continue
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            conditions = [
                {
                    "type": condition,
                    "status": "True",
                    "reason": "RealRunStandIn",
                    "message": "set by the real run's operator stand-in (docs/real-run.md#controllers)",
                    "lastTransitionTime": now,
                    "observedGeneration": meta.get("generation", 1),
                }
                for condition in wanted
            ]
            dyn.patch(
                resource=resource.subresources["status"],
                body={"status": {"conditions": conditions}},
                name=meta["name"],
                namespace=meta.get("namespace"),
                content_type="application/merge-patch+json",
            )
            self.set[f"{kind} {meta.get('namespace', '')}/{meta['name']}"] = ",".join(wanted)


__all__ = ["WAIT_FOR", "ConditionStandIn", "time"]
