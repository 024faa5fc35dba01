"""CEL fragments shared by the virtual cluster's locks (rules/vcluster_release.py and
rules/vcluster_control_plane.py): who is asking, what an object is called, which list stayed as it was."""

from __future__ import annotations

from components.admission.base import literal, literal_list

# Every write a lock covers.
ALL_WRITES = ["CREATE", "UPDATE", "DELETE"]


def service_account(name: str) -> str:
    """CEL: the user name of the namespace's ServiceAccount `name`."""
    return f"'system:serviceaccount:' + request.namespace + ':' + {literal(name)}"


def platform_identity(users: list[str], groups: list[str]) -> str:
    return (
        f"request.userInfo.username in {literal_list(users)} || (has(request.userInfo.groups)"
        f" && request.userInfo.groups.exists(g, g in {literal_list(groups)}))"
    )


def labels_match(var: str, labels: dict[str, str]) -> str:
    """CEL: `var` carries every one of `labels`."""
    path = f"{var}.metadata.labels"
    return " && ".join(
        [
            f"has({path})",
            *(f"{literal(k)} in {path} && {path}[{literal(k)}] == {literal(v)}" for k, v in labels.items()),
        ]
    )


def object_name(var: str) -> str:
    return f"(has({var}.metadata.name) ? {var}.metadata.name : '')"


def list_kept(field: str) -> str:
    """CEL: the UPDATE leaves the list `metadata.<field>` as it was (a dangling owner reference has the
    garbage collector delete the object; a finalizer of the tenant's holds its deletion)."""
    return (
        f"(has(object.metadata.{field}) ? object.metadata.{field} : [])"
        f" == (has(oldObject.metadata.{field}) ? oldObject.metadata.{field} : [])"
    )
