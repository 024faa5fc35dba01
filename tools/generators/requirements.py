"""Write the pip requirement files from uv.lock, or check that they are current.

    tenancy requirements          rewrite requirements.txt, requirements-ops.txt, requirements-dev.txt and
                                  requirements-uv.txt
    tenancy requirements --check  exit 1, naming each stale file, if they differ

uv.lock is the lock (pyproject.toml lists what the project asks for; `uv lock` resolves it). The
pip files exist because pip is what every consumer runs: `make test` on a fresh machine, `pulumi
install` for the program and the policy pack (Pulumi.yaml's pip toolchain), and the Pulumi
Kubernetes Operator's workspace. They carry a hash per requirement, so pip installs exactly the
locked files or nothing. The operator tools that read a live cluster (`tools.operations.status`) need the
Kubernetes client, which the runtime set leaves out: requirements-ops.txt adds it. `make` installs
uv first from requirements-uv.txt (pip, hashes checked), then the others with uv, which checks the
same hashes and installs in a fraction of pip's time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from tools.plan.harness import PROJECT_ROOT

# file name -> (what it is for, the uv export options that select its groups)
EXPORTS: dict[str, tuple[str, list[str]]] = {
    "requirements.txt": (
        "The runtime set: what `pulumi up`, the policy pack and the operator install; no test tools.",
        ["--no-dev"],
    ),
    "requirements-ops.txt": (
        "The runtime set plus the `ops` group (the Kubernetes client of `tenancy status`).",
        ["--no-dev", "--group", "ops"],
    ),
    "requirements-dev.txt": (
        "The runtime set plus the `ops` group and the test tools (`make test`).",
        ["--all-groups"],
    ),
    "requirements-uv.txt": (
        "uv alone: the Makefile installs it with pip, then requirements-dev.txt with uv.",
        ["--only-group", "bootstrap"],
    ),
}


def exported(name: str, root: Path = PROJECT_ROOT) -> str:
    """The content `name` must have: the header, then uv's export of the lock's selected groups."""
    purpose, options = EXPORTS[name]
    command = [sys.executable, "-m", "uv", "export", "--frozen", "--offline", "--quiet", "--no-header"]
    command += ["--no-emit-project", "--format", "requirements.txt", *options]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"uv export failed for {name}: {result.stderr.strip()}")
    header = (
        "# Generated from uv.lock by `tenancy requirements`: edit pyproject.toml, run `uv lock`,\n"
        f"# then that command. {purpose}\n"
    )
    return header + result.stdout


def stale(root: Path = PROJECT_ROOT) -> list[str]:
    """Names of the pip files that differ from the lock's export."""
    return [
        name
        for name in EXPORTS
        if not (root / name).exists() or (root / name).read_text(encoding="utf-8") != exported(name, root)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy requirements", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is stale instead of writing")
    args = parser.parse_args(argv)
    if args.check:
        names = stale()
        for name in names:
            print(f"{name} is stale: run `tenancy requirements` (after `uv lock`)", file=sys.stderr)
        return 1 if names else 0
    for name in EXPORTS:
        (PROJECT_ROOT / name).write_text(exported(name), encoding="utf-8")
        print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
