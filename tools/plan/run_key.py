"""The content key of one mocked run: everything the program reads, so equal keys mean equal runs.

The test suite plans the same inputs many times (a fixture's tenant files written again in another
test's temporary directory, a tool planning the stack its test just planned). `tools.plan.run_cache`
reuses such runs; a wrong hit would make a test judge a plan it did not ask for, so the key is
built from what the program actually reads, not from what a caller says it changed:

- the stack name, every config value and which keys are secret;
- the tenant directory's content (`tenancy:tenantsDir`, resolved as `__main__.py` resolves it), by
  relative file name and bytes, recursively, instead of its path, so the same files in two
  temporary directories share a run (`forbidden_strings` keeps runs that mention the path out);
- every `Pulumi.*.yaml` beside the program (`project_stacks`, `committed_settings`) and in the
  working directory (`secrets_provider` reads `Pulumi.<stack>.yaml` relative to it);
- what the mocks answer for the stacks the run reads (`tools.plan.harness.readable_stacks`: a
  shard's platform stack, the stack's own last deployment), not the whole tables, which grow with
  every shard a test worker plans; a run that reads any other stack is not kept;
- today's date (`components/model/checks/engine_support.py` compares support windows with it);
- the environment variables of Pulumi and of this project (the program reads none today; the SDK
  reads some `PULUMI_*`).
Monkeypatched code is outside any key: the suite turns the cache off for such tests (tests/conftest.py).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

TENANTS_DIR_KEY = "tenancy:tenantsDir"
# components/model/settings/stack.py: `tenants_dir` when the config does not set it.
DEFAULT_TENANTS_DIR = "tenants"
# Bump when the key's recipe changes, so no two recipes ever share a key.
_RECIPE = "tenancy-run-key-2"


def tree_digest(directory: Path) -> str:
    """sha256 over every file below `directory` (relative name and bytes), or a marker when it is absent."""
    digest = hashlib.sha256()
    if not directory.is_dir():
        digest.update(b"absent" if not directory.exists() else b"not-a-directory")
        return digest.hexdigest()
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory).as_posix().encode()
        if path.is_file():
            data = path.read_bytes()
            digest.update(b"F%d:%s%d:" % (len(relative), relative, len(data)))
            digest.update(data)
        else:
            digest.update(b"D%d:%s" % (len(relative), relative))
    return digest.hexdigest()


def _stack_files(directory: Path) -> list[tuple[str, str]]:
    return [
        (path.name, hashlib.sha256(path.read_bytes()).hexdigest()) for path in sorted(directory.glob("Pulumi.*.yaml"))
    ]


def tenants_dir(config: Mapping[str, str], program: Path) -> Path:
    """The tenant directory the program will read: `__main__.py` joins the setting to its own folder."""
    return program.parent / config.get(TENANTS_DIR_KEY, DEFAULT_TENANTS_DIR)


def run_key(
    stack: str,
    config: Mapping[str, str],
    secret_keys: Sequence[str],
    program: Path,
    other_stacks: Mapping[str, Mapping[str, Any]],
) -> str:
    """The key of a run of `program` for `stack`; `other_stacks` names what the mocks answer about
    other stacks (harness `STACK_REFERENCE_OUTPUTS` and `PREVIOUS_STACK_OUTPUTS`)."""
    cwd = Path.cwd()
    recipe = {
        "recipe": _RECIPE,
        "stack": stack,
        "config": sorted((key, value) for key, value in config.items() if key != TENANTS_DIR_KEY),
        "tenants": tree_digest(tenants_dir(config, program)),
        "secretKeys": sorted(secret_keys),
        "program": [str(program), hashlib.sha256(program.read_bytes()).hexdigest()],
        "projectStacks": _stack_files(program.parent),
        "cwd": [str(cwd), _stack_files(cwd)],
        "otherStacks": other_stacks,
        "today": date.today().isoformat(),
        "environment": sorted(
            (name, value) for name, value in os.environ.items() if name.startswith(("PULUMI_", "TENANCY_"))
        ),
    }
    text = json.dumps(recipe, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def forbidden_strings(config: Mapping[str, str], program: Path) -> list[str]:
    """Strings that must not appear in a reusable run: the key holds the tenant directory's content,
    not its path, so a run that mentions the path would be wrong for the same files elsewhere."""
    given = config.get(TENANTS_DIR_KEY)
    if given is None:
        return []
    return sorted({given, str(tenants_dir(config, program)), str(tenants_dir(config, program).resolve())})
