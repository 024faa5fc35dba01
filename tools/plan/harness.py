"""Run the real `__main__.py` under Pulumi's mock runtime and record everything it registers.

This is what makes a plan possible without the Pulumi CLI, a cluster or a cloud account: the
program runs unchanged, and a recording monitor keeps each registration request (type, name,
parent, inputs, and the options that guard data), with secrets redacted as they arrive.
Both the `tools.plan.run` command and the tests use it, so the tests always exercise the real program.
"""

from __future__ import annotations

import difflib
import runpy
import sys
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime import stack as runtime_stack
from pulumi.runtime.config import set_all_config

from components.model.core.yaml_text import load_yaml
from components.vcluster.previous import DEFAULT_ORGANIZATION
from tools.plan import collector, lean_sdk, run_cache
from tools.plan.lean_sdk import EngineLog
from tools.plan.run_key import forbidden_strings, run_key

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
PROJECT_NAME = "tenancy"
SECRET_PLACEHOLDER = "[secret]"
UNKNOWN_PLACEHOLDER = "[unknown]"

_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


@dataclass
class RecordedResource:
    """One registered resource as the engine would have received it."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    protect: bool
    retain_on_delete: bool
    deleted_with: str | None
    provider: str | None
    dependencies: list[str]
    aliases: list[str]
    ignore_changes: list[str]
    # True for resources the program reads rather than manages (StackReference, `.get()`).
    read: bool = False

    @property
    def provider_urn(self) -> str | None:
        """The URN of the explicit provider, or None where the engine would use a default provider.

        The request carries a provider reference, `<provider URN>::<provider id>`; the id is
        unknown during a preview and means nothing offline, so the plan keeps the URN only.
        """
        return provider_urn(self.provider)

    def as_json(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "provider": self.provider_urn,
            "dependencies": self.dependencies,
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "custom": self.custom,
            "protect": self.protect,
            "retainOnDelete": self.retain_on_delete,
            "deletedWith": self.deleted_with,
            "ignoreChanges": self.ignore_changes,
            "aliases": self.aliases,
            "inputs": self.inputs,
        }


def provider_urn(reference: str | None) -> str | None:
    """`urn:...::name` of a provider reference `urn:...::name::id` (None stays None)."""
    if not reference:
        return None
    urn, separator, _ = reference.rpartition("::")
    return urn if separator else reference


def request_dependencies(request: Any) -> list[str]:
    """Every resource the engine orders this one after, as the request names them: `depends_on`
    plus the resources whose outputs feed its inputs (`dependencies` and `propertyDependencies`;
    the SDK puts the second in the first too, the union guards against an SDK that does not).
    Components in `depends_on` arrive expanded to their custom children. The parent is the
    record's own `parent` field."""
    urns = set(request.dependencies)
    for dependencies in request.propertyDependencies.values():
        urns.update(dependencies.urns)
    return sorted(urns)


def redact(value: Any) -> Any:
    """Turn the wire form of property values into plain JSON, replacing every secret."""
    if isinstance(value, dict):
        signature = value.get(_SIG_KEY)
        if signature == _SECRET_SIG:
            return _redact_secret(value.get("value"))
        if signature == _RESOURCE_SIG:
            return {"$ref": value.get("urn")}
        return {key: redact(item) for key, item in value.items() if key != _SIG_KEY}
    if isinstance(value, list):
        return [redact(item) for item in value]
    if value == _UNKNOWN:
        return UNKNOWN_PLACEHOLDER
    if isinstance(value, float) and value.is_integer():
        # The wire carries every number as a double; ports and counts are integers.
        return int(value)
    return value


def _redact_secret(inner: Any) -> Any:
    """A secret's value with its shape kept: map keys (field names, a Secret's data keys) are not
    secret and stay, every leaf becomes the placeholder, so a redacted object still passes its schema."""
    if isinstance(inner, dict) and _SIG_KEY not in inner:
        return {key: _redact_secret(item) for key, item in inner.items()}
    if isinstance(inner, list):
        return [_redact_secret(item) for item in inner]
    return SECRET_PLACEHOLDER


def _wire_to_json(struct: Any) -> Any:
    return redact(json_format.MessageToDict(struct, preserving_proto_field_name=True))


# Outputs that StackReferences resolve to under mocks, by fully qualified stack name.
STACK_REFERENCE_OUTPUTS: dict[str, dict[str, Any]] = {}
# What the engine answers as a stack's last deployed outputs (`pulumi:pulumi:readStackOutputs`),
# by fully qualified stack name; empty: a first deployment.
PREVIOUS_STACK_OUTPUTS: dict[str, dict[str, Any]] = {}
# Cloud SQL instance id -> its live disk size (GB), as `gcp.sql.get_database_instance` answers it
# (components/clouds/gcp/disk_size.py); unknown instances answer no size. Tests set it through
# monkeypatch, which plans without the run cache.
LIVE_CLOUD_SQL_DISKS: dict[str, int] = {}


# Every generated credential under mocks starts with this, so tests can prove none leaks into
# plan files or stack outputs in plain text.
MOCK_SECRET_PREFIX = "mock-secret-value-"
MOCK_PROJECT = "mock-project"
MOCK_ACCOUNT = "111122223333"


def _computed_outputs(typ: str, name: str, state: dict[str, Any], reading: bool) -> tuple[str, dict[str, Any]] | None:
    """Values the cloud computes (ids, emails, ARNs, addresses) that the program passes on."""
    if typ == "random:index/randomPassword:RandomPassword":
        return f"{name}-id", {"result": f"{MOCK_SECRET_PREFIX}{name}"}
    if typ == "kubernetes:core/v1:Secret" and reading:
        # A platform Secret read from the cluster (local shared secrets).
        return f"{name}-id", {"data": {"value": f"{MOCK_SECRET_PREFIX}{name}"}}
    if typ == "gcp:serviceaccount/account:Account":
        email = f"{state.get('accountId')}@{MOCK_PROJECT}.iam.gserviceaccount.com"
        resource_name = f"projects/{MOCK_PROJECT}/serviceAccounts/{email}"
        return email, {"email": email, "name": resource_name, "member": f"serviceAccount:{email}"}
    if typ == "gcp:projects/serviceIdentity:ServiceIdentity":
        email = f"service-0@gcp-sa-{state.get('service', '').split('.')[0]}.iam.gserviceaccount.com"
        return f"{name}-id", {"email": email, "member": f"serviceAccount:{email}"}
    if typ == "gcp:kms/keyRing:KeyRing":
        return f"projects/{MOCK_PROJECT}/locations/{state.get('location')}/keyRings/{state.get('name')}", {}
    if typ == "gcp:kms/cryptoKey:CryptoKey":
        return f"{state.get('keyRing')}/cryptoKeys/{state.get('name')}", {}
    if typ == "gcp:sql/databaseInstance:DatabaseInstance":
        octet = sum(name.encode()) % 250 + 2
        instance = f"{name}-mock"
        return instance, {
            "name": instance,
            "privateIpAddress": f"10.30.0.{octet}",
            "connectionName": f"{MOCK_PROJECT}:region:{instance}",
        }
    if typ == "gcp:secretmanager/secret:Secret":
        return f"projects/{MOCK_PROJECT}/secrets/{state.get('secretId')}", {}
    arn = f"arn:aws:{{}}:eu-west-1:{MOCK_ACCOUNT}:{{}}"
    if typ == "aws:kms/key:Key":
        return f"{name}-key-id", {"arn": arn.format("kms", f"key/{name}"), "keyId": f"{name}-key-id"}
    if typ == "aws:iam/role:Role":
        return f"{name}", {"arn": f"arn:aws:iam::{MOCK_ACCOUNT}:role/{name}", "name": name}
    if typ == "aws:secretsmanager/secret:Secret":
        return f"{name}-id", {"arn": arn.format("secretsmanager", f"secret:{state.get('name')}-AbCdEf")}
    if typ == "aws:secretsmanager/secretVersion:SecretVersion" and reading:
        # Admin credentials read back by id (shared RDS instances), in RDS's JSON shape.
        return f"{name}-id", {"secretString": f'{{"username": "admin", "password": "{MOCK_SECRET_PREFIX}{name}"}}'}
    if typ == "aws:rds/instance:Instance":
        address = f"{name}.abcdefghij.eu-west-1.rds.amazonaws.com"
        endpoint = f"{address}:5432"
        rds_arn = arn.format("rds", f"db:{name}")
        return name, {"address": address, "endpoint": endpoint, "identifier": name, "arn": rds_arn}
    return None


class _Mocks(pulumi.runtime.Mocks):
    """Return inputs as outputs, plus the computed values some resources need downstream."""

    def __init__(self) -> None:
        # Every value these mocks made up (ids, e-mails, ARNs, addresses; not secrets, which are
        # redacted anyway), so plan files can mark where one ended up (tools/plan/mock_marks.py).
        self.made: set[str] = set()
        # Every other stack whose outputs the run read, so a cached run is known to depend only on
        # the stacks its key holds (`readable_stacks`).
        self.read_stacks: set[str] = set()

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        if args.typ == "pulumi:pulumi:StackReference":
            # A tenants shard reads the platform stack: serve the outputs of its offline plan.
            referenced = str(args.inputs.get("name", ""))
            self.read_stacks.add(referenced)
            return referenced, {"name": referenced, "outputs": STACK_REFERENCE_OUTPUTS.get(referenced, {})}
        state = dict(args.inputs)
        computed = _computed_outputs(args.typ, args.name, state, reading=bool(args.resource_id))
        if computed is not None:
            resource_id, extra = computed
            made = [resource_id, *(value for value in extra.values() if isinstance(value, str))]
            # The resource's own name (an IAM role's) is the program's; `<name>-id` is every mocked
            # resource's id, never a cloud value the program passes on.
            ordinary = {args.name, f"{args.name}-id"}
            self.made.update(v for v in made if v not in ordinary and not v.startswith(MOCK_SECRET_PREFIX))
            return resource_id, {**state, **extra}
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        # No failures is an empty list: the mock monitor iterates the second item.
        if args.token == "pulumi:pulumi:readStackOutputs":
            # A stack's last outputs, read synchronously (components/vcluster/previous.py).
            name = str(args.args.get("name", ""))
            self.read_stacks.add(name)
            return {"name": name, "outputs": PREVIOUS_STACK_OUTPUTS.get(name, {}), "secretOutputNames": []}, []
        if args.token == "gcp:sql/getDatabaseInstance:getDatabaseInstance":
            instance = str(args.args.get("name", ""))
            size = LIVE_CLOUD_SQL_DISKS.get(instance)
            return {"name": instance, "settings": [{"diskSize": size}] if size is not None else []}, []
        return {}, []


# Called with 1 for each resource registered (tools/plan/progress.py draws a bar with it).
ON_REGISTER: list[Callable[[int], object]] = []


class RecordingMonitor(mocks.MockMonitor):
    """A mock monitor that also keeps each registration request and the stack's outputs."""

    def __init__(self, pulumi_mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(pulumi_mocks)
        self.recorded: list[RecordedResource] = []
        self.stack_outputs: dict[str, Any] = {}
        # Every invoke (function call such as `aws.get_caller_identity`) as (token, provider URN):
        # with default providers disabled, an invoke without a provider is refused too.
        self.invokes: list[tuple[str, str | None]] = []

    def Invoke(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        self.invokes.append((request.tok, provider_urn(request.provider or None)))
        return super().Invoke(request)

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        response = super().RegisterResource(request)
        for on_register in ON_REGISTER:
            on_register(1)
        if request.type != "pulumi:pulumi:Stack":
            self.recorded.append(
                RecordedResource(
                    urn=response.urn,
                    type=request.type,
                    name=request.name,
                    parent=request.parent or None,
                    custom=request.custom,
                    inputs=_wire_to_json(request.object),
                    protect=bool(request.protect),
                    retain_on_delete=bool(request.retainOnDelete),
                    deleted_with=request.deletedWith or None,
                    provider=request.provider or None,
                    dependencies=request_dependencies(request),
                    aliases=sorted(spec.urn or spec.spec.name for spec in request.aliases),
                    ignore_changes=sorted(request.ignoreChanges),
                )
            )
        return response

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        response = super().ReadResource(request)
        self.recorded.append(
            RecordedResource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=True,
                inputs=_wire_to_json(request.properties),
                protect=False,
                retain_on_delete=False,
                deleted_with=None,
                provider=request.provider or None,
                dependencies=sorted(request.dependencies),
                aliases=[],
                ignore_changes=[],
                read=True,
            )
        )
        return response

    def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        if "::pulumi:pulumi:Stack::" in request.urn:
            self.stack_outputs.update(_wire_to_json(request.outputs))
        return super().RegisterResourceOutputs(request)


def new_monitor() -> RecordingMonitor:
    """A recording monitor with the project's mocks, for callers that inspect it after a failure."""
    return RecordingMonitor(_Mocks())


@dataclass
class ProgramRun:
    """The outcome of one mocked run of the program.

    Tenant attribution is computed once for all resources (each resource visited once, its
    ancestors' answers reused), so grouping thousands of tenants stays linear; `visits` counts
    that work so a test can prove it without timing anything.
    """

    stack: str
    resources: list[RecordedResource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    # Values the mocks made up where the cloud would compute them (see _Mocks.made).
    mock_made: frozenset[str] = frozenset()
    # Invokes the program made: (function token, explicit provider URN or None).
    invokes: list[tuple[str, str | None]] = field(default_factory=list)
    visits: int = field(default=0, compare=False)
    _tenants: dict[str, str | None] | None = field(default=None, init=False, repr=False, compare=False)
    _indexed: int = field(default=-1, init=False, repr=False, compare=False)

    def of_type(self, type_token: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_token]

    def by_urn(self) -> dict[str, RecordedResource]:
        return {r.urn: r for r in self.resources}

    def tenants(self) -> dict[str, str | None]:
        """The tenant of every resource by URN, built on first use and whenever resources change."""
        if self._tenants is None or self._indexed != len(self.resources):
            self._tenants = _attribute_tenants(self.resources, self)
            self._indexed = len(self.resources)
        return self._tenants

    def tenant_of(self, resource: RecordedResource) -> str | None:
        """The tenant a resource belongs to: the name of its nearest Tenant component ancestor."""
        return self.tenants().get(resource.urn)


def _attribute_tenants(resources: list[RecordedResource], counter: ProgramRun) -> dict[str, str | None]:
    """Each resource's nearest Tenant ancestor, visiting every resource a constant number of times."""
    by_urn = {r.urn: r for r in resources}
    counter.visits += len(resources)
    tenants: dict[str, str | None] = {}
    for resource in resources:
        chain: list[str] = []
        current: RecordedResource | None = resource
        found: str | None = None
        while current is not None:
            if current.urn in tenants:
                found = tenants[current.urn]
                break
            counter.visits += 1
            chain.append(current.urn)
            if current.type == "tenancy:index:Tenant":
                found = current.name
                break
            current = by_urn.get(current.parent) if current.parent else None
        for urn in chain:
            tenants[urn] = found
    return tenants


def stack_config(
    stack: str, overrides: Mapping[str, str] | None = None, root: Path = PROJECT_ROOT
) -> tuple[dict[str, str], list[str]]:
    """Config as the Pulumi CLI would hand it over: `Pulumi.<stack>.yaml` plus `--set` overrides.

    Structured values become JSON text, as the engine sends them; `secure:` values become a
    placeholder, since no passphrase or KMS key is available offline.
    """
    import json

    path = root / f"Pulumi.{stack}.yaml"
    if not path.exists():
        stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in root.glob("Pulumi.*.yaml"))
        close = difflib.get_close_matches(stack, stacks, n=1)
        guess = f"did you mean {close[0]!r}? " if close else ""
        raise FileNotFoundError(
            f"no settings file for stack {stack!r}: {path}; {guess}the stacks are: {', '.join(stacks) or 'none'}"
        )
    document = load_yaml(path.read_text(encoding="utf-8")) or {}
    config: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in (document.get("config") or {}).items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            config[key] = SECRET_PLACEHOLDER
            secret_keys.append(key)
        elif isinstance(value, str):
            config[key] = value
        else:
            config[key] = json.dumps(value)
    config.update(overrides or {})
    return config, secret_keys


MAIN_PROGRAM = PROJECT_ROOT / "__main__.py"


def run_program(
    stack: str,
    config: Mapping[str, str],
    secret_keys: list[str] | None = None,
    program: Path = MAIN_PROGRAM,
    monitor: RecordingMonitor | None = None,
    lean: bool = True,
) -> ProgramRun:
    """Run the program once under mocks; exceptions from the program propagate unchanged.

    Pass a `monitor` to inspect what was registered even when the program fails (such a run is
    never taken from the test suite's cache, tools/plan/run_cache.py). `lean=False` keeps the SDK's
    stack traces (tools/plan/lean_sdk.py) and bypasses the cache, to prove lean runs record the same.
    """
    secret_keys = secret_keys or []
    cache = run_cache.active() if monitor is None and program == MAIN_PROGRAM and lean else None
    readable = readable_stacks(stack, config)
    key = run_key(stack, config, secret_keys, program, _other_stacks(readable)) if cache is not None else None
    if cache is not None and key is not None:
        hit = cache.load(key)
        if hit is not None and isinstance(hit[0], ProgramRun):
            run, records = hit[0], hit[1]
            # Leave the config as a computed run would; the mocks stay those of the last computed run
            # (set_mocks would register a root stack with nothing to drain it; nothing reads them).
            set_all_config(dict(config), secret_keys)
            run_cache.replay(records)
            return run
    monitor = monitor if monitor is not None else new_monitor()
    log = EngineLog()
    _start_runtime(stack, config, secret_keys, program, monitor, log)

    @pulumi.runtime.test
    def _run() -> None:
        runpy.run_path(str(program), run_name="__main__")
        # Under mocks the root stack closed its outputs before the program ran; register the
        # exports now so they cross the wire (secrets marked) like they do for the engine.
        root = runtime_settings.get_root_resource()
        if isinstance(root, pulumi.ComponentResource):
            root.register_outputs(runtime_stack.massage(getattr(root, "outputs", {}), []))

    with collector.run_scope(), lean_sdk.lean() if lean else nullcontext():
        _run()
    resources = sorted(monitor.recorded, key=lambda r: r.urn)
    made = frozenset(getattr(monitor.mocks, "made", ()))
    outputs = dict(sorted(monitor.stack_outputs.items()))
    invokes = sorted(set(monitor.invokes), key=lambda item: (item[0], item[1] or ""))
    run = ProgramRun(stack=stack, resources=resources, outputs=outputs, mock_made=made, invokes=invokes)
    if cache is not None and key is not None:
        if getattr(monitor.mocks, "read_stacks", set()) <= readable:
            cache.store(key, run, log.records, forbidden_strings(config, program))
        else:  # it read a stack its key does not hold: equal keys would not mean equal runs
            cache.stats.refused += 1
    return run


def _start_runtime(
    stack: str,
    config: Mapping[str, str],
    secret_keys: list[str],
    program: Path,
    monitor: RecordingMonitor,
    log: EngineLog,
) -> None:
    """Point the SDK at fresh mocks, `config` and a new root stack resource, so runs do not mix."""
    if str(program.parent) not in sys.path:
        sys.path.insert(0, str(program.parent))
    set_all_config(dict(config), secret_keys)
    runtime_settings.ROOT.set(None)
    pulumi.runtime.set_mocks(
        monitor.mocks, project=PROJECT_NAME, stack=stack, preview=True, monitor=monitor, logger=log
    )


def readable_stacks(stack: str, config: Mapping[str, str]) -> frozenset[str]:
    """The stacks whose outputs a run of `stack` reads: the platform stack of a tenants shard
    (components/platform/link.py) and this stack's own last deployment (components/vcluster/previous.py)."""
    names = {f"{DEFAULT_ORGANIZATION}/{PROJECT_NAME}/{stack}"}
    # Only a tenants shard reads it (__main__.py): the platform-role run that `run_stack` plans first
    # for a shard has the same setting but reads nothing, and must not be keyed by its own outputs.
    if config.get("tenancy:stackRole") == "tenants" and config.get("tenancy:platformStack"):
        names.add(config["tenancy:platformStack"])
    return frozenset(names)


def _other_stacks(readable: frozenset[str]) -> dict[str, Any]:
    """What the mocks would answer about the stacks a run reads: part of its key (tools/plan/run_key.py).

    Only those stacks: the tables grow with every shard planned in a test worker, and a key holding
    all of them would differ between workers for the very same run (issue 35: 53 runs computed twice)."""
    return {
        "stackReferences": {name: STACK_REFERENCE_OUTPUTS.get(name) for name in sorted(readable)},
        "previousOutputs": {name: PREVIOUS_STACK_OUTPUTS.get(name) for name in sorted(readable)},
    }


def run_stack(
    stack: str, overrides: Mapping[str, str] | None = None, root: Path = PROJECT_ROOT, lean: bool = True
) -> ProgramRun:
    """Plan a stack as the engine would run it, including what its StackReferences read.

    A tenants shard reads the platform stack's outputs; offline, those come from planning the same
    settings with the platform role first.
    """
    config, secret_keys = stack_config(stack, overrides, root=root)
    if config.get("tenancy:stackRole") == "tenants" and config.get("tenancy:platformStack"):
        platform_run = run_program(stack, {**config, "tenancy:stackRole": "platform"}, secret_keys, lean=lean)
        STACK_REFERENCE_OUTPUTS[config["tenancy:platformStack"]] = platform_run.outputs
    return run_program(stack, config, secret_keys, lean=lean)
