"""scripts/ci/pr-comment.sh and scripts/ci/bot-comment.sh against a stand-in `gh` that answers from
fixtures of GitHub's REST responses (GET /repos/{repo}/pulls/{n}: `head.sha`, `head.ref`,
`head.repo.full_name`; GET /repos/{repo}/issues/{n}/comments: `user.login`, `user.type`, `body`)
through the real jq, as `gh api --jq` does.

The attack: a fork's pull request run writes the artifact, so it chooses the number it claims and
may post comments starting with the marker anywhere. Neither may make the bot edit another pull
request's comment, or anyone's comment but its own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.scripts.test_scripts import Stubs

GH = r"""endpoint=""; jq_expr="."; method=GET
while [[ $# -gt 0 ]]; do
  case "$1" in
    api) ;;
    --jq) jq_expr="$2"; shift ;;
    --paginate) ;;
    -X) method="$2"; shift ;;
    -F) ;;
    body=*) ;;
    *) endpoint="$1" ;;
  esac
  shift
done
[[ "$method" == GET ]] || exit 0
fixture="$STUB_FIXTURES/$(echo "$endpoint" | tr '/' '_').json"
[[ -f "$fixture" ]] || { echo "gh: HTTP 404: Not Found ($endpoint)" >&2; exit 1; }
jq -r "$jq_expr" < "$fixture"
"""
REPO = "acme/tenancy"
BOT = {"login": "github-actions[bot]", "type": "Bot"}
MARKER = "<!-- tenancy-plan-diff -->"

pytestmark = pytest.mark.skipif(shutil.which("jq") is None, reason="jq not installed (the runner image has it)")


def _pull(number: int, sha: str, ref: str, repo: str | None) -> dict[str, Any]:
    return {"number": number, "head": {"sha": sha, "ref": ref, "repo": {"full_name": repo} if repo else None}}


@pytest.fixture
def gh(tmp_path: Path) -> Stubs:
    stubs = Stubs(tmp_path)
    stubs.add("gh", GH)
    (tmp_path / "fixtures").mkdir()
    for name in ("jq", "head", "tr", "cat"):
        (stubs.bin / name).symlink_to(shutil.which(name) or f"/usr/bin/{name}")
    return stubs


def _fixture(stubs: Stubs, endpoint: str, body: Any) -> None:
    path = stubs.bin.parent / "fixtures" / (endpoint.replace("/", "_") + ".json")
    path.write_text(json.dumps(body), encoding="utf-8")


def _artifact(tmp_path: Path, number: str) -> Path:
    directory = tmp_path / "artifact"
    directory.mkdir(exist_ok=True)
    (directory / "pr-number").write_text(number + "\n", encoding="utf-8")
    (directory / "body.md").write_text(f"{MARKER}\nPlan diff\n", encoding="utf-8")
    return directory


def _post(stubs: Stubs, directory: Path, sha: str, branch: str, repo: str) -> tuple[int, str, list[str]]:
    result = stubs.run(
        "scripts/ci/pr-comment.sh",
        str(directory),
        GITHUB_REPOSITORY=REPO,
        GH_TOKEN="x",
        HEAD_SHA=sha,
        HEAD_BRANCH=branch,
        HEAD_REPO=repo,
        STUB_FIXTURES=str(stubs.bin.parent / "fixtures"),
    )
    writes = [c for c in stubs.calls("gh") if " -X PATCH " in c or (" -F " in c and "-X" not in c)]
    return result.returncode, result.stdout + result.stderr, writes


def test_a_fork_naming_another_pull_request_is_refused(gh: Stubs, tmp_path: Path) -> None:
    # The fork's run (head someone/tenancy:patch at aaaa) claims to be #7, a branch of this repository.
    _fixture(gh, f"repos/{REPO}/pulls/7", _pull(7, "bbbb", "feature", REPO))
    _fixture(gh, f"repos/{REPO}/issues/7/comments", [{"id": 70, "user": BOT, "body": f"{MARKER}\nold"}])
    code, output, writes = _post(gh, _artifact(tmp_path, "7"), "aaaa", "patch", "someone/tenancy")
    assert code == 1 and "not the run's someone/tenancy:patch" in output
    assert writes == []


def test_the_same_branch_at_another_commit_is_skipped(gh: Stubs, tmp_path: Path) -> None:
    _fixture(gh, f"repos/{REPO}/pulls/8", _pull(8, "cccc", "patch", "someone/tenancy"))
    code, output, writes = _post(gh, _artifact(tmp_path, "8"), "aaaa", "patch", "someone/tenancy")
    assert code == 0 and "its newer run posts" in output
    assert writes == []


def test_a_deleted_fork_never_matches(gh: Stubs, tmp_path: Path) -> None:
    _fixture(gh, f"repos/{REPO}/pulls/9", _pull(9, "aaaa", "patch", None))
    code, _, writes = _post(gh, _artifact(tmp_path, "9"), "aaaa", "patch", "-")
    assert code == 1 and writes == []


def test_the_matching_pull_request_gets_the_bots_comment_edited(gh: Stubs, tmp_path: Path) -> None:
    _fixture(gh, f"repos/{REPO}/pulls/8", _pull(8, "aaaa", "patch", "someone/tenancy"))
    _fixture(
        gh,
        f"repos/{REPO}/issues/8/comments",
        [
            # A person's comment starting with the marker comes first: it must be left alone.
            {"id": 80, "user": {"login": "mallory", "type": "User"}, "body": f"{MARKER}\nfake plan"},
            {"id": 81, "user": BOT, "body": "another bot comment"},
            {"id": 82, "user": BOT, "body": f"{MARKER}\nold plan"},
        ],
    )
    code, output, writes = _post(gh, _artifact(tmp_path, "8"), "aaaa", "patch", "someone/tenancy")
    assert code == 0, output
    assert writes == [f"gh api -X PATCH repos/{REPO}/issues/comments/82 -F body=@{tmp_path}/artifact/body.cut.md"]


def test_without_a_bot_comment_a_new_one_is_added_not_a_persons_edited(gh: Stubs, tmp_path: Path) -> None:
    _fixture(gh, f"repos/{REPO}/pulls/8", _pull(8, "aaaa", "patch", REPO))
    _fixture(
        gh,
        f"repos/{REPO}/issues/8/comments",
        [{"id": 80, "user": {"login": "github-actions[bot]", "type": "User"}, "body": f"{MARKER}\nlook-alike"}],
    )
    code, output, writes = _post(gh, _artifact(tmp_path, "8"), "aaaa", "patch", REPO)
    assert code == 0, output
    assert writes == [f"gh api repos/{REPO}/issues/8/comments -F body=@{tmp_path}/artifact/body.cut.md"]


@pytest.mark.parametrize("number", ["8; rm -rf /", "", "../7", "-1"])
def test_a_number_that_is_not_one_is_refused(gh: Stubs, tmp_path: Path, number: str) -> None:
    code, _, writes = _post(gh, _artifact(tmp_path, number), "aaaa", "patch", REPO)
    assert code == 1 and writes == [] and gh.calls("gh") == []


GCLOUD = """case "$*" in
  "config config-helper --format=json") echo "${STUB_HELPER:-}" ;;
  *) exit 1 ;;
esac"""


def _token(stubs: Stubs, helper: str) -> tuple[int, str]:
    stubs.add("gcloud", GCLOUD)
    result = stubs.run("scripts/ci/gke-token.sh", STUB_HELPER=helper)
    return result.returncode, result.stdout if result.returncode == 0 else result.stderr


def test_the_gke_plugin_prints_a_credential_with_its_expiry(gh: Stubs) -> None:
    # client-go asks the plugin again once expirationTimestamp has passed
    # (k8s.io/client-go plugin/pkg/client/auth/exec; ExecCredential, client.authentication.k8s.io/v1).
    helper = {"credential": {"access_token": "ya29.token", "token_expiry": "2026-11-28T02:00:00Z"}}
    code, out = _token(gh, json.dumps(helper))
    assert code == 0, out
    assert json.loads(out) == {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "ya29.token", "expirationTimestamp": "2026-11-28T02:00:00Z"},
    }


def test_the_gke_plugin_fails_without_a_token(gh: Stubs) -> None:
    code, err = _token(gh, json.dumps({"credential": {}}))
    assert code != 0 and "no access token" in err
