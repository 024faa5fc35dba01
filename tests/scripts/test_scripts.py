"""The scripts `make` and the e2e workflow run: syntax, ShellCheck, argument handling, and what
they would run, with stand-ins for docker, kind, kubectl and pulumi on PATH.

A stand-in records every call (`name args...`) and answers from a small bash `case` the test
writes; so each test shows the exact commands a real cluster would receive, and that the scripts
fail, naming what differs, when the cluster answers otherwise than the offline judgement.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.ci.engine_settings import command_env
from tools.generators import e2e_manifests
from tools.generators.admission_cases import ACCESS, CASES, Case
from tools.plan.harness import PROJECT_ROOT

SCRIPTS = sorted(path for folder in ("", "e2e", "ci") for path in (PROJECT_ROOT / "scripts" / folder).glob("*.sh"))
SHELLCHECK = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")
BASE_PATH = "/usr/bin:/bin"


class Stubs:
    """A bin directory of stand-in tools that log their calls; `run` runs a script with it first on PATH."""

    def __init__(self, tmp_path: Path) -> None:
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        self.log = tmp_path / "calls.log"
        self.log.touch()

    def add(self, name: str, body: str = "exit 0") -> None:
        path = self.bin / name
        path.write_text(f'#!/usr/bin/env bash\necho "{name} $*" >> "$STUB_LOG"\n{body}\n', encoding="utf-8")
        path.chmod(0o755)

    def run(self, script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        environment = {"PATH": f"{self.bin}:{BASE_PATH}", "STUB_LOG": str(self.log), "HOME": str(self.bin), **env}
        return subprocess.run(
            ["bash", str(PROJECT_ROOT / script), *args], capture_output=True, text=True, env=environment, check=False
        )

    def calls(self, name: str) -> list[str]:
        return [line for line in self.log.read_text().splitlines() if line.startswith(f"{name} ")]


@pytest.fixture
def stubs(tmp_path: Path) -> Stubs:
    return Stubs(tmp_path)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_script_parses(script: Path) -> None:
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert script.read_text().startswith("#!/usr/bin/env bash\n")
    assert os.access(script, os.X_OK) or script.name == "lib.sh"


def test_shellcheck_is_clean() -> None:
    if not Path(SHELLCHECK).is_file():
        pytest.skip("shellcheck not installed (pip install -r requirements-analyzer.txt)")
    paths = [str(path.relative_to(PROJECT_ROOT)) for path in SCRIPTS]
    result = subprocess.run([SHELLCHECK, "-x", *paths], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


def test_missing_tools_are_named_with_how_to_install_them(stubs: Stubs) -> None:
    result = stubs.run("scripts/check-tools.sh", "docker", "kind", "pulumi")
    assert result.returncode == 1
    assert "missing: docker; install: Docker Engine" in result.stderr
    assert "missing: kind; install: go install sigs.k8s.io/kind@v0.32.0" in result.stderr
    pin = next(
        line for line in (PROJECT_ROOT / "requirements.txt").read_text().splitlines() if line.startswith("pulumi==")
    )
    assert (
        f"missing: pulumi; install: curl -fsSL https://get.pulumi.com | sh -s -- --version {pin.split()[0][8:]}"
        in result.stderr
    )
    assert stubs.run("scripts/check-tools.sh").returncode == 1


def test_a_pulumi_cli_other_than_the_pin_is_a_warning(stubs: Stubs) -> None:
    stubs.add("pulumi", 'echo "v3.100.0"')
    result = stubs.run("scripts/check-tools.sh", "pulumi")
    assert result.returncode == 0 and "warning: pulumi 3.100.0; the project pins 3.272.0" in result.stderr
    stubs.add("pulumi", 'echo "v3.272.0"')
    assert stubs.run("scripts/check-tools.sh", "pulumi").stderr == ""


# A `kind` Docker network as `docker network inspect kind --format ...` describes it.
KIND_NETWORK = 'case "$*" in "network inspect kind --format"*) echo "172.18.0.0/16 " ;; esac'


def test_cluster_is_created_from_the_kind_config_once(stubs: Stubs) -> None:
    stubs.add("docker", KIND_NETWORK)
    stubs.add("kubectl")
    stubs.add("kind")
    result = stubs.run("scripts/cluster.sh")
    assert result.returncode == 0, result.stderr
    config = PROJECT_ROOT / "kind" / "cluster.yaml"
    assert f"kind create cluster --name tenancy --config {config} --wait 5m" in stubs.calls("kind")
    assert "kubectl wait --for=condition=Ready nodes --all --timeout=300s" in stubs.calls("kubectl")
    stubs.add("kind", 'case "$1" in get) echo tenancy ;; create) exit 9 ;; esac')
    assert stubs.run("scripts/cluster.sh", "create").returncode == 0
    assert stubs.run("scripts/cluster.sh", "resize").returncode == 1


def test_up_logs_in_to_the_dev_file_backend_and_creates_the_stack(stubs: Stubs, tmp_path: Path) -> None:
    stubs.add("pulumi", 'case "$1" in version) echo v3.272.0 ;; esac')
    stubs.add("kubectl")  # a context, and the operators' CRDs already there
    backend = f"file://{tmp_path}/state"
    result = stubs.run("scripts/e2e/up.sh", PULUMI_BACKEND_URL=backend)
    assert result.returncode == 0, result.stderr
    assert stubs.calls("pulumi")[1:] == [
        f"pulumi login {backend}",
        "pulumi stack select --create --secrets-provider passphrase dev",
        "pulumi up --stack dev --policy-pack policy_pack --yes --skip-preview",
    ]


def test_make_up_on_a_fresh_cluster_skips_the_first_preview(stubs: Stubs, tmp_path: Path) -> None:
    stubs.add("pulumi", 'case "$1" in version) echo v3.272.0 ;; esac')
    stubs.add("kubectl", 'case "$*" in "--context kind-tenancy get crd"*) exit 1 ;; esac')
    result = stubs.run("scripts/pulumi.sh", "up", PULUMI_BACKEND_URL=f"file://{tmp_path}/state")
    assert result.returncode == 0, result.stderr
    assert stubs.calls("pulumi")[-1] == "pulumi up --stack dev --policy-pack policy_pack --skip-preview"
    assert "the first up skips the preview" in result.stderr
    # The stack's own context, not the current one (issue 24): without it, nothing runs.
    stubs.add("kubectl", 'case "$*" in "config get-contexts kind-tenancy") exit 1 ;; esac')
    no_cluster = stubs.run("scripts/pulumi.sh", "up", PULUMI_BACKEND_URL=f"file://{tmp_path}/state")
    assert no_cluster.returncode == 1 and "no kubeconfig context kind-tenancy" in no_cluster.stderr


def test_make_preview_and_up_run_with_the_engine_settings_ci_uses(stubs: Stubs, tmp_path: Path) -> None:
    # tools/ci/engine_settings.py: `make preview` must cost what a pull request's preview costs.
    seen = 'echo "env GOGC=${GOGC:-} GOMEMLIMIT=${GOMEMLIMIT:-} skip=${PULUMI_SKIP_CHECKPOINTS:-}" >> "$STUB_LOG"'
    stubs.add("pulumi", f'case "$1" in version) echo v3.272.0 ;; preview|up) {seen} ;; esac')
    stubs.add("kubectl")
    state = f"file://{tmp_path}/state"
    assert stubs.run("scripts/pulumi.sh", "preview", PULUMI_BACKEND_URL=state).returncode == 0
    assert stubs.run("scripts/pulumi.sh", "up", PULUMI_BACKEND_URL=state, GOGC="150").returncode == 0
    preview, up = (command_env(command, {}) for command in ("preview", "up"))
    assert stubs.calls("env") == [
        f"env GOGC={preview['GOGC']} GOMEMLIMIT={preview['GOMEMLIMIT']} skip=true",
        f"env GOGC=150 GOMEMLIMIT={up['GOMEMLIMIT']} skip=",
    ]


def test_other_stacks_need_their_backend_and_commands_are_checked(stubs: Stubs) -> None:
    stubs.add("pulumi", 'case "$1" in version) echo v3.272.0 ;; esac')
    result = stubs.run("scripts/pulumi.sh", "preview", STACK="prod")
    assert result.returncode == 1 and "stack prod: set PULUMI_BACKEND_URL" in result.stderr
    assert stubs.run("scripts/pulumi.sh", "import").returncode == 1
    assert stubs.run("scripts/pulumi.sh").returncode == 1


def _request(case: Case) -> str:
    """The `case` pattern of the stub that matches the request the script sends for `case`."""
    if case.verb != "replace":
        return f"*{case.id}.yaml*"
    namespace = f"/namespaces/{case.namespace}" if case.namespace else ""
    plural = case.resource.rpartition("/")[2]
    path = f"/api/v1{namespace}/{plural}/{case.target}/{case.subresource}?dryRun=All"
    return f'*"replace --raw {path}"*"--as={case.who.name}"*'


def _kubectl_cluster(stubs: Stubs, *, wrong: str = "") -> None:
    """A kubectl that answers the dry-runs as the offline judgement says (except case `wrong`, admitted)."""
    # The stray grant's apply, wait and removal, and the live object a replace reads and merges.
    branches = ['  "apply "*|"delete "*|"auth "*|"get "*) exit 0 ;;', '  *"--local"*) echo "{}"; exit 0 ;;']
    # The policies the offline judgement denies each case with; the stub reports the last of them
    # (the live server reports whichever its map order gives first).
    index = (e2e_manifests.CASES_DIR / e2e_manifests.INDEX).read_text().splitlines()[1:]
    deniers = {row[0]: row[5].split("|") for row in (line.split("\t") for line in index)}
    for case in CASES:
        if case.expect == "admit" or case.id == wrong:
            answer = 'echo "created (server dry run)"; exit 0'
        elif case.expect == "rbac":
            forbidden = f'is forbidden: User \\"{case.who.name}\\" cannot create resource'
            answer = f'echo "Error from server (Forbidden): {forbidden}"; exit 1'
        else:
            answer = (
                f"echo \"Error: ValidatingAdmissionPolicy '{deniers[case.id][-1]}' with binding 'x' denied"
                ' request: no"; exit 1'
            )
        branches.append(f"  {_request(case)}) {answer} ;;")
    stubs.add("kubectl", 'case "$*" in\n' + "\n".join(branches) + "\nesac")


def test_admission_cases_pass_when_the_cluster_agrees(stubs: Stubs) -> None:
    _kubectl_cluster(stubs)
    result = stubs.run("scripts/e2e/admission.sh")
    assert result.returncode == 0, result.stdout + result.stderr
    [first] = [c for c in stubs.calls("kubectl") if f"{CASES[0].id}.yaml" in c]
    groups = " ".join(f"--as-group={g}" for g in CASES[0].who.groups)
    path = e2e_manifests.CASES_DIR / f"{CASES[0].id}.yaml"
    assert first == f"kubectl create --dry-run=server -f {path} --as={CASES[0].who.name} {groups}"
    requests = [c for c in stubs.calls("kubectl") if "--dry-run=server" in c or "dryRun=All" in c]
    assert len(requests) == len(CASES)
    # The stray identity's grant exists for the replay only.
    grant = str(e2e_manifests.CASES_DIR / e2e_manifests.STRAY_GRANT_FILE)
    calls = stubs.calls("kubectl")
    assert calls[0] == f"kubectl apply -f {grant}" and calls[-1].startswith(f"kubectl delete -f {grant}")
    # The fixtures are planted after the grant and removed before it, the pods they make with them.
    fixtures = str(e2e_manifests.CASES_DIR / e2e_manifests.FIXTURES_FILE)
    first_case = next(i for i, c in enumerate(calls) if "--dry-run=server" in c or "dryRun=All" in c)
    assert f"kubectl apply -f {fixtures}" in calls[1:first_case]
    assert calls[-2].startswith(f"kubectl delete -f {fixtures} --ignore-not-found --cascade=foreground")
    # Every live object a case is sent to is waited for before the first case.
    assert "kubectl get pods vcluster-0 -n tenant-operator-lab-dev" in calls[:first_case]
    [finalize] = [c for c in requests if "/finalize?" in c and "stray" in c]
    assert finalize.startswith("kubectl replace --raw /api/v1/namespaces/tenant-acme-prod/finalize?dryRun=All -f ")


def test_admission_cases_fail_naming_the_case_the_cluster_admits(stubs: Stubs) -> None:
    _kubectl_cluster(stubs, wrong="service-node-port")
    result = stubs.run("scripts/e2e/admission.sh")
    assert result.returncode == 1
    assert [line.split(":")[0] for line in result.stdout.splitlines() if line.startswith("FAIL")] == [
        "FAIL service-node-port"
    ]
    assert "1 admission cases differ" in result.stderr


def test_access_matrix_asks_every_row_and_fails_on_a_different_answer(stubs: Stubs) -> None:
    table = stubs.bin.parent / "can-i.tsv"
    source = (e2e_manifests.CASES_DIR / e2e_manifests.CAN_I).read_text()
    table.write_text(source)
    # A cluster that answers exactly the table: yes/no from the row that matches the arguments.
    stubs.add(
        "kubectl",
        f'grep -v "^#" "{table}" | while IFS=$\'\\t\' read -r _ user _ verb resource sub ns want; do '
        'extra=""; [[ "$sub" != "-" ]] && extra=" --subresource=$sub"; '
        'if [[ "$*" == "auth can-i $verb $resource -n $ns --as=$user$extra "* ]]; then echo "$want"; break; fi; done',
    )
    result = stubs.run("scripts/e2e/can-i.sh", str(table))
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(stubs.calls("kubectl")) == len(ACCESS)
    assert any("--subresource=exec" in call for call in stubs.calls("kubectl"))
    flipped = source.replace(
        "\tdeployments.apps\t-\ttenant-acme-prod\tno", "\tdeployments.apps\t-\ttenant-acme-prod\tyes", 1
    )
    changed = stubs.bin.parent / "changed.tsv"
    changed.write_text(flipped)
    result = stubs.run("scripts/e2e/can-i.sh", str(changed))
    assert result.returncode == 1
    assert "FAIL admin: create deployments.apps (-) in tenant-acme-prod: got 'no', want yes" in result.stdout


def test_wait_tenants_waits_for_what_exists(stubs: Stubs) -> None:
    stubs.add(
        "kubectl",
        'case "$*" in "get namespaces"*) echo "tenant-a-dev" ;; '
        '"get deployments -n tenant-a-dev"*) echo deployment.apps/web ;; esac',
    )
    result = stubs.run("scripts/e2e/wait-tenants.sh", "120s")
    assert result.returncode == 0, result.stderr
    waits = [c for c in stubs.calls("kubectl") if c.startswith("kubectl wait")]
    assert waits == ["kubectl wait --for=condition=Available deployments --all -n tenant-a-dev --timeout=120s"]
    stubs.add("kubectl")
    assert "no tenant namespaces" in stubs.run("scripts/e2e/wait-tenants.sh").stderr


def test_network_checks_fail_when_isolation_leaks(stubs: Stubs) -> None:
    # Pod IPs by namespace; only requests inside tenant-acme-dev succeed: isolation holds.
    ips = 'case "$*" in "get pods -n tenant-acme-dev"*) echo 10.0.0.1 ;; "get pods -n"*) echo 10.0.0.2 ;; '
    stubs.add("kubectl", ips + '*"exec -n tenant-acme-dev"*"http://10.0.0.1:8080/") exit 0 ;; "exec"*) exit 1 ;; esac')
    result = stubs.run("scripts/e2e/network.sh")
    assert result.returncode == 0, result.stdout + result.stderr
    calls = stubs.calls("kubectl")
    probe = e2e_manifests.CASES_DIR / "pod-own-pool.yaml"
    assert calls[0] == f"kubectl create -f {probe}"
    assert "kubectl wait --for=condition=Ready -n tenant-acme-dev pod/e2e-pod --timeout=180s" in calls
    assert "kubectl exec -n tenant-acme-prod deploy/worker -- wget -q -T 5 -O /dev/null http://10.0.0.1:8080/" in calls
    assert calls[-1] == f"kubectl delete -f {probe} --wait=false"
    assert result.stdout.count("ok ") == 6
    stubs.add("kubectl", ips + "esac")
    leaky = stubs.run("scripts/e2e/network.sh")
    assert leaky.returncode == 1 and "4 reachability checks failed" in leaky.stderr


def test_decommission_runs_two_ups_and_checks_the_data_stayed(stubs: Stubs, tmp_path: Path) -> None:
    stubs.add("pulumi", 'case "$1" in version) echo v3.272.0 ;; esac')
    stubs.add(
        "kubectl",
        'case "$*" in "get namespaces"*) echo tenant-acme-dev ;; '
        '"get clusters"*) echo cluster.postgresql.cnpg.io/orders ;; esac',
    )
    env = {"PULUMI_BACKEND_URL": f"file://{tmp_path}/state"}
    result = stubs.run("scripts/e2e/decommission.sh", "acme", **env)
    assert result.returncode == 0, result.stdout + result.stderr
    ups = [c for c in stubs.calls("pulumi") if c.startswith("pulumi up")]
    assert len(ups) == 2 and ups[0] == ups[1]
    assert ups[0].startswith(
        "pulumi up --stack dev --policy-pack policy_pack --yes --skip-preview --config tenancy:tenantsDir=/"
    )
    assert "tenant-acme-dev/cluster.postgresql.cnpg.io/orders" in result.stdout
    # The data disappears after the first up: the script must fail.
    counter = tmp_path / "count"
    stubs.add(
        "kubectl",
        f'case "$*" in "get namespaces"*) echo tenant-acme-dev ;; '
        f'"get clusters"*) [[ -f {counter} ]] || {{ touch {counter}; echo cluster/orders; }} ;; esac',
    )
    assert "did not survive" in stubs.run("scripts/e2e/decommission.sh", **env).stderr
    assert "no tenant file" in stubs.run("scripts/e2e/decommission.sh", "nobody", **env).stderr


def test_install_tools_installs_the_pinned_versions(stubs: Stubs) -> None:
    stubs.add("go", 'case "$1" in env) echo /home/runner/go ;; esac')
    stubs.add("curl", 'echo "echo installer \\$*"')
    stubs.add("sh", 'cat >/dev/null; echo "sh $*" >> "$STUB_LOG"')
    result = stubs.run("scripts/install-tools.sh", "kind", "pulumi")
    assert result.returncode == 0, result.stderr
    assert stubs.calls("go")[0] == "go install sigs.k8s.io/kind@v0.32.0"
    assert stubs.calls("curl") == ["curl -fsSL https://get.pulumi.com"]
    assert "sh -s -- --version 3.272.0" in stubs.log.read_text()
    assert result.stdout.splitlines() == ["/home/runner/go/bin", f"{stubs.bin}/.pulumi/bin"]
    refused = stubs.run("scripts/install-tools.sh", "docker")
    assert refused.returncode == 1 and "cannot install docker" in refused.stderr


def test_the_drift_report_comments_on_the_open_issue_or_opens_one(stubs: Stubs, tmp_path: Path) -> None:
    body = tmp_path / "drift.md"
    body.write_text("drift in prod\n")
    title = "Drift detected between the stacks and the program"
    stubs.add("gh", 'if [[ "$1 $2" == "issue list" ]]; then echo "${STUB_NUMBER:-}"; fi')
    result = stubs.run("scripts/ci/issue.sh", title, str(body), GITHUB_REPOSITORY="acme/tenancy", STUB_NUMBER="7")
    assert result.returncode == 0, result.stderr
    assert stubs.calls("gh")[-1] == f"gh issue comment 7 --repo acme/tenancy --body-file {body}"
    result = stubs.run("scripts/ci/issue.sh", title, str(body), GITHUB_REPOSITORY="acme/tenancy")
    assert result.returncode == 0, result.stderr
    assert stubs.calls("gh")[-1] == f"gh issue create --repo acme/tenancy --title {title} --body-file {body}"
    # The search is by the exact title: a "could not run" issue never receives drift comments.
    listing = stubs.calls("gh")[0]
    assert "--json number,title" in listing and f'select(.title == "{title}")' in listing
    missing = stubs.run("scripts/ci/issue.sh", title, str(tmp_path / "none.md"), GITHUB_REPOSITORY="acme/tenancy")
    assert missing.returncode == 1 and "no body file" in missing.stderr


def test_the_kind_network_gets_the_dev_stacks_api_server_subnet(stubs: Stubs) -> None:
    """kind reuses a Docker network named `kind`; the script makes it with the subnet the dev stack
    opens to CloudNativePG (tenancy:network.apiServer.cidrs) and refuses one with another subnet."""
    stubs.add("kubectl")
    stubs.add("kind")
    # No network yet: created with the stack's subnet, before kind runs.
    stubs.add(
        "docker",
        'case "$*" in "network inspect kind") exit 1 ;; '
        '"network inspect kind --format"*) echo "172.18.0.0/16 " ;; esac',
    )
    result = stubs.run("scripts/cluster.sh", "create")
    assert result.returncode == 0, result.stderr
    creates = [c for c in stubs.calls("docker") if c.startswith("docker network create")]
    assert creates and "--subnet 172.18.0.0/16" in creates[0]
    # A network Docker gave another range: refused, naming the stack key.
    stubs.add("docker", 'case "$*" in "network inspect kind --format"*) echo "172.19.0.0/16 " ;; esac')
    other = stubs.run("scripts/cluster.sh", "create")
    assert other.returncode == 1
    assert "subnet(s) 172.19.0.0/16, not 172.18.0.0/16: set tenancy:network.apiServer.cidrs" in other.stderr
