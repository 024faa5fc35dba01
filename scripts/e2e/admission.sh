#!/usr/bin/env bash
# e2e step 5: the admission cases as server-side dry-run creates, impersonating each case's identity.
# Reads scripts/e2e/cases/index.tsv (tenancy e2e-manifests --write): id  file  user  groups
# expect(admit|rbac|deny)  policy. admit: the create succeeds; rbac: the authorizer forbids it;
# deny: the named ValidatingAdmissionPolicy denies it. Exit 1 listing every case that differs.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

cases="${1:-$ROOT/scripts/e2e/cases}"
need kubectl
failures=0
while IFS=$'\t' read -r id file user groups expect policy; do
  [[ -z "$id" || "$id" == \#* ]] && continue
  [[ "$policy" == "-" ]] && policy=""
  args=(create --dry-run=server -f "$cases/$file" "--as=$user")
  IFS=, read -r -a group_list <<<"$groups"
  for group in "${group_list[@]}"; do args+=("--as-group=$group"); done
  if output="$(kubectl "${args[@]}" 2>&1)"; then got=admit; else got=error; fi
  case "$expect" in
    admit) [[ "$got" == admit ]] ;;
    rbac) [[ "$got" == error && "$output" == *"is forbidden: User \"$user\" cannot create resource"* ]] ;;
    deny) [[ "$got" == error && "$output" == *"ValidatingAdmissionPolicy '$policy'"*"denied request"* ]] ;;
    *) false ;;
  esac && status=ok || status=FAIL
  echo "$status $id: want $expect${policy:+ ($policy)}: ${output//$'\n'/ }"
  [[ "$status" == ok ]] || failures=$((failures + 1))
done <"$cases/index.tsv"
[[ $failures -eq 0 ]] || die "$failures admission cases differ from the offline judgement"
