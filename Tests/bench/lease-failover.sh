#!/usr/bin/env bash
# The owner of a room killed (kill -9) under a relayed member: how long until the room runs again
# (docs/PERFORMANCE.md §7, "leases held by a liveness key"):
#   Tests/bench/lease-failover.sh BIN_DIR [ROUNDS]
# BIN_DIR holds pomodoro-server. For each of ROUNDS (default 3): Redis and PostgreSQL on loopback
# (Tests/bench/engines.sh), two nodes, Ada on node-1 and Bo on node-2 in one room, a focus started; node-1
# killed; prints the milliseconds from the kill until node-2 names itself the owner (GET /api/cluster/rooms)
# and until Bo hears the room from it (the `state` a member carried over to the new owner gets). Everything is stopped whatever happens. Needs python3-websocket.
set -euo pipefail
bin="${1:?usage: lease-failover.sh BIN_DIR [ROUNDS]}"
rounds="${2:-3}"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=Tests/bench/engines.sh
source "$here/engines.sh"
for round in $(seq "$rounds"); do
  work="$(mktemp -d "${TMPDIR:-/tmp}/pomo-lease-failover.XXXXXX")"
  pids=()
  cleanup() { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; stop_engines; rm -rf "$work"; }
  trap cleanup EXIT
  start_engines lease-failover
  ports=()
  for n in 1 2; do
    "$bin/pomodoro-server" "${node_options[@]}" --port 0 --log-level warning \
      --cluster "redis://127.0.0.1:$redis_port" --node-id "node-$n" >"$work/node-$n.out" 2>"$work/node-$n.err" &
    pids+=($!)
    port=""
    for _ in $(seq 150); do
      port="$(sed -n 's|^pomodoro-[a-z]* listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$work/node-$n.out" | head -n 1)"
      [ -n "$port" ] && break
      sleep 0.1
    done
    [ -n "$port" ] || { echo "lease-failover.sh: node $n did not start" >&2; exit 1; }
    ports+=("$port")
  done
  timeout 60 python3 - "${ports[0]}" "${ports[1]}" "${pids[0]}" <<'PY'
import json, os, signal, sys, time, urllib.request
import websocket
one, two, victim = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def member(port, name):
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws?room=fo", timeout=10)
    ws.send(json.dumps({"type": "join", "room": "fo", "name": name, "ref": "j"}))
    while json.loads(ws.recv()).get("type") != "welcome": pass
    return ws
ada = member(one, "Ada")
ada.send(json.dumps({"type": "start", "ref": "s"}))
bo = member(two, "Bo")
while json.loads(bo.recv()).get("type") != "tick": pass
def owner():
    with urllib.request.urlopen(f"http://127.0.0.1:{two}/api/cluster/rooms/fo", timeout=2) as r:
        return json.load(r).get("owner")
assert owner() == "node-1", owner()
killed = time.monotonic()
os.kill(victim, signal.SIGKILL)
owned = carried = None
bo.settimeout(0.05)
while (owned is None or carried is None) and time.monotonic() - killed < 20:
    if owned is None and owner() == "node-2": owned = time.monotonic() - killed
    try:
        if carried is None and json.loads(bo.recv()).get("type") == "state":
            carried = time.monotonic() - killed
    except websocket.WebSocketTimeoutException:
        pass
print(f"owner node-2 after {owned * 1000:.0f} ms, Bo carried over after {carried * 1000:.0f} ms")
PY
  cleanup
  trap - EXIT
done
