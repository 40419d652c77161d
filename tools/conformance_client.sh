#!/usr/bin/env bash
# The official conformance client scenarios (all but the auth ones) against examples/everything_client.py,
# at both revisions: the 2026-07-28 ones, then the five 2025-11-25 (initialize-era) ones (issue 16).
#   tools/conformance_client.sh [SCENARIO...]     (named scenarios run at 2026-07-28 only)
set -euo pipefail
cd "$(dirname "$0")/.."
modern=("$@")
legacy=()
if [ ${#modern[@]} -eq 0 ]; then
  modern=(tools_call request-metadata sep-2322-client-request-state http-standard-headers
          http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref
          json-schema-2020-12-preservation)
  legacy=(initialize tools_call elicitation-sep1034-client-defaults sse-retry
          json-schema-2020-12-preservation)
fi
python="$(uv run python -c 'import sys; print(sys.executable)')"
client="$python $(pwd)/examples/everything_client.py"
failed=0
run() {  # run VERSION SCENARIO
  if ! ../shared/conformance/run-client.sh "$client" --scenario "$2" --spec-version "$1" | tail -n 12; then
    failed=$((failed + 1))
  fi
}
for scenario in "${modern[@]}"; do run 2026-07-28 "$scenario"; done
for scenario in "${legacy[@]+"${legacy[@]}"}"; do run 2025-11-25 "$scenario"; done
total=$(( ${#modern[@]} + ${#legacy[@]} ))
echo "client scenarios: $(( total - failed )) clean of $total (2026-07-28: ${#modern[@]}, 2025-11-25: ${#legacy[@]})"
[ "$failed" -eq 0 ]
