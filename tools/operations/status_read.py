"""Read a tenant namespace's live objects through the official Kubernetes Python client.

The one seam between `tenancy status` and a cluster: `ClusterReader` turns the client's
calls into plain dicts (the API's own JSON shape, camelCase), and treats "not there" (a missing
namespace, a CRD that is not installed) as absence rather than failure, so a half-installed cluster
is reported, not crashed on. Tests inject fake `CoreV1Api` / `CustomObjectsApi` objects here.

The client is imported only when a cluster is read: it is in the `ops` dependency group, not in the
runtime set that `pulumi up` and the policy pack install, so a machine without it gets one line
saying what to install instead of an ImportError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

# The custom resources the status reads, as (apiVersion, kind, plural).
CUSTOM_KINDS: tuple[tuple[str, str, str], ...] = (
    ("source.toolkit.fluxcd.io/v1", "GitRepository", "gitrepositories"),
    ("source.toolkit.fluxcd.io/v1", "OCIRepository", "ocirepositories"),
    ("source.toolkit.fluxcd.io/v1", "HelmRepository", "helmrepositories"),
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "kustomizations"),
    ("helm.toolkit.fluxcd.io/v2", "HelmRelease", "helmreleases"),
    ("external-secrets.io/v1", "ExternalSecret", "externalsecrets"),
    ("postgresql.cnpg.io/v1", "Cluster", "clusters"),
    ("k8s.mariadb.com/v1alpha1", "MariaDB", "mariadbs"),
)
_NOT_FOUND = 404
CLIENT_MISSING = (
    "tenancy status needs the Kubernetes Python client, which the runtime set leaves out: "
    "pip install -r requirements-ops.txt"
)


# What to do when the client finds no usable kubeconfig (its own message is only "Invalid kube-config
# file. No configuration found." or a context name it does not know).
NO_CLUSTER = (
    "point tenancy status at a cluster: set KUBECONFIG to a kubeconfig file (default ~/.kube/config) "
    "and choose its context with --context NAME or the stack's tenancy:cluster.context "
    "(`kubectl config get-contexts` lists them; `make cluster` creates a local kind cluster)"
)


def config_error() -> type[Exception]:
    """The client's error for a missing or unusable kubeconfig (no file, no such context)."""
    try:
        from kubernetes.config.config_exception import ConfigException
    except ImportError as error:
        raise ClientMissingError(f"{CLIENT_MISSING} ({error})") from None
    return ConfigException


class ClientMissingError(RuntimeError):
    """The `kubernetes` package is not installed (it is in the `ops` group, not the runtime set)."""


def unreachable_errors() -> tuple[type[Exception], ...]:
    """What a missing kubeconfig, an unreachable API server or a refused request raise."""
    try:
        from kubernetes.client.exceptions import ApiException
        from kubernetes.config.config_exception import ConfigException
        from urllib3.exceptions import HTTPError
    except ImportError as error:
        raise ClientMissingError(f"{CLIENT_MISSING} ({error})") from None
    return (ConfigException, HTTPError, ApiException)


class CoreApi(Protocol):
    """The three `kubernetes.client.CoreV1Api` calls the status makes."""

    api_client: Any

    def read_namespace(self, name: str) -> Any: ...

    def list_namespaced_resource_quota(self, namespace: str) -> Any: ...

    def list_namespaced_pod(self, namespace: str) -> Any: ...


class CustomApi(Protocol):
    """The one `kubernetes.client.CustomObjectsApi` call the status makes."""

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str) -> Any: ...


@dataclass
class NamespaceObjects:
    """What one tenant namespace holds, as the API returns it (None: the namespace is absent)."""

    namespace: dict[str, Any] | None
    quotas: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    # apiVersion/kind -> objects; a kind whose CRD is not installed is absent from the mapping.
    custom: dict[str, list[dict[str, Any]]]


def _status(error: Exception) -> int | None:
    return getattr(error, "status", None)


class ClusterReader:
    """Reads namespaces through the client APIs handed in (the real ones or a test's fakes)."""

    def __init__(self, core: CoreApi, custom: CustomApi) -> None:
        self.core = core
        self.custom = custom

    def _plain(self, model: Any) -> Any:
        """The client's model objects as the API's JSON (camelCase keys, ISO timestamps)."""
        return self.core.api_client.sanitize_for_serialization(model)

    def read(self, namespace: str) -> NamespaceObjects:
        try:
            found = self._plain(self.core.read_namespace(namespace))
        except Exception as error:
            if _status(error) != _NOT_FOUND:
                raise
            return NamespaceObjects(None, [], [], {})
        quotas = self._plain(self.core.list_namespaced_resource_quota(namespace)).get("items") or []
        pods = self._plain(self.core.list_namespaced_pod(namespace)).get("items") or []
        custom: dict[str, list[dict[str, Any]]] = {}
        for api_version, kind, plural in CUSTOM_KINDS:
            group, version = api_version.split("/")
            try:
                listed = self.custom.list_namespaced_custom_object(group, version, namespace, plural)
            except Exception as error:
                if _status(error) != _NOT_FOUND:
                    raise
                continue
            custom[f"{api_version}/{kind}"] = listed.get("items") or []
        return NamespaceObjects(found, quotas, pods, custom)


def kubernetes_reader(context: str | None) -> ClusterReader:
    """A reader on the kubeconfig's cluster (its current context unless `context` is given)."""
    unreachable_errors()  # ClientMissingError, with what to install, before anything else fails
    from kubernetes import client, config

    api = config.new_client_from_config(context=context)  # type: ignore[no-untyped-call]
    return ClusterReader(client.CoreV1Api(api), client.CustomObjectsApi(api))
