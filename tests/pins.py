"""Read the exact pins of a pip requirements file, hashed (exported from uv.lock) or not.

Hashed files spread one requirement over several lines (`name==1.0 \\` then `--hash=...` lines);
packaging's parser reads the requirement itself, so every test compares names and versions the
way pip does (names normalised), whatever the layout.
"""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def pins(path: Path) -> dict[str, str]:
    """`{normalised name: version}` of every `name==version` requirement in the file."""
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    result: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        requirement = Requirement(line.split(" --hash", 1)[0].strip())
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"{path.name}: {line} is not an exact pin"
        result[canonicalize_name(requirement.name)] = specifier.version
    return result
