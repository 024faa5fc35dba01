"""Which Flux objects the e2e must see Ready: every one whose source is public.

    kubectl get <flux kinds> -A -o json | tenancy flux-public    # "<resource> <namespace> <name>" lines

The example tenants point some Flux sources at private or made-up addresses (a Git server or OCI
registry under a reserved example domain): those can never become Ready on a throwaway cluster.
Everything else the program renders (the virtual clusters' chart repository and their
HelmReleases) comes from public sources and must become Ready; a HelmRelease whose chart refuses
the values the program renders stays not Ready, and the e2e must fail on it rather than pass.

A source is public unless its host is a reserved name that never resolves (RFC 2606 and RFC 6761:
`example`, `test`, `invalid`, `localhost` top-level names and `example.com|net|org`). A
HelmRelease (`spec.chart.spec.sourceRef` or `spec.chartRef`) or Kustomization (`spec.sourceRef`)
counts when the source it names is public. Sources are listed first, then what uses them, so
the e2e waits in dependency order. Suspended objects are left out: they never reconcile.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any
from urllib.parse import urlparse

RESERVED_TOP_LEVEL = ("example", "test", "invalid", "localhost")
RESERVED_DOMAINS = ("example.com", "example.net", "example.org")
SOURCE_KINDS = {
    "HelmRepository": "helmrepositories.source.toolkit.fluxcd.io",
    "GitRepository": "gitrepositories.source.toolkit.fluxcd.io",
    "OCIRepository": "ocirepositories.source.toolkit.fluxcd.io",
}
CONSUMER_KINDS = {
    "HelmRelease": "helmreleases.helm.toolkit.fluxcd.io",
    "Kustomization": "kustomizations.kustomize.toolkit.fluxcd.io",
}
# What `kubectl get` must list for the e2e (scripts/e2e/wait-flux.sh).
KUBECTL_RESOURCES = ",".join([*SOURCE_KINDS.values(), *CONSUMER_KINDS.values()])


def public_url(url: str) -> bool:
    """False for an address under a reserved name that can never resolve."""
    host = (urlparse(url).hostname or "").lower().rstrip(".")
    if not host:
        return False
    labels = host.split(".")
    if labels[-1] in RESERVED_TOP_LEVEL:
        return False
    return not any(host == domain or host.endswith("." + domain) for domain in RESERVED_DOMAINS)


def _source_ref(obj: dict[str, Any]) -> dict[str, Any] | None:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "HelmRelease":
        ref = spec.get("chartRef") or ((spec.get("chart") or {}).get("spec") or {}).get("sourceRef")
    else:
        ref = spec.get("sourceRef")
    return ref if isinstance(ref, dict) else None


def to_wait_for(objects: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(resource, namespace, name) of every Flux object with a public source, sources first."""
    public_sources: set[tuple[str, str, str]] = set()
    sources: list[tuple[str, str, str]] = []
    consumers: list[tuple[str, str, str]] = []
    for obj in objects:
        kind, meta = obj.get("kind"), obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        if kind in SOURCE_KINDS and public_url(str((obj.get("spec") or {}).get("url", ""))):
            public_sources.add((str(kind), namespace, name))
            if not (obj.get("spec") or {}).get("suspend"):
                sources.append((SOURCE_KINDS[str(kind)], namespace, name))
    for obj in objects:
        kind, meta = obj.get("kind"), obj.get("metadata") or {}
        if kind not in CONSUMER_KINDS or (obj.get("spec") or {}).get("suspend"):
            continue
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        ref = _source_ref(obj)
        if (
            ref
            and (str(ref.get("kind")), str(ref.get("namespace") or namespace), str(ref.get("name"))) in public_sources
        ):
            consumers.append((CONSUMER_KINDS[str(kind)], namespace, name))
    return sources + consumers


def main(argv: list[str] | None = None) -> int:
    """Read the objects from stdin, print one "<resource> <namespace> <name>" line per object to wait for."""
    parser = argparse.ArgumentParser(prog="tenancy flux-public", description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    try:
        document = json.load(sys.stdin)
    except json.JSONDecodeError as error:
        print(f"stdin is not JSON (`kubectl get ... -o json`): {error}", file=sys.stderr)
        return 2
    items = document.get("items", []) if isinstance(document, dict) else []
    for resource, namespace, name in to_wait_for(items):
        print(f"{resource} {namespace} {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
