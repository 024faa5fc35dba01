"""The API server's defaulting that admission rules depend on, applied before the admission chain.

The API server defaults an object when it decodes the request, before any mutating or validating
admission runs, so a rule sees defaulted fields. Only the defaults a rule reads are modelled here.

- `imagePullPolicy` (pkg/apis/core/v1/defaults.go, SetDefaults_Container): `Always` when the image's
  tag is `latest` or it names neither tag nor digest, otherwise `IfNotPresent`. The workloads rule
  requires `Always`, so a fixture that leaves the field out is judged as the server would judge it.
- an `image` volume's `pullPolicy` (the same file, SetDefaults_Volume, k8s.io/kubernetes v1.36.3):
  the same rule, by the volume's `reference`.
"""

from __future__ import annotations

import copy
from typing import Any

_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _tag(image: str) -> str | None:
    """The image's tag, `latest` when it names neither tag nor digest, None for a digest only."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.split(":", 1)[1]
    return None if "@" in image else "latest"


def pull_policy(image: str) -> str:
    return "Always" if _tag(image) == "latest" else "IfNotPresent"


def default_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """A copy of `pod` with every container's imagePullPolicy (and image volume's pullPolicy)
    defaulted as the API server does."""
    defaulted = copy.deepcopy(pod)
    spec = defaulted.get("spec") or {}
    for field in _CONTAINER_LISTS:
        for container in spec.get(field) or []:
            if "imagePullPolicy" not in container and "image" in container:
                container["imagePullPolicy"] = pull_policy(container["image"])
    for volume in spec.get("volumes") or []:
        image = volume.get("image")
        if isinstance(image, dict) and "pullPolicy" not in image and "reference" in image:
            image["pullPolicy"] = pull_policy(image["reference"])
    return defaulted
