#!/usr/bin/env bash
# The official conformance server suite against the everything example over Streamable HTTP.
#   tools/conformance.sh [ADAPTER [PORT]]      (ADAPTER: sync, asyncio or trio)
# Starts the server on 127.0.0.1, runs ../shared/conformance/run-server.sh at 2026-07-28 and
# at 2025-11-25 against the same running (dual-era) server; stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
adapter="${1:-sync}"
port="${2:-3917}"
log="$(mktemp)"
uv run python -m mcp_proto_cli serve-example --http "127.0.0.1:$port" --adapter "$adapter" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for revision in 2026-07-28 2025-11-25; do
  if ! ../shared/conformance/run-server.sh "http://127.0.0.1:$port/mcp" --spec-version "$revision"; then
    echo "conformance at $revision failed against the $adapter adapter; server log:" >&2
    cat "$log" >&2
    exit 1
  fi
done
