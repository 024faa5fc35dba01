"""How the real run finds or builds its binaries (tools/realrun/toolchain.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.realrun import toolchain


def _fake(folder: Path, name: str, output: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{output}'\n")
    path.chmod(0o755)
    return path


def _binary(name: str) -> toolchain.Binary:
    return next(b for b in toolchain.binaries() if b.name == name)


def test_a_binary_on_path_at_the_pinned_version_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(tmp_path, "pulumi", "v3.274.1")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert toolchain.on_path(_binary("pulumi")) == tmp_path / "pulumi"


def test_a_binary_on_path_at_another_version_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(tmp_path, "pulumi", "v3.200.0")
    _fake(tmp_path, "kube-apiserver", "Kubernetes v1.35.4")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert toolchain.on_path(_binary("pulumi")) is None
    assert toolchain.on_path(_binary("kube-apiserver")) is None


def test_the_control_plane_is_the_dev_stacks_kubernetes_minor() -> None:
    from tools.generators.kind_config import dev_settings

    minor = dev_settings().kubernetes_version
    assert toolchain.KUBERNETES_VERSION.lstrip("v").startswith(minor + ".")
    assert f"k8s.io/kubernetes {toolchain.KUBERNETES_VERSION}" in (toolchain.MODULES / "kubernetes/go.mod").read_text()
    for line in re.findall(
        r"^\t(k8s\.io/\S+) => \S+ (\S+)$", (toolchain.MODULES / "kubernetes/go.mod").read_text(), re.M
    ):
        assert line[1] == "v0." + toolchain.KUBERNETES_VERSION.lstrip("v").split(".", 1)[1], line


def _as_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_the_cli_is_at_least_the_sdk_pin_and_within_the_projects_range() -> None:
    pinned = re.search(r"^pulumi==(\S+)", (toolchain.ROOT / "requirements.txt").read_text(), re.M)
    assert pinned is not None
    cli = re.search(r"github.com/pulumi/pulumi/pkg/v3 v(\S+)", (toolchain.MODULES / "pulumi/go.mod").read_text())
    assert cli is not None
    assert _as_tuple(cli[1]) >= _as_tuple(pinned[1])
    assert _as_tuple(cli[1]) < (4,)
    assert re.search(_binary("pulumi").version_pattern, f"v{cli[1]}")


def test_without_go_the_message_says_what_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(toolchain.ToolchainError, match=r"needs Go 1\.26 or later on PATH.*offline suite"):
        toolchain.require_go()


def test_a_module_not_yet_in_the_cache_is_downloaded_not_read_from_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh machine's empty module cache: `go list -m` names no folder for a module nothing has
    built yet (found by the first cold build: the provider's schema was read from a relative path)."""
    unpacked = tmp_path / "mod" / "provider@v4"
    go = tmp_path / "go"
    go.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "mod download" ]; then echo \'{"Path": "p", "Dir": "' + str(unpacked) + "\"}'; exit 0; fi\n"
        'if [ "$1" = "list" ]; then echo ""; exit 0; fi\n'
        "exit 1\n"
    )
    go.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert toolchain.module_dir("provider", "github.com/pulumi/pulumi-kubernetes/provider/v4") == unpacked


def test_a_module_the_proxy_cannot_serve_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    go = tmp_path / "go"
    go.write_text('#!/bin/sh\necho \'{"Path": "p", "Error": "not found"}\'\n')
    go.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(toolchain.ToolchainError, match="gave no folder"):
        toolchain.module_dir("kwok", "sigs.k8s.io/kwok")
