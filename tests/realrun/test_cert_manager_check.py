"""The cert-manager line's judgement of an issued certificate (tools/realrun/controllers/cert_manager.py).

The certificates are made here with openssl (the real run needs it anyway): a CA, a leaf it signs
for two names, and a leaf signed by another CA.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tools.realrun.controllers.cert_manager import _ready_by_controller, chains_to, sans

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _ca(folder: Path, name: str) -> None:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "1", "-subj", f"/CN={name}"],
                   cwd=folder, check=True, capture_output=True)  # fmt: skip


def _leaf(folder: Path, ca: str, names: list[str]) -> bytes:
    (folder / "ext").write_text("subjectAltName=" + ",".join(f"DNS:{n}" for n in names) + "\n")
    subprocess.run(["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=leaf"],
                   cwd=folder, check=True, capture_output=True)  # fmt: skip
    subprocess.run(["openssl", "x509", "-req", "-in", "leaf.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
                    "-CAcreateserial", "-out", "leaf.crt", "-days", "1", "-extfile", "ext"],
                   cwd=folder, check=True, capture_output=True)  # fmt: skip
    return (folder / "leaf.crt").read_bytes()


def test_a_leaf_chains_to_its_ca_and_not_to_another(tmp_path: Path) -> None:
    _ca(tmp_path, "stack")
    _ca(tmp_path, "other")
    leaf = _leaf(tmp_path, "stack", ["a.example.com", "*.a.example.com"])
    assert chains_to(leaf, (tmp_path / "stack.crt").read_bytes()) == ""
    assert chains_to(leaf, (tmp_path / "other.crt").read_bytes()) != ""


def test_sans_are_read_exactly(tmp_path: Path) -> None:
    _ca(tmp_path, "stack")
    leaf = _leaf(tmp_path, "stack", ["a.example.com", "*.a.example.com"])
    assert sans(leaf) == {"DNS:a.example.com", "DNS:*.a.example.com"}
    assert sans((tmp_path / "stack.crt").read_bytes()) == set()


def _certificate(status: str, manager: str) -> dict[str, Any]:
    return {
        "metadata": {"managedFields": [{"manager": manager, "subresource": "status"}]},
        "status": {"conditions": [{"type": "Ready", "status": status, "reason": "Issued"}]},
    }


def test_ready_counts_only_when_cert_manager_wrote_it() -> None:
    assert _ready_by_controller(_certificate("True", "cert-manager-certificates-readiness")) == ""
    assert "not by cert-manager" in _ready_by_controller(_certificate("True", "kubernetes"))
    assert "not Ready" in _ready_by_controller(_certificate("False", "cert-manager-certificates-readiness"))
    assert _ready_by_controller({"metadata": {}}) == "no Ready condition"
