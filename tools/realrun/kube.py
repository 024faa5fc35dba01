"""Untyped corners of the Kubernetes client, typed once here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubernetes import client, config
from kubernetes.dynamic import DynamicClient


def api_client(kubeconfig: Path) -> client.ApiClient:
    """A client for the kubeconfig's current context."""
    made: client.ApiClient = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
    return made


def dynamic(api: client.ApiClient) -> Any:
    """A client for any kind by apiVersion and kind (discovery), as the objects the plan renders."""
    return DynamicClient(api)  # type: ignore[no-untyped-call]


def plain(api: client.ApiClient, obj: Any) -> Any:
    """A typed client object as the JSON the API server serves (dicts, lists, strings)."""
    return api.sanitize_for_serialization(obj)  # type: ignore[no-untyped-call]
