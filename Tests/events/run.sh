#!/usr/bin/env bash
# Server-Sent Events read by an independent client: Python's requests (installed from PyPI when missing)
# against the real server on a free loopback port, with the real pomo making traffic.
#   bash Tests/events/run.sh path/to/pomodoro-server path/to/pomo
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
server="$1"
pomo="$2"
if ! python3 -c 'import requests' 2>/dev/null; then
  echo "installing: requests (pip)"
  python3 -m pip install --quiet requests 2>/dev/null || python3 -m pip install --quiet --break-system-packages requests
fi
log="$(mktemp)"
db="$(mktemp -d)"
"$server" --port 0 --host 127.0.0.1 --db "$db/pomodoro.sqlite" --min-focus 1 > "$log" 2>&1 &
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
python3 "$root/Tests/events/test_events.py" --base "http://127.0.0.1:$port" --pomo "$pomo"
