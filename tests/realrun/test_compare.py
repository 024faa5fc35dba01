"""The live-versus-plan comparison of the real run (tools/realrun/compare.py)."""

from __future__ import annotations

import base64

from tools.realrun.compare import compare


def _quota(hard: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "n"},
        "spec": {"hard": hard},
    }


def test_a_field_the_server_drops_is_a_difference() -> None:
    planned = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}, "data": {"a": "1"}}
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n", "uid": "x"}}
    [difference] = compare(planned, live)
    assert difference.path == ".data"
    assert "ConfigMap n/c" in str(difference)


def test_fields_the_server_adds_are_not_differences() -> None:
    planned = _quota({"pods": "10"})
    live = {**_quota({"pods": "10"}), "status": {"used": {"pods": "0"}}}
    live["metadata"] = {"name": "q", "namespace": "n", "resourceVersion": "7", "managedFields": []}
    assert compare(planned, live) == []


def test_quantities_compare_by_value_as_the_server_canonicalises_them() -> None:
    assert (
        compare(
            _quota({"requests.cpu": "0.5", "limits.memory": "1024Mi"}),
            _quota({"requests.cpu": "500m", "limits.memory": "1Gi"}),
        )
        == []
    )
    assert compare(_quota({"requests.cpu": "0.5"}), _quota({"requests.cpu": "400m"}))


def test_a_missing_object_is_one_difference() -> None:
    [difference] = compare(_quota({"pods": "1"}), None)
    assert difference.live is None


def test_secret_data_compares_decoded_and_string_data_is_write_only() -> None:
    encoded = base64.b64encode(b"value").decode()
    planned = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "n"},
        "data": {"k": encoded},
        "stringData": {"p": "x"},
    }
    live = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "n"},
        "data": {"k": encoded, "p": "eA=="},
    }
    assert compare(planned, live) == []
    live["data"] = {"k": base64.b64encode(b"other").decode()}
    assert [d.path for d in compare(planned, live)] == [".data.k"]


def test_lists_compare_element_by_element() -> None:
    planned = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "n"},
        "spec": {"ports": [{"port": 80}]},
    }
    live = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "n"},
        "spec": {"ports": [{"port": 80, "protocol": "TCP"}]},
    }
    assert compare(planned, live) == []
    live["spec"]["ports"] = [{"port": 81}]  # type: ignore[index]
    assert [d.path for d in compare(planned, live)] == [".spec.ports[0].port"]


def test_an_empty_map_or_list_reads_back_absent() -> None:
    planned = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "annotations": {}},
        "data": {"a": "1"},
    }
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    assert compare(planned, live) == []
    planned["metadata"]["annotations"] = {"k": "v"}  # type: ignore[index]
    assert [d.path for d in compare(planned, live)] == [".metadata.annotations"]
