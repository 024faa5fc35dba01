"""The run's evidence: status writers, redacted Secrets, the size cap (tools/realrun/controllers/evidence.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tools.realrun.controllers.evidence import stack_cluster_objects, status_writers, write


def _object(name: str, namespace: str | None = "tenant-a", padding: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "managedFields": [
            {"manager": "pulumi-kubernetes", "operation": "Apply"},
            {"manager": "cert-manager-certificates-readiness", "operation": "Update", "subresource": "status"},
        ],
        "annotations": {"pad": "x" * padding},
    }
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": meta, "status": {"conditions": []}}


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_objects_go_per_namespace_with_who_wrote_their_status(tmp_path: Path) -> None:
    log = tmp_path / "cert-manager.log"
    log.write_text("issued\n")
    written = write(tmp_path / "evidence", [_object("a"), _object("ca", "cert-manager")], {"cert-manager": log})
    assert written.objects == 2 and not written.left_out
    folder = tmp_path / "evidence"
    assert [o["metadata"]["name"] for o in json.loads((folder / "objects/tenant-a.json").read_text())] == ["a"]
    writers = json.loads((folder / "status-writers.json").read_text())
    assert writers["cert-manager.io/v1 Certificate tenant-a/a"] == ["cert-manager-certificates-readiness"]
    assert (folder / "logs/cert-manager.log").read_text() == "issued\n"


def test_secret_values_are_replaced_by_their_length(tmp_path: Path) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "t"},
        "data": {"k": "c2VjcmV0"},
    }
    write(tmp_path, [secret], {})
    assert json.loads((tmp_path / "objects/t.json").read_text())[0]["data"] == {"k": "<8 bytes>"}


def test_the_folder_never_passes_the_cap_and_names_what_it_left_out(tmp_path: Path) -> None:
    cap = 200_000
    objects = [_object(f"big-{i}", padding=30_000) for i in range(20)]
    log = tmp_path / "controller.log"
    log.write_bytes(b"line\n" * 100_000)
    written = write(tmp_path / "evidence", objects, {"controller": log}, cap=cap)
    assert _size(tmp_path / "evidence") <= cap
    assert written.left_out and written.objects + len([x for x in written.left_out if "big-" in x]) == 20
    index = json.loads((tmp_path / "evidence/index.json").read_text())
    assert index["left_out"] == written.left_out
    # The log's end is kept (where a failure is), not its start.
    assert (tmp_path / "evidence/logs/controller.log").read_bytes().endswith(b"line\n")


def test_status_writers_are_the_status_subresource_managers_only() -> None:
    assert status_writers(_object("a")) == ["cert-manager-certificates-readiness"]


def test_the_stacks_cluster_objects_come_from_its_state() -> None:
    deployment = {
        "resources": [
            {
                "outputs": {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRole",
                    "metadata": {"name": "r"},
                }
            },
            {"outputs": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}},
            {"outputs": {}},
        ]
    }
    assert stack_cluster_objects(deployment) == {("rbac.authorization.k8s.io/v1", "ClusterRole", "r")}
