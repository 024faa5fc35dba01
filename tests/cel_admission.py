"""An offline admission chain for the policy bundle, with a real CEL engine (cel-cpp).

It applies ValidatingAdmissionPolicy and binding objects to an admission request the way the API
server does (k8s.io/apiserver/pkg/admission/plugin/policy/validating):

1. match: the policy's matchConstraints (resourceRules with operations, resources and
   `resource/subresource` forms, excludeResourceRules, namespaceSelector, objectSelector), then the
   binding's matchResources when it has them. The namespaceSelector of a Namespace CREATE/UPDATE
   is matched against the new Namespace's own labels (DELETE: the stored one, i.e. the old
   object); cluster-scoped objects ignore it (predicates/namespace/matcher.go). The objectSelector
   matches when the new or the old object matches (predicates/object/matcher.go).
2. params: paramKind + the binding's paramRef (by name or selector), parameterNotFoundAction.
3. matchConditions: all must be true to apply the policy; an error follows failurePolicy.
4. variables in order, each seeing the ones before; like the API server's lazy variables, one
   that fails only matters when an expression reads it (then that expression errors).
5. validations: false -> a violation with messageExpression (when it yields a non-empty string),
   else message, else the default text; an error follows failurePolicy.
6. the binding's validationActions: Deny rejects, Warn becomes a warning, Audit an audit entry.

MutatingAdmissionPolicy JSON patches are evaluated the same way (match, conditions, variables)
and applied to the object, so a test can run the mutated pod through the validating policies.
`JSONPatch{...}` is a Kubernetes type: the evaluator declares it as a protobuf message so cel-cpp
builds the same structure the API server does.

Mutations run first, then validations, like the API server's admission phases.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_strings
from google.protobuf import descriptor_pb2, descriptor_pool, json_format

from tests.api_defaults import default_pod

_VARIABLES = ["object", "oldObject", "request", "params", "namespaceObject", "variables", "authorizer"]


def _json_patch_pool() -> Any:
    """A descriptor pool declaring `JSONPatch{op, path, value, from}` as Kubernetes does."""
    pool = descriptor_pool.DescriptorPool()
    struct_file = descriptor_pb2.FileDescriptorProto()
    from google.protobuf import struct_pb2

    struct_pb2.DESCRIPTOR.CopyToProto(struct_file)
    pool.Add(struct_file)
    proto = descriptor_pb2.FileDescriptorProto(
        name="k8s_jsonpatch.proto", syntax="proto3", dependency=["google/protobuf/struct.proto"]
    )
    message = proto.message_type.add(name="JSONPatch")
    string = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
    optional = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    for number, name in enumerate(["op", "path", "from"], start=1):
        message.field.add(name=name, number=number, type=string, label=optional)
    message.field.add(
        name="value",
        number=4,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        type_name=".google.protobuf.Value",
        label=optional,
    )
    pool.Add(proto)
    return pool


class CelEngine:
    """Compiles once per expression text; the environment mirrors the admission variables."""

    def __init__(self) -> None:
        variables = {name: cel.Type.DYN for name in _VARIABLES}
        extensions = [ext_strings.ExtStrings()]
        self._env = cel.NewEnv(variables=variables, extensions=extensions)
        self._mutation_env = cel.NewEnv(descriptor_pool=_json_patch_pool(), variables=variables, extensions=extensions)
        self._cache: dict[tuple[bool, str], Any] = {}

    def compile(self, expression: str, mutation: bool = False) -> Any:
        key = (mutation, expression)
        if key not in self._cache:
            env = self._mutation_env if mutation else self._env
            self._cache[key] = env.compile(expression)
        return self._cache[key]

    def evaluate(self, expression: str, data: dict[str, Any], mutation: bool = False) -> tuple[bool, Any]:
        """(ok, value); ok is False when evaluation failed, value is then the error text."""
        result = self.compile(expression, mutation).eval(data=data)
        if result.type() == cel.Type.ERROR:
            return False, str(result.value())
        return True, _plain(result.value())


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v.value() if hasattr(v, "value") else v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v.value() if hasattr(v, "value") else v) for k, v in value.items()}
    if hasattr(value, "DESCRIPTOR"):
        return json_format.MessageToDict(value, preserving_proto_field_name=True)
    return value


@dataclass
class Request:
    """One admission request. `resource` is `group/version/resource` (`/v1/pods` for the core group)."""

    operation: str
    resource: str
    kind: str
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    namespace_object: dict[str, Any] | None = None
    subresource: str = ""
    username: str = "someone"
    groups: list[str] = field(default_factory=lambda: ["system:authenticated"])
    # `?dryRun=All` (a server-side dry run): AdmissionRequest.dryRun, the CEL `request.dryRun`.
    dry_run: bool = False

    @property
    def gvr(self) -> tuple[str, str, str]:
        group, version, resource = self.resource.split("/")
        return group, version, resource

    def name_and_namespace(self) -> tuple[str, str]:
        source = self.object if self.object is not None else self.old_object or {}
        metadata = source.get("metadata", {})
        return metadata.get("name", ""), metadata.get("namespace", "")

    def as_cel(self) -> dict[str, Any]:
        group, version, resource = self.gvr
        name, namespace = self.name_and_namespace()
        request = {
            "operation": self.operation,
            "kind": {"group": group, "version": version, "kind": self.kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "subResource": self.subresource,
            "name": name,
            "namespace": namespace,
            "userInfo": {"username": self.username, "groups": list(self.groups)},
            "dryRun": self.dry_run,
        }
        # The API server hands CEL the AdmissionRequest converted to a map, and its `omitempty` fields
        # are absent when empty (k8s.io/api admission/v1 AdmissionRequest: `subResource`, `name`,
        # `namespace`; k8s.io/apiserver pkg/admission/plugin/cel CreateAdmissionRequest), so
        # `request.subResource` on a main-resource request is "no such key" (found by the real run).
        return {key: value for key, value in request.items() if value != "" or key not in OMITTED_WHEN_EMPTY}


OMITTED_WHEN_EMPTY = ("subResource", "name", "namespace")


@dataclass
class Decision:
    """What the chain decided: denials (with policy names), warnings, audit entries, final object."""

    denials: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    audit: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    object: dict[str, Any] | None = None

    @property
    def allowed(self) -> bool:
        return not self.denials


def _selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator == "In" and (not present or labels[key] not in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
    return True


def _labels(obj: dict[str, Any] | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def _resource_matches(rule: dict[str, Any], request: Request) -> bool:
    group, version, resource = request.gvr
    if not (set(rule.get("apiGroups", [])) & {group, "*"}):
        return False
    if not (set(rule.get("apiVersions", [])) & {version, "*"}):
        return False
    if not (set(rule.get("operations", [])) & {request.operation, "*"}):
        return False
    wanted = f"{resource}/{request.subresource}" if request.subresource else resource
    for candidate in rule.get("resources", []):
        if candidate in (wanted, "*/*") or (candidate == "*" and not request.subresource):
            return True
        if candidate == f"{resource}/*" and request.subresource:
            return True
        if candidate == f"*/{request.subresource}" and request.subresource:
            return True
    return False


def _matches(match: dict[str, Any] | None, request: Request) -> bool:
    """matchConstraints / matchResources semantics (an absent block matches everything)."""
    if match is None:
        return True
    rules = match.get("resourceRules")
    if rules is not None and not any(_resource_matches(rule, request) for rule in rules):
        return False
    if any(_resource_matches(rule, request) for rule in match.get("excludeResourceRules") or []):
        return False
    subject = request.object if request.object is not None else request.old_object
    if request.kind == "Namespace":
        namespace_labels = _labels(subject)
    elif request.namespace_object is not None:
        namespace_labels = _labels(request.namespace_object)
    else:
        namespace_labels = None  # cluster-scoped: the namespaceSelector does not apply
    if namespace_labels is not None and not _selector_matches(match.get("namespaceSelector"), namespace_labels):
        return False
    return _object_selector_matches(match.get("objectSelector"), request)


def _object_selector_matches(selector: dict[str, Any] | None, request: Request) -> bool:
    """objectSelector matches when the new *or* the old object matches; an absent object never does.

    k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object/matcher.go (MatchObjectSelector):
    an empty selector matches everything, else `matchObject(attr.GetObject()) ||
    matchObject(attr.GetOldObject())`, where a nil object does not match.
    """
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return True
    candidates = [o for o in (request.object, request.old_object) if o is not None]
    return any(_selector_matches(selector, _labels(o)) for o in candidates)


class AdmissionChain:
    """Admission policies and bindings from rendered manifests, evaluated offline."""

    def __init__(self, manifests: list[dict[str, Any]], params: list[dict[str, Any]] | None = None) -> None:
        self.engine = CelEngine()
        self.params = params or []

        def of(kind: str) -> list[dict[str, Any]]:
            return [m for m in manifests if m.get("kind") == kind]

        self.validating = {p["metadata"]["name"]: p for p in of("ValidatingAdmissionPolicy")}
        self.validating_bindings = of("ValidatingAdmissionPolicyBinding")
        self.mutating = {p["metadata"]["name"]: p for p in of("MutatingAdmissionPolicy")}
        self.mutating_bindings = of("MutatingAdmissionPolicyBinding")

    # -- shared steps ------------------------------------------------------------------------

    def _params(self, policy: dict[str, Any], binding: dict[str, Any]) -> tuple[bool, Any]:
        """(found, params); without paramKind there are no params and that is fine."""
        kind = policy["spec"].get("paramKind")
        if kind is None:
            return True, None
        ref = binding["spec"].get("paramRef") or {}
        candidates = [
            p
            for p in self.params
            if p.get("apiVersion") == kind.get("apiVersion") and p.get("kind") == kind.get("kind")
        ]
        if "name" in ref:
            candidates = [p for p in candidates if p["metadata"]["name"] == ref["name"]]
        if "namespace" in ref:
            candidates = [p for p in candidates if p["metadata"].get("namespace") == ref["namespace"]]
        if "selector" in ref:
            candidates = [p for p in candidates if _selector_matches(ref["selector"], _labels(p))]
        return (True, candidates[0]) if candidates else (False, None)

    def _context(
        self, policy: dict[str, Any], request: Request, obj: dict[str, Any] | None, params: Any, mutation: bool
    ) -> tuple[dict[str, Any] | None, str | None]:
        """The CEL activation after matchConditions and variables; (None, None) when a condition is false."""
        data: dict[str, Any] = {
            "object": obj,
            "oldObject": request.old_object,
            "request": request.as_cel(),
            "params": params,
            "namespaceObject": request.namespace_object,
            "variables": {},
            "authorizer": None,
        }
        for condition in policy["spec"].get("matchConditions") or []:
            ok, value = self.engine.evaluate(condition["expression"], data, mutation)
            if not ok:
                return None, f"matchCondition {condition['name']} failed: {value}"
            if value is not True:
                return None, None
        for variable in policy["spec"].get("variables") or []:
            ok, value = self.engine.evaluate(variable["expression"], data, mutation)
            if ok:
                data["variables"] = {**data["variables"], variable["name"]: value}
        return data, None

    # -- mutation ----------------------------------------------------------------------------

    def mutate(self, request: Request, decision: Decision) -> dict[str, Any] | None:
        obj = copy.deepcopy(request.object)
        for binding in self.mutating_bindings:
            policy = self.mutating.get(binding["spec"]["policyName"])
            if policy is None or obj is None:
                continue
            if not _matches(policy["spec"].get("matchConstraints"), request):
                continue
            if not _matches(binding["spec"].get("matchResources"), request):
                continue
            _, params = self._params(policy, binding)
            data, error = self._context(policy, request, obj, params, mutation=True)
            if error is not None and policy["spec"].get("failurePolicy", "Fail") == "Fail":
                decision.denials.append(f"{policy['metadata']['name']}: {error}")
                continue
            if data is None:
                continue
            for mutation in policy["spec"]["mutations"]:
                if mutation["patchType"] != "JSONPatch":
                    raise NotImplementedError("only JSONPatch mutations are evaluated offline")
                ok, patches = self.engine.evaluate(mutation["jsonPatch"]["expression"], data, mutation=True)
                if not ok:
                    decision.denials.append(f"{policy['metadata']['name']}: {patches}")
                    continue
                obj = apply_json_patch(obj, patches)
            decision.applied.append(policy["metadata"]["name"])
        return obj

    # -- validation --------------------------------------------------------------------------

    def admit(self, request: Request) -> Decision:
        """Run mutating then validating policies on the request, as the API server orders them."""
        decision = Decision()
        if request.kind == "Pod":
            # The server defaults on decode, before admission; stored old objects were defaulted too.
            request = dataclasses.replace(
                request,
                object=default_pod(request.object) if request.object is not None else None,
                old_object=default_pod(request.old_object) if request.old_object is not None else None,
            )
        obj = self.mutate(request, decision)
        decision.object = obj
        for binding in self.validating_bindings:
            policy = self.validating.get(binding["spec"]["policyName"])
            if policy is None:
                continue  # a binding to a missing policy does nothing
            spec = policy["spec"]
            if not _matches(spec.get("matchConstraints"), request):
                continue
            if not _matches(binding["spec"].get("matchResources"), request):
                continue
            name = policy["metadata"]["name"]
            actions = binding["spec"]["validationActions"]
            fail = spec.get("failurePolicy", "Fail") == "Fail"
            found, params = self._params(policy, binding)
            if not found:
                action = (binding["spec"].get("paramRef") or {}).get("parameterNotFoundAction", "Deny")
                if action == "Deny":
                    self._record(decision, actions, name, "no params found for policy binding")
                continue
            data, error = self._context(policy, request, obj, params, mutation=False)
            if error is not None:
                if fail:
                    self._record(decision, actions, name, error)
                continue
            if data is None:
                continue
            decision.applied.append(name)
            for validation in spec.get("validations") or []:
                ok, value = self.engine.evaluate(validation["expression"], data)
                if not ok:
                    if fail:
                        self._record(
                            decision, actions, name, f"expression '{validation['expression']}' failed: {value}"
                        )
                    continue
                if value is True:
                    continue
                self._record(decision, actions, name, self._message(validation, data))
        return decision

    def _message(self, validation: dict[str, Any], data: dict[str, Any]) -> str:
        if "messageExpression" in validation:
            ok, value = self.engine.evaluate(validation["messageExpression"], data)
            if ok and isinstance(value, str) and value.strip():
                return value
        if validation.get("message"):
            return str(validation["message"])
        return f"failed expression: {validation['expression']}"

    @staticmethod
    def _record(decision: Decision, actions: list[str], policy: str, message: str) -> None:
        text = f"{policy}: {message}"
        if "Deny" in actions:
            decision.denials.append(text)
        if "Warn" in actions:
            decision.warnings.append(text)
        if "Audit" in actions:
            decision.audit.append(text)


def _pointer(path: str) -> list[str]:
    return [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]]


def apply_json_patch(obj: dict[str, Any], patches: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 `add`, `replace` and `remove`, enough for the bundle's mutations."""
    result: dict[str, Any] = json.loads(json.dumps(obj))
    for patch in patches:
        *parents, last = _pointer(patch["path"])
        target: Any = result
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        op = patch["op"]
        if op in ("add", "replace"):
            if isinstance(target, list):
                if last == "-":
                    target.append(patch.get("value"))
                else:
                    target.insert(int(last), patch.get("value"))
            else:
                target[last] = patch.get("value")
        elif op == "remove":
            del target[int(last) if isinstance(target, list) else last]
        else:
            raise NotImplementedError(f"JSON patch op {op!r}")
    return result
