#!/usr/bin/env bash
# e2e step 5: the admission cases as server-side dry runs, impersonating each case's identity.
# Reads scripts/e2e/cases/index.tsv (tenancy e2e-manifests --write): id  file  user  groups
# expect(admit|rbac|deny)  policies  verb(create|patch|replace)  target(plural/name[@namespace])
# subresource. create: the file is the object; patch: a JSON merge patch of the live target (or
# its subresource); replace: the live core-group object with the patch merged in, PUT to it (or to
# its subresource: `namespaces/finalize` takes nothing else). admit: the request succeeds; rbac: the
# authorizer forbids it; deny: a ValidatingAdmissionPolicy denies it, one of the `|`-separated
# policies the offline judgement denies it with (the API server reports the first it meets, in its
# map's order). The stray identity's grant (stray-grant.yaml) and the objects planted for the replay
# (fixtures.yaml: the control plane a release would leave) exist only while the cases run; every
# object a case is sent to exists before the first case. Exit 1 listing every case that differs.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

cases="${1:-$ROOT/scripts/e2e/cases}"
need kubectl
scratch="$(mktemp -d)"
grant="$cases/stray-grant.yaml"
fixtures="$cases/fixtures.yaml"
cleanup() {
  # Foreground: the StatefulSet goes once the pod and revisions its controller made are gone.
  [[ -f "$fixtures" ]] && kubectl delete -f "$fixtures" --ignore-not-found --cascade=foreground \
    --timeout=120s >/dev/null 2>&1 || true
  [[ -f "$grant" ]] && kubectl delete -f "$grant" --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT
if [[ -f "$grant" ]]; then
  kubectl apply -f "$grant" >/dev/null
  # The authorizer serves a new binding once its informer has seen it.
  for _ in $(seq 1 30); do
    kubectl auth can-i patch namespaces --subresource=status --as=tenancy-e2e-stray@example.com \
      --as-group=tenancy-e2e-strays >/dev/null 2>&1 && break
    sleep 1
  done
fi
[[ -f "$fixtures" ]] && kubectl apply -f "$fixtures" >/dev/null
# Every object a patch or replace is sent to: what `up` left, the fixtures, and what the controllers
# make of them (the StatefulSet controller's vcluster-0).
while IFS=$'\t' read -r id _ _ _ _ _ verb target _; do
  [[ -z "$id" || "$id" == \#* || "$verb" == create ]] && continue
  resource="${target%%@*}"
  namespace=()
  [[ "$target" == *@* ]] && namespace=(-n "${target#*@}")
  for _ in $(seq 1 60); do
    kubectl get "${resource%%/*}" "${resource#*/}" "${namespace[@]}" >/dev/null 2>&1 && break
    sleep 1
  done
done < <(sort -u -t $'\t' -k8,8 "$cases/index.tsv")

# Whether the API server's refusal names one of the `|`-separated policies.
denied_by_one_of() {
  local policies output="$2" one
  IFS='|' read -r -a policies <<<"$1"
  for one in "${policies[@]}"; do
    [[ "$output" == *"ValidatingAdmissionPolicy '$one'"*"denied request"* ]] && return 0
  done
  return 1
}

failures=0
while IFS=$'\t' read -r id file user groups expect policy verb target subresource; do
  [[ -z "$id" || "$id" == \#* ]] && continue
  [[ "$policy" == "-" ]] && policy=""
  [[ "$subresource" == "-" ]] && subresource=""
  who=("--as=$user")
  IFS=, read -r -a group_list <<<"$groups"
  for group in "${group_list[@]}"; do who+=("--as-group=$group"); done
  resource="${target%%@*}"
  namespace=()
  [[ "$target" == *@* ]] && namespace=(-n "${target#*@}")
  case "$verb" in
    create) args=(create --dry-run=server -f "$cases/$file" "${who[@]}") ;;
    patch)
      args=(patch "${resource%%/*}" "${resource#*/}" "${namespace[@]}" --type=merge --patch-file "$cases/$file"
        --dry-run=server "${who[@]}")
      [[ -n "$subresource" ]] && args+=("--subresource=$subresource")
      ;;
    replace)
      kubectl get "${resource%%/*}" "${resource#*/}" "${namespace[@]}" -o json >"$scratch/live.json"
      kubectl patch --local -f "$scratch/live.json" --type=merge --patch-file "$cases/$file" -o json >"$scratch/new.json"
      path="/api/v1"
      [[ "$target" == *@* ]] && path+="/namespaces/${target#*@}"
      path+="/$resource${subresource:+/$subresource}?dryRun=All"
      args=(replace --raw "$path" -f "$scratch/new.json" "${who[@]}")
      ;;
    *) die "$id: unknown verb $verb" ;;
  esac
  if output="$(kubectl "${args[@]}" 2>&1)"; then got=admit; else got=error; fi
  case "$expect" in
    admit) [[ "$got" == admit ]] ;;
    rbac) [[ "$got" == error && "$output" == *"is forbidden: User \"$user\" cannot "*" resource"* ]] ;;
    # `a|b`: several policies deny it and the API server reports one of them (its map order).
    deny) [[ "$got" == error ]] && denied_by_one_of "$policy" "$output" ;;
    *) false ;;
  esac && status=ok || status=FAIL
  echo "$status $id: want $expect${policy:+ ($policy)}: ${output//$'\n'/ }"
  [[ "$status" == ok ]] || failures=$((failures + 1))
done <"$cases/index.tsv"
[[ $failures -eq 0 ]] || die "$failures admission cases differ from the offline judgement"
