#!/usr/bin/env bash
# A kubectl exec credential plugin for GKE in CI: prints an ExecCredential with a fresh access token
# and its expiry, so the Kubernetes provider asks again when it runs out during a long `up`.
# get-gke-credentials writes a static one-hour token into the kubeconfig unless told to use the
# `gcp` auth-provider (google-github-actions/get-gke-credentials@3da1e46a src/client.ts), which
# client-go no longer ships; gcloud signs in with the credentials file google-github-actions/auth
# wrote (CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE), which mints new tokens from the job's OIDC token
# (google-github-actions/auth@7c6bc770 src/client/workload_identity_federation.ts credential_source).
# The ExecCredential format: https://kubernetes.io/docs/reference/access-authn-authz/authentication/#input-and-output-formats
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

need gcloud
need jq
helper="$(gcloud config config-helper --format=json)"
jq -ce '{
  apiVersion: "client.authentication.k8s.io/v1",
  kind: "ExecCredential",
  status: {token: .credential.access_token, expirationTimestamp: .credential.token_expiry}
} | select(.status.token != null and .status.token != "")' <<<"$helper" \
  || die "gcloud config config-helper returned no access token"
