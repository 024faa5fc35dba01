"""The checks of the real run, in the order they run (docs/real-run.md#what-it-verifies)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from pulumi import automation as auto

from tools.realrun.compare import Difference, compare
from tools.realrun.engine import CI_DISPLAY, EngineSetup, as_ci_runs
from tools.realrun.kube import dynamic
from tools.realrun.report import Report
from tools.realrun.toolchain import ROOT

# Placeholders the offline plan writes where it cannot know a value (tools/plan/harness.py).
_PLACEHOLDERS = {"[secret]", "[unknown]"}


class Events:
    """The engine's warnings and the steps it plans or takes, from its event stream."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.steps: dict[str, str] = {}
        # The properties each step changes (the engine's `diffs`), to say why a step is there.
        self.changed: dict[str, list[str]] = {}

    def __call__(self, event: auto.events.EngineEvent) -> None:
        diagnostic = event.diagnostic_event
        if diagnostic is not None and diagnostic.severity == "warning":
            self.warnings.append(f"{diagnostic.urn or 'engine'}: {diagnostic.message.strip()}")
        pre = event.resource_pre_event
        quiet = (auto.events.OpType.SAME, auto.events.OpType.READ, auto.events.OpType.REFRESH)
        if pre is not None and pre.metadata.op not in quiet:
            self.steps[pre.metadata.urn] = pre.metadata.op.value
            self.changed[pre.metadata.urn] = sorted(
                set(pre.metadata.diffs or []) | set(pre.metadata.detailed_diff or {})
            )


def _log_to(path: Path) -> Callable[[str], None]:
    handle = path.open("a")

    def write(line: str) -> None:
        handle.write(line + "\n")
        handle.flush()

    return write


def _tail(text: str, lines: int = 40) -> str:
    return " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip())


def _summary(changes: Mapping[Any, int] | None) -> str:
    return ", ".join(f"{getattr(kind, 'value', kind)} {count}" for kind, count in sorted((changes or {}).items()))


def edit_tenant_file(tenants: Path, name: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply `change` to the tenant file `<name>.yaml` in `tenants`, as a user's edit would."""
    path = tenants / f"{name}.yaml"
    document = yaml.safe_load(path.read_text())
    change(document)
    path.write_text(yaml.safe_dump(document, sort_keys=False))


class Run:
    """One real run: the stack, its files, the cluster, and what the checks share."""

    def __init__(
        self,
        report: Report,
        stack: auto.Stack,
        setup: EngineSetup,
        api: client.ApiClient,
        config: Mapping[str, Any],
        tenants: Path,
        bin_dir: Path,
    ) -> None:
        self.report = report
        self.stack = stack
        self.setup = setup
        self.api = api
        self.config = config
        self.tenants = tenants
        self.bin_dir = bin_dir
        self._step = 0

    def log(self, name: str) -> Callable[[str], None]:
        self._step += 1
        return _log_to(self.setup.folder / f"{self._step:02d}-{name}.log")

    def up(self, name: str, **options: Any) -> tuple[auto.UpResult | None, Events, str]:
        events = Events()
        try:
            result = self.stack.up(on_event=events, on_output=self.log(name), **CI_DISPLAY, **options)
        except auto.CommandError as error:
            return None, events, str(error)
        return result, events, ""

    def preview(self, name: str, **options: Any) -> tuple[auto.PreviewResult | None, Events, str]:
        events = Events()
        try:
            with as_ci_runs(self.stack, "preview"):
                result = self.stack.preview(on_event=events, on_output=self.log(name), **CI_DISPLAY, **options)
        except auto.CommandError as error:
            return None, events, str(error)
        return result, events, ""

    def offline_plan(self, out: Path) -> Path:
        """The offline plan (mock runtime) of the same config and tenant files, written to `out`."""
        overrides = [f"--set={key}={json.dumps(value) if not isinstance(value, str) else value}"
                     for key, value in self.config.items() if key.startswith("tenancy:")]  # fmt: skip
        command = [sys.executable, "-m", "tools.cli.main", "plan", "--stack", "dev", "--out", str(out), *overrides]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if result.returncode not in (0, 3):
            raise RuntimeError(f"offline plan failed ({result.returncode}): {_tail(result.stdout + result.stderr)}")
        return out

    def edit_tenant(self, name: str, change: Callable[[dict[str, Any]], None]) -> None:
        edit_tenant_file(self.tenants, name, change)

    def live(self, manifest: Mapping[str, Any]) -> dict[str, Any] | None:
        resources = dynamic(self.api).resources.get(api_version=manifest["apiVersion"], kind=manifest["kind"])
        meta = manifest["metadata"]
        try:
            found = resources.get(name=meta["name"], namespace=meta.get("namespace"))
        except Exception as error:  # NotFoundError and friends: the object is not there
            if getattr(error, "status", None) == 404:
                return None
            raise
        result: dict[str, Any] = found.to_dict()
        return result

    def kubectl_env(self) -> dict[str, str]:
        return {**os.environ, **self.setup.env(), "PATH": f"{self.bin_dir}{os.pathsep}{os.environ['PATH']}"}


def run_all(run: Run) -> bool:
    """Every check but the lifecycle's, in order; False when the stack did not converge (then the
    checks that need a converged stack, and the lifecycle, do not run)."""
    if not converge(run):
        return False
    settles(run)
    live_equals_plan(run)
    access_and_admission(run)
    no_plain_secrets(run)
    edit_previews_as_predicted(run)
    return True


def converge(run: Run) -> bool:
    started = time.monotonic()
    result, events, error = run.up("up")
    if result is None:
        return run.report.check("up converges", False, _tail(error))
    run.report.check(
        "up converges",
        result.summary.result == "succeeded",
        f"{_summary(result.summary.resource_changes)} in {time.monotonic() - started:.0f} s",
    )
    unexplained = [w for w in events.warnings if not explained(w)]
    run.report.check("up warns of nothing unexplained", not unexplained, "; ".join(unexplained)[:3000] or "none")
    return result.summary.result == "succeeded"


# Warnings the engine or provider gives on this run that are understood, each with the reason.
EXPLAINED_WARNINGS: dict[str, str] = {
    "using pulumi-resource-kubernetes from $PATH": "the run's provider is the binary toolchain.py built, found on PATH "
    "on purpose (docs/real-run.md#skew)",
    "resource plugin kubernetes is expected to have version >=4.34.2, but has 4.25.0": "the module proxy serves the "
    "provider at v4.25.0 only; the SDK pins 4.34.2 (docs/real-run.md#skew)",
    "Has no .status.conditions": "the provider's await of a `pulumi.com/waitFor` object reports this until the "
    "operator (here the stand-in, docs/real-run.md#controllers) has written its first condition",
}


def explained(warning: str) -> bool:
    return any(pattern in warning for pattern in EXPLAINED_WARNINGS)


def settles(run: Run) -> None:
    started = time.monotonic()
    result, events, error = run.up("up-again", expect_no_changes=True)
    run.report.check(
        "second up changes nothing",
        result is not None,
        f"--expect-no-changes in {time.monotonic() - started:.0f} s"
        if result
        else _steps(events) + " | " + _tail(error, 12),
    )
    time.sleep(10)  # the controllers (service accounts, quota usage, endpoints) settle
    started = time.monotonic()
    preview, events, error = run.preview("preview-refresh", refresh=True, expect_no_changes=True)
    run.report.check(
        "refreshed preview changes nothing",
        preview is not None,
        f"--refresh --expect-no-changes in {time.monotonic() - started:.0f} s"
        if preview
        else _steps(events) + " | " + _tail(error, 12),
    )


def _steps(events: Events) -> str:
    steps = [f"{op} {urn.split('::')[-1]} {events.changed.get(urn, [])}" for urn, op in events.steps.items()]
    return (" | steps: " + ", ".join(steps))[:3000]


def _skip_paths(record: Mapping[str, Any]) -> set[str]:
    return {"." + path.removeprefix("inputs.") for path in record.get("mockMade", [])}


def live_equals_plan(run: Run) -> None:
    """Every Kubernetes object of the offline plan is live, with every planned field as written."""
    plan = run.offline_plan(run.setup.folder / "plan")
    records = json.loads((plan / "resources.json").read_text())
    objects = [r for r in records if r["type"].startswith("kubernetes:") and "apiVersion" in r["inputs"]
               and not r["type"].startswith("kubernetes:helm.sh/")]  # fmt: skip
    found: list[Difference] = []
    for record in objects:
        manifest = {k: v for k, v in record["inputs"].items() if not k.startswith("__")}
        skip = _skip_paths(record)
        found += [
            d
            for d in compare(manifest, run.live(manifest))
            if d.path not in skip
            and not (isinstance(d.planned, str) and d.planned in _PLACEHOLDERS)
            and not any(d.path.startswith(s) for s in skip)
        ]
    run.report.check(
        "live objects equal the offline plan",
        not found,
        f"{len(objects)} objects compared" + ("; " + "; ".join(map(str, found[:30])) if found else ""),
    )


def access_and_admission(run: Run) -> None:
    """The e2e cases (scripts/e2e/cases, judged offline by the real CEL engine and the RBAC model)
    replayed against the live API server, impersonating each identity (scripts/e2e/*.sh)."""
    for script, name in (("can-i.sh", "access (kubectl auth can-i)"), ("admission.sh", "admission (dry runs)")):
        result = subprocess.run(
            ["bash", str(ROOT / "scripts/e2e" / script)],
            cwd=ROOT,
            env=run.kubectl_env(),
            capture_output=True,
            text=True,
        )
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        failing = [line for line in lines if line.startswith("FAIL")]
        run.report.check(
            f"e2e {name}",
            result.returncode == 0,
            f"{len(lines) - len(failing)} of {len(lines)} as judged offline"
            + ("; " + "; ".join(failing)[:3000] if failing else "")
            + ("" if result.returncode == 0 else " " + _tail(result.stderr, 5)),
        )


def _secret_keys(state: Mapping[str, Any]) -> dict[tuple[str, str], list[str]]:
    """Per Secret (namespace, name), the data keys that hold a generated value: the keys written
    once (`ignore_changes` on `data["<key>"]`, components/clouds/local/passwords.py)."""
    found: dict[tuple[str, str], list[str]] = {}
    for resource in state.get("resources", []):
        if resource.get("type") != "kubernetes:core/v1:Secret":
            continue
        keys = [m[1] for path in resource.get("ignoreChanges") or [] if (m := re.match(r'^data\["(.+)"\]$', path))]
        if keys:
            meta = (resource.get("inputs") or {}).get("metadata") or {}
            found[(meta.get("namespace", ""), meta.get("name", ""))] = keys
    return found


def no_plain_secrets(run: Run) -> None:
    """No value the state holds as a secret (generated passwords, generated tenant secrets) appears
    in plaintext in any state file: read each such value from the live Secret, search for it."""
    import base64

    state_files = list(run.setup.state.rglob("*.json"))
    text = "\n".join(path.read_text() for path in state_files)
    keys = _secret_keys(run.stack.export_stack().deployment or {})
    secrets_api = dynamic(run.api).resources.get(api_version="v1", kind="Secret")
    values: dict[str, str] = {}
    for (namespace, name), secret_keys in keys.items():
        live = secrets_api.get(name=name, namespace=namespace).to_dict().get("data") or {}
        for key, encoded in live.items():
            if key in secret_keys:
                values[f"{namespace}/{name}:{key}"] = base64.b64decode(encoded).decode(errors="replace")
    leaked = sorted(where for where, value in values.items() if value and value in text)
    run.report.check(
        "no secret value in plaintext in the state",
        bool(values) and not leaked,
        f"{len(values)} secret values of {len(keys)} Secrets searched in {len(state_files)} state files; "
        f"in plaintext: {leaked or 'none'}",
    )


def _set_pods(count: int) -> Callable[[dict[str, Any]], None]:
    def change(tenant: dict[str, Any]) -> None:
        tenant["quota"]["custom"]["objects"]["pods"] = count

    return change


def edit_previews_as_predicted(run: Run) -> None:
    """A tenant edit: the real preview's steps are the ones the offline plans' difference predicts."""
    before = json.loads((run.setup.folder / "plan" / "resources.json").read_text())
    original = (run.tenants / "status-page.yaml").read_text()
    run.edit_tenant("status-page", _set_pods(12))
    try:
        after = json.loads((run.offline_plan(run.setup.folder / "plan-edited") / "resources.json").read_text())
        predicted = _predicted_steps(before, after)
        _, events, error = run.preview("preview-edit")
        real = {urn: op for urn, op in events.steps.items() if not urn.endswith("pulumi:pulumi:Stack::tenancy-dev")}
        same = set(predicted) == set(real)
        shown_real = sorted(f"{op} {_short(urn)}" for urn, op in real.items())
        detail = (
            f"{len(real)} steps, as predicted: {shown_real}"
            if same
            else (f"predicted {sorted(f'{op} {_short(urn)}' for urn, op in predicted.items())}, real {shown_real}")
        )
        run.report.check("an edit's real preview has the predicted steps", same and not error, detail + _tail(error))
    finally:
        (run.tenants / "status-page.yaml").write_text(original)


def _short(urn: str) -> str:
    return urn.split("::")[-1]


def _predicted_steps(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, str]:
    old = {r["urn"]: r for r in before}
    new = {r["urn"]: r for r in after}
    steps = {urn: "create" for urn in new.keys() - old.keys()}
    steps |= {urn: "delete" for urn in old.keys() - new.keys()}
    steps |= {urn: "update" for urn in new.keys() & old.keys() if new[urn]["inputs"] != old[urn]["inputs"]}
    return steps
