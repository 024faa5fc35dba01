"""One benchmark measurement, run in a fresh child process so its time and peak memory are its own.

Four kinds, each timed from just before the program starts (imports done) to the end of its work:

- `plan`: what users run, `tools.plan.run` end to end: the real `__main__.py` under mocks, grouping by
  tenant with the summary, and writing every manifest and resources.json;
- `typed-floor`: the same typed resource classes (the ones the plan run instantiated), with the same
  inputs and options (provider, protect, retainOnDelete, ignoreChanges), registered in a flat loop
  at module depth: no components, parents, models or logic. What any program that creates these
  objects pays;
- `inputs-floor`: bare `CustomResource`s carrying the same inputs (no typed classes, no options);
- `floor`: bare `CustomResource`s with a one-field input.

The `plan` run leaves the inputs and the typed-floor recipe in the work directory for the floors.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import yaml

from tools.plan.harness import RecordedResource, RecordingMonitor, new_monitor, run_program, stack_config
from tools.plan.run import summary, write_plan
from tools.scale.bench_tenants import minimal_tenant, typical_tenant

INPUTS_FILE = "inputs.json"
TYPED_FILE = "typed.json"

FLOOR_PROGRAM = '''
"""The SDK floor: register COUNT bare resources, no models, no components, no logic."""
import os
import pulumi

for index in range(int(os.environ["TENANCY_BENCH_COUNT"])):
    pulumi.CustomResource("tenancy:bench:Bare", f"bare-{index}", {"index": index})
'''

INPUTS_FLOOR_PROGRAM = '''
"""The inputs floor: register bare resources with the program's recorded inputs, no logic."""
import json
import os
import pulumi

with open(os.environ["TENANCY_BENCH_INPUTS"], encoding="utf-8") as handle:
    recorded = json.load(handle)
for index, inputs in enumerate(recorded):
    pulumi.CustomResource("tenancy:bench:Bare", f"bare-{index}", inputs)
'''

TYPED_FLOOR_PROGRAM = '''
"""The typed floor: the program's own resource classes, inputs and options, in one flat loop."""
import json
import os
from tools.scale.bench_runs import typed_floor

with open(os.environ["TENANCY_BENCH_TYPED"], encoding="utf-8") as handle:
    typed_floor(json.load(handle))
'''


@dataclass
class Measurement:
    """One run in a child process."""

    resources: int
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    start_rss_mb: float
    phases: dict[str, float]
    load: list[float]


def _rss_mb() -> float:
    """Resident memory now (Linux /proc), to subtract the interpreter and imports from the peak."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


_ORIGINAL_INIT = pulumi.CustomResource.__init__


def record_classes() -> dict[str, str]:
    """Make every CustomResource construction record its Python class by type token."""
    classes: dict[str, str] = {}
    original = _ORIGINAL_INIT

    def recording(self: pulumi.CustomResource, t: str, *args: Any, **kwargs: Any) -> None:
        classes.setdefault(t, _class_path(type(self)))
        original(self, t, *args, **kwargs)

    pulumi.CustomResource.__init__ = recording  # type: ignore[method-assign]
    return classes


def stop_recording_classes() -> None:
    pulumi.CustomResource.__init__ = _ORIGINAL_INIT  # type: ignore[method-assign]


def typed_recipe(recorded: list[RecordedResource], classes: dict[str, str]) -> list[dict[str, Any]]:
    """Per managed resource, in registration order: its class, keyword inputs and options."""
    index_of = {r.urn: i for i, r in enumerate(recorded)}
    recipe: list[dict[str, Any]] = []
    for position, entry in enumerate(recorded):
        if entry.read or not entry.custom or entry.type not in classes:
            continue
        cls = _load(classes[entry.type])
        init = getattr(cls, "_internal_init", cls.__init__)
        params = set(inspect.signature(init).parameters)
        kwargs = {_snake(k): _provider_value(entry.type, v) for k, v in entry.inputs.items() if _snake(k) in params}
        provider = (entry.provider or "").rsplit("::", 1)[0]
        recipe.append(
            {
                "at": position,
                "class": classes[entry.type],
                "name": f"{entry.name}-{position}",
                "kwargs": kwargs,
                "provider": index_of.get(provider),
                "protect": entry.protect,
                "retainOnDelete": entry.retain_on_delete,
                "ignoreChanges": entry.ignore_changes,
            }
        )
    return recipe


def _provider_value(type_token: str, value: Any) -> Any:
    """Providers' non-string inputs cross the wire as JSON text: give the class the value back."""
    if not type_token.startswith("pulumi:providers:") or not isinstance(value, str):
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return value if isinstance(decoded, str) else decoded


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    value: Any = importlib.import_module(module)
    for part in name.split("."):
        value = getattr(value, part)
    return value


def typed_floor(recipe: list[dict[str, Any]]) -> None:
    """Register the recipe flat: the same classes, inputs and options, no parents or components."""
    created: dict[int, Any] = {}
    for entry in recipe:
        provider = created.get(entry["provider"]) if entry["provider"] is not None else None
        opts = pulumi.ResourceOptions(
            provider=provider,
            protect=entry["protect"],
            retain_on_delete=entry["retainOnDelete"],
            ignore_changes=entry["ignoreChanges"] or None,
        )
        created[entry["at"]] = _load(entry["class"])(entry["name"], opts=opts, **entry["kwargs"])


def _write_tenants(count: int, kind: str, workdir: Path) -> Path:
    """The generated tenant files (before the clock starts: users already have theirs)."""
    tenants_dir = workdir / "tenants"
    tenants_dir.mkdir()
    make = typical_tenant if kind == "typical" else minimal_tenant
    for index in range(count):
        document = make(index)
        (tenants_dir / f"{document['name']}.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    return tenants_dir


def _plan(tenants_dir: Path, stack: str, workdir: Path, monitor: RecordingMonitor) -> tuple[int, dict[str, float]]:
    """tools.plan.run end to end on the tenant files; returns resources and seconds per phase."""
    config, secret_keys = stack_config(stack, {"tenancy:tenantsDir": str(tenants_dir)})
    marks = [time.perf_counter()]
    run = run_program(stack, config, secret_keys, monitor=monitor)
    marks.append(time.perf_counter())
    summary(run)
    marks.append(time.perf_counter())
    write_plan(run, workdir / "plan")
    marks.append(time.perf_counter())
    names = ("program", "grouping", "writing")
    return len(run.resources), {name: round(marks[i + 1] - marks[i], 3) for i, name in enumerate(names)}


def _floor(kind: str, count: int, stack: str, workdir: Path, monitor: RecordingMonitor) -> int:
    programs = {"floor": FLOOR_PROGRAM, "inputs-floor": INPUTS_FLOOR_PROGRAM, "typed-floor": TYPED_FLOOR_PROGRAM}
    program = workdir / f"{kind.replace('-', '_')}.py"
    program.write_text(programs[kind], encoding="utf-8")
    os.environ.update(
        TENANCY_BENCH_COUNT=str(count),
        TENANCY_BENCH_INPUTS=str(workdir / INPUTS_FILE),
        TENANCY_BENCH_TYPED=str(workdir / TYPED_FILE),
    )
    return len(run_program(stack, {}, [], program=program, monitor=monitor).resources)


def measure(kind: str, count: int, stack: str, workdir: Path) -> Measurement:
    """Run one measurement in this process (the caller is a fresh child)."""
    monitor = new_monitor()
    planning = kind in ("typical", "minimal")
    tenants_dir = _write_tenants(count, kind, workdir) if planning else None
    classes = record_classes() if planning else {}
    start_rss = _rss_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    if tenants_dir is not None:
        resources, phases = _plan(tenants_dir, stack, workdir, monitor)
    else:
        resources, phases = _floor(kind, count, stack, workdir, monitor), {}
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if planning:  # what the floors register, written after the clock stopped
        recorded = monitor.recorded
        (workdir / INPUTS_FILE).write_text(json.dumps([r.inputs for r in recorded]), encoding="utf-8")
        (workdir / TYPED_FILE).write_text(json.dumps(typed_recipe(recorded, classes)), encoding="utf-8")
    return Measurement(resources, seconds, cpu_seconds, peak_mb, start_rss, phases, list(os.getloadavg()))
