#!/usr/bin/env bash
# The HTTP API against its OpenAPI document (web/openapi.json): the document validated by PyPI's
# openapi-spec-validator, then the real server's answers on a free loopback port checked against the
# document's schemas with jsonschema (both installed from PyPI when missing).
#   bash Tests/api/run.sh path/to/pomodoro-server
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
server="$1"
for module in openapi_spec_validator:openapi-spec-validator jsonschema:jsonschema; do
  python3 -c "import ${module%%:*}" 2>/dev/null && continue
  echo "installing: ${module#*:} (pip)"
  python3 -m pip install --quiet "${module#*:}" 2>/dev/null || python3 -m pip install --quiet --break-system-packages "${module#*:}"
done
log="$(mktemp)"
db="$(mktemp -d)"
"$server" --port 0 --host 127.0.0.1 --db "$db/pomodoro.sqlite" --web-root "$root/web" --min-focus 1 > "$log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; rm -rf "$db" "$log"' EXIT
port=""
for _ in $(seq 1 200); do
  port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p' "$log" | head -n 1)"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.05
done
[ -n "$port" ] || { echo "the server did not start:"; cat "$log"; exit 1; }
python3 "$root/Tests/api/test_openapi.py" --base "http://127.0.0.1:$port" --document "$root/web/openapi.json"
