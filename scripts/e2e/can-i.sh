#!/usr/bin/env bash
# e2e step 4: `kubectl auth can-i` for every persona, against the real authorizer.
# Reads scripts/e2e/cases/can-i.tsv (generated from tools/generators/admission_cases.py, judged offline by
# tests/admission/test_admission_cases.py): persona  user  groups  verb  resource  subresource
# namespace  expect(yes|no). Exit 1 listing every row the cluster answers differently.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

table="${1:-$ROOT/scripts/e2e/cases/can-i.tsv}"
need kubectl
failures=0
while IFS=$'\t' read -r persona user groups verb resource subresource namespace expect; do
  [[ -z "$persona" || "$persona" == \#* ]] && continue
  args=(auth can-i "$verb" "$resource" -n "$namespace" "--as=$user")
  [[ "$subresource" != "-" ]] && args+=("--subresource=$subresource")
  IFS=, read -r -a group_list <<<"$groups"
  for group in "${group_list[@]}"; do args+=("--as-group=$group"); done
  answer="$(kubectl "${args[@]}" 2>/dev/null || true)"
  if [[ "$answer" != "$expect" ]]; then
    echo "FAIL $persona: $verb $resource ($subresource) in $namespace: got '$answer', want $expect"
    failures=$((failures + 1))
  else
    echo "ok   $persona: $verb $resource in $namespace: $answer"
  fi
done <"$table"
[[ $failures -eq 0 ]] || die "$failures access checks differ from the offline judgement"
