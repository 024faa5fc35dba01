"""The docs' `--set` examples work: each one given to `tenancy plan` in a page is parsed as the plan
parses it and checked, with the committed tenant files, against every stack (settings and the
catalog: what makes a plan exit 2), so an example never exits 2 on every stack again (issue 45)."""

from __future__ import annotations

import re
import shlex

import pytest

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tests.support import EXAMPLE_TENANTS
from tools.plan.all_stacks import all_stacks
from tools.plan.dirs import attribute_overrides
from tools.plan.harness import PROJECT_ROOT, stack_config
from tools.plan.run import _parse_set

PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]
# `--set KEY=VALUE` in a code span or a command line, the value quoted or not.
SET_EXAMPLE = re.compile(r"--set (?:'[^']*'|\"[^\"]*\"|[^\s`]+)")


def set_examples() -> list[tuple[str, str]]:
    """(page, `--set ...`) for each concrete example (placeholders such as NS:KEY=VALUE left out)."""
    found = []
    for page in PAGES:
        for example in SET_EXAMPLE.findall(page.read_text(encoding="utf-8")):
            (_, value) = shlex.split(example)
            if value.startswith("tenancy:") and not re.search(r"tenancy:(key|KEY)\b|=VALUE|=value", value):
                found.append((str(page.relative_to(PROJECT_ROOT)), value))
    return found


def test_the_docs_have_set_examples_to_check() -> None:
    assert ("docs/getting-started.md", "tenancy:kubernetesVersion=1.35") in set_examples()


@pytest.mark.parametrize(("page", "value"), set_examples())
def test_a_set_example_plans_on_every_stack(page: str, value: str) -> None:
    overrides = _parse_set([value])
    for stack in all_stacks():
        config, _ = stack_config(stack, overrides)
        try:
            settings = parse_settings(config, f"Pulumi.{stack}.yaml")
            load_catalog(EXAMPLE_TENANTS, settings, stack, cloud=cloud_for(settings), root=PROJECT_ROOT)
        except ConfigurationError as error:  # the message the user would see, attributed as the plan does
            pytest.fail(f"{page}: --set {value} fails on stack {stack}: {attribute_overrides(error, stack, overrides)}")
