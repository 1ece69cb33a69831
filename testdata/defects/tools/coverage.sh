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
for set in corpus validation defects; do
  mapfile -t files < <(find "testdata/$set" -type f \( -name '*.txt' -o -name '*.txt.gz' -o -name '*.log' \) \
      ! -name '*.variant.*' ! -name 'paimon-sdk-scheduledexecutor-leak*' ! -name 'README*' ! -name 'NOTES*' | sort)
  { printf '%s\n' "${files[@]}"; echo '--'; "$bin" classify --json "${files[@]}" 2>/dev/null || true; } | python3 -c '
import json, sys
set_name = sys.argv[1]
files, hit, seen_sep = [], set(), False
for line in sys.stdin:
    line = line.rstrip("\n")
    if not seen_sep:
        if line == "--":
            seen_sep = True
        else:
            files.append(line)
        continue
    if not line.strip():
        continue
    d = json.loads(line)
    if (d.get("classification") or {}).get("defect"):
        hit.add(d.get("source"))
n, m = len(files), len([f for f in files if f in hit])
print("%-10s %4d / %4d" % (set_name, m, n))
' "$set"
done
