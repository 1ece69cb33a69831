#!/usr/bin/env bash
# Coverage of the defect catalog over the real crash texts in testdata:
#   testdata/defects/tools/coverage.sh CRASHSIG_BINARY
# counts, per set (corpus, validation, defects), the files of which at least one
# incident matches a known defect (`classification.defect` in `classify --json`).
# Real crash texts only: generated variants (*.variant.*), the generated Paimon
# dump, generators, sidecars and label files are skipped.
set -euo pipefail
bin=${1:?usage: coverage.sh CRASHSIG_BINARY}
cd "$(dirname "$0")/../../.."
total=0; hit=0
for set in corpus validation defects; do
  n=0; m=0
  while IFS= read -r f; do
    n=$((n+1))
    if "$bin" classify --json "$f" 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if any((json.loads(l).get("classification") or {}).get("defect") for l in sys.stdin if l.strip()) else 1)'; then
      m=$((m+1))
    fi
  done < <(find "testdata/$set" -type f \( -name '*.txt' -o -name '*.txt.gz' -o -name '*.log' \) \
             ! -name '*.variant.*' ! -name 'paimon-sdk-scheduledexecutor-leak*' ! -name 'README*' ! -name 'NOTES*' | sort)
  printf '%-10s %4d / %4d\n' "$set" "$m" "$n"
  total=$((total+n)); hit=$((hit+m))
done
printf '%-10s %4d / %4d (%.1f%%)\n' all "$hit" "$total" "$(python3 -c "print(100*$hit/max($total,1))")"
