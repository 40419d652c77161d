#!/usr/bin/env bash
# The official conformance client scenarios (all but the auth ones) against examples/everything_client.py.
#   tools/conformance_client.sh [SCENARIO...]
set -euo pipefail
cd "$(dirname "$0")/.."
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  scenarios=(tools_call request-metadata sep-2322-client-request-state http-standard-headers
             http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref
             json-schema-2020-12-preservation)
fi
python="$(uv run python -c 'import sys; print(sys.executable)')"
client="$python $(pwd)/examples/everything_client.py"
failed=0
for scenario in "${scenarios[@]}"; do
  if ! ../shared/conformance/run-client.sh "$client" --scenario "$scenario" | tail -n 12; then
    failed=$((failed + 1))
  fi
done
echo "client scenarios: $(( ${#scenarios[@]} - failed )) clean of ${#scenarios[@]}"
[ "$failed" -eq 0 ]
