"""A fake of what bootstrap talks to (pulumi, gcloud, aws, kubectl, gh) that keeps state and can fail.

Unlike the recording stand-ins of test_bootstrap.py, this one remembers what exists and answers as
the real CLIs and APIs do where a re-run depends on it:

- a describe/get of something missing exits non-zero; a create of something that exists fails
  ("already exists": gcloud, `aws iam create-role` EntityAlreadyExists, `pulumi stack init`);
- `aws kms create-key` always makes a new key (KMS has no name to collide on), so a re-run that
  creates again leaves an orphan key, as it would in an account;
- `kubectl apply` of an object in a namespace that does not exist fails (NotFound), as the API
  server does for a namespaced create;
- GitHub creates an environment on PUT and a branch policy on POST; a GET of either missing is 404.

`fail` makes one call fail: `before` (nothing happens, the call errors) or `after` (the change is
made, then the call errors: a timeout after the server acted). Every mutating call is counted, so a
test can fail each one in turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tools.operations.bootstrap import BootstrapError, Runner

PROJECT_NUMBER = "123456789012"
ACCOUNT = "111122223333"


@dataclass
class Failure:
    index: int  # the n-th mutating call (0-based) fails
    mode: str  # before | after


@dataclass
class FakeCloud:
    """Everything that exists, by kind, and the mutating calls made so far."""

    # What exists before the bootstrap: the prod stack's GKE cluster runs its node pools as this
    # account (Pulumi.prod.yaml `serviceAccount`), made with the cluster, not by the bootstrap, which
    # grants the deploy identity actAs on it (docs/bootstrap.md).
    things: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {"service-account": {"gke-nodes@tenancy-prod.iam.gserviceaccount.com": {}}}
    )
    # What every cluster has before the first `up`.
    namespaces: set[str] = field(default_factory=lambda: {"default", "kube-system"})
    mutations: list[str] = field(default_factory=list)
    fail: Failure | None = None
    keys: int = 0

    def has(self, kind: str, name: str) -> bool:
        return name in self.things.get(kind, {})

    def get(self, kind: str, name: str) -> dict[str, Any]:
        thing: dict[str, Any] = self.things.setdefault(kind, {}).setdefault(name, {})
        return thing

    def create(self, kind: str, name: str, **attributes: Any) -> None:
        if self.has(kind, name):
            raise CallFailedError(f"{kind} {name} already exists")
        self.things.setdefault(kind, {})[name] = dict(attributes)

    def snapshot(self) -> dict[str, Any]:
        """What exists, comparable between runs."""
        everything = {"things": self.things, "namespaces": sorted(self.namespaces)}
        state: dict[str, Any] = json.loads(json.dumps(everything, default=sorted))
        return state


class CallFailedError(Exception):
    pass


MUTATING = (
    " create",
    " update",
    " init ",
    "add-iam-policy-binding",
    "put-",
    "associate-",
    "apply",
    "-X PUT",
    "-X POST",
    "create-",
    "login",
)


def _flag(argv: list[str], name: str) -> str:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
    return ""


class FakeRunner(Runner):
    """bootstrap's Runner, answered by a FakeCloud instead of real processes."""

    def __init__(self, cloud: FakeCloud, root: Path) -> None:
        super().__init__(cwd=root)
        self.cloud = cloud

    def run(
        self, *argv: str, stdin: str | None = None, placeholder: str = "", env: dict[str, str] | None = None
    ) -> str:
        self.log.append(list(argv))
        line = " ".join(argv)
        mutating = any(marker in f" {line} " for marker in MUTATING) and " describe" not in line
        failure = self.cloud.fail
        index = len(self.cloud.mutations)
        if mutating:
            self.cloud.mutations.append(line)
        if mutating and failure is not None and failure.index == index and failure.mode == "before":
            raise BootstrapError(f"`{line}` failed (injected, before)")
        try:
            out = answer(self.cloud, list(argv), stdin)
        except CallFailedError as error:
            raise BootstrapError(f"`{line}` failed: {error}") from error
        if mutating and failure is not None and failure.index == index and failure.mode == "after":
            raise BootstrapError(f"`{line}` failed (injected, after the change was made)")
        return out

    def probe(self, *argv: str) -> bool:
        self.log.append(list(argv))
        try:
            answer(self.cloud, list(argv), None)
        except CallFailedError:
            return False
        return True


def answer(cloud: FakeCloud, argv: list[str], stdin: str | None) -> str:
    tool, rest = argv[0], argv[1:]
    line = " ".join(rest)
    if tool == "pulumi":
        if rest[0] == "login":
            return ""
        if rest[:2] == ["stack", "ls"]:
            return json.dumps([{"name": name} for name in cloud.things.get("stack", {})])
        if rest[:2] == ["stack", "init"]:
            cloud.create("stack", rest[2].rsplit("/", 1)[-1], provider=_flag(rest, "--secrets-provider"))
            return ""
        if rest[0] == "whoami":
            return json.dumps({"user": "admin", "organizations": ["acme"]})
    if tool == "gcloud":
        if line.startswith("projects describe"):
            return PROJECT_NUMBER
        if line.startswith("container node-pools describe"):
            return json.dumps({"config": {}})
        if line.startswith("container clusters get-credentials"):
            return ""
        for prefix, kind in (
            ("storage buckets", "bucket"),
            ("kms keyrings", "keyring"),
            ("kms keys", "key"),
            ("iam workload-identity-pools providers", "wif-provider"),
            ("iam workload-identity-pools", "wif-pool"),
            ("iam roles", "role"),
            ("iam service-accounts", "service-account"),
            ("projects", "project"),
        ):
            if line.startswith(prefix + " "):
                verb, name = line[len(prefix) + 1 :].split(" ")[:2]
                if kind == "key":
                    name = f"{_flag(rest, '--keyring')}/{name}"
                if kind == "service-account" and verb == "create":
                    # Created by account id, addressed by e-mail afterwards.
                    name = f"{name}@{_flag(rest, '--project')}.iam.gserviceaccount.com"
                if verb == "describe":
                    if not cloud.has(kind, name):
                        raise CallFailedError(f"NOT_FOUND: {kind} {name}")
                    return "{}"
                # Settings given as bare flags (--versioning) accumulate: what the thing now has.
                flags = {a for a in rest if a.startswith("--") and "=" not in a and a != "--quiet"}
                if verb in ("create", "create-oidc"):
                    cloud.create(kind, name, settings=sorted(flags))
                    return ""
                if verb == "update":
                    if not cloud.has(kind, name):
                        raise CallFailedError(f"NOT_FOUND: {kind} {name}")
                    thing = cloud.get(kind, name)
                    thing["settings"] = sorted(set(thing.get("settings", [])) | flags)
                    return ""
                if verb == "add-iam-policy-binding":
                    if kind != "project" and not cloud.has(kind, name):
                        raise CallFailedError(f"NOT_FOUND: {kind} {name}")
                    member, role = _flag(rest, "--member"), _flag(rest, "--role")
                    cloud.get("binding", f"{kind}:{name}").setdefault(role, [])
                    bound = cloud.get("binding", f"{kind}:{name}")[role]
                    if member not in bound:
                        bound.append(member)
                    return ""
    if tool == "aws":
        region = _flag(rest, "--region")
        if line.startswith("sts get-caller-identity"):
            return ACCOUNT
        if line.startswith("s3api head-bucket"):
            if not cloud.has("s3", _flag(rest, "--bucket")):
                raise CallFailedError("404")
            return ""
        if line.startswith("s3api create-bucket"):
            cloud.create("s3", _flag(rest, "--bucket"))
            return ""
        if line.startswith(("s3api put-bucket-versioning", "s3api put-public-access-block")):
            cloud.get("s3", _flag(rest, "--bucket"))[rest[1]] = True
            return ""
        if line.startswith("kms describe-key"):
            alias = _flag(rest, "--key-id")
            if not cloud.has("kms-alias", alias):
                raise CallFailedError("NotFoundException")
            key = cloud.get("kms-alias", alias)["key"]
            return f"arn:aws:kms:{region}:{ACCOUNT}:key/{key}"
        if line.startswith("kms create-key"):
            cloud.keys += 1
            key = f"key-{cloud.keys}"
            tag = _flag(rest, "--tags")
            parsed = dict(part.split("=", 1) for part in tag.split(",")) if tag else {}
            cloud.create("kms-key", key, tags={parsed["TagKey"]: parsed["TagValue"]} if parsed else {})
            return key
        if line.startswith("kms create-alias"):
            target = _flag(rest, "--target-key-id").rsplit("/", 1)[-1]
            if not cloud.has("kms-key", target):
                raise CallFailedError(f"NotFoundException: key {target}")
            cloud.create("kms-alias", _flag(rest, "--alias-name"), key=target)
            return ""
        if line.startswith("resourcegroupstaggingapi get-resources"):
            wanted = dict(part.split("=", 1) for part in _flag(rest, "--tag-filters").split(","))
            return "\t".join(
                f"arn:aws:kms:{region}:{ACCOUNT}:key/{key}"
                for key, attributes in cloud.things.get("kms-key", {}).items()
                if attributes.get("tags", {}).get(wanted["Key"]) == wanted["Values"]
            )
        if line.startswith("iam get-open-id-connect-provider"):
            if not cloud.has("oidc", "github"):
                raise CallFailedError("NoSuchEntity")
            return ""
        if line.startswith("iam create-open-id-connect-provider"):
            cloud.create("oidc", "github")
            return ""
        if line.startswith("iam get-role"):
            if not cloud.has("iam-role", _flag(rest, "--role-name")):
                raise CallFailedError("NoSuchEntity")
            return ""
        if line.startswith("iam create-role"):
            cloud.create(
                "iam-role",
                _flag(rest, "--role-name"),
                trust=_flag(rest, "--assume-role-policy-document"),
                max=_flag(rest, "--max-session-duration"),
            )
            return ""
        if line.startswith(("iam update-assume-role-policy", "iam update-role", "iam put-role-policy")):
            name = _flag(rest, "--role-name")
            if not cloud.has("iam-role", name):
                raise CallFailedError("NoSuchEntity")
            if rest[1] == "update-role":
                cloud.get("iam-role", name)["max"] = _flag(rest, "--max-session-duration")
            elif rest[1] == "update-assume-role-policy":
                cloud.get("iam-role", name)["trust"] = _flag(rest, "--policy-document")
            else:
                cloud.get("iam-role", name)[_flag(rest, "--policy-name")] = _flag(rest, "--policy-document")
            return ""
        if line.startswith("eks describe-access-entry"):
            if not cloud.has("access-entry", _flag(rest, "--principal-arn")):
                raise CallFailedError("ResourceNotFoundException")
            return ""
        if line.startswith("eks create-access-entry"):
            cloud.create("access-entry", _flag(rest, "--principal-arn"), groups=_flag(rest, "--kubernetes-groups"))
            return ""
        if line.startswith("eks associate-access-policy"):
            cloud.get("access-entry", _flag(rest, "--principal-arn"))["policy"] = _flag(rest, "--policy-arn")
            return ""
        if line.startswith("eks describe-nodegroup"):
            return json.dumps({"nodegroup": {}})
        if line.startswith("eks update-kubeconfig"):
            return ""
    if tool == "kubectl":
        verb = next(a for a in rest if a in ("apply", "get"))
        if verb == "get":
            if rest[-1] not in cloud.namespaces:
                raise CallFailedError(f'namespaces "{rest[-1]}" not found')
            return ""
        for document in yaml.load_all(stdin or "", Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if not document:
                continue
            namespace = document["metadata"].get("namespace")
            if namespace and namespace not in cloud.namespaces:
                raise CallFailedError(f'namespaces "{namespace}" not found')
            key = f"{document['kind']}/{namespace or ''}/{document['metadata']['name']}"
            cloud.things.setdefault("k8s", {})[key] = {}
        return ""
    if tool == "gh":
        method = _flag(rest, "-X") or "GET"
        endpoint = next(a for a in rest[1:] if a.startswith("repos/"))
        name = endpoint.split("/environments/")[1]
        if name.endswith("/deployment-branch-policies"):
            environment = name.split("/")[0]
            if not cloud.has("environment", environment):
                raise CallFailedError("HTTP 404")
            policies = cloud.get("environment", environment).setdefault("policies", [])
            if method == "POST":
                policies.append({"name": _flag(rest, "-f").split("=", 1)[1], "type": "branch"})
            return json.dumps({"branch_policies": policies})
        if method == "PUT":
            body = json.loads(stdin or "{}")
            cloud.things.setdefault("environment", {}).setdefault(name, {}).update(body)
            return "{}"
        if not cloud.has("environment", name):
            raise CallFailedError("HTTP 404")
        shown = {key: value for key, value in cloud.get("environment", name).items() if key != "policies"}
        shown.setdefault("protection_rules", [])
        return json.dumps(shown)
    raise AssertionError(f"the fake does not know {' '.join(argv)}")
