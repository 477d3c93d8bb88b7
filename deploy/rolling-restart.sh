#!/usr/bin/env bash
# Restarts the nodes of a cluster one after the other (docs/CLUSTER.md, "Draining a node"): each is stopped
# with SIGTERM, hands its rooms to the other nodes and sends its members back through the proxy (close
# 1012), is started again, and must answer 200 on /readyz before the next one is touched. Stops at the
# first node that does not come back ready, leaving the rest running.
#   bash deploy/rolling-restart.sh processes PORT...      nodes on 127.0.0.1:PORT started again by a
#                                                         supervisor (deploy/run-cluster.sh does)
#   bash deploy/rolling-restart.sh systemd UNIT:PORT...   systemd units (systemctl restart UNIT), each
#                                                         answering on 127.0.0.1:PORT
# READY_TIMEOUT (seconds, default 60) bounds each wait for a node to stop and to be ready again. Once it is
# ready, the script waits until the members the node sent back are home: until the connections open on all
# the nodes (`pomodoro_connections` on each node's /metrics) are as many as before its stop, HOME_TIMEOUT
# seconds at most (default 10; no wait where /metrics is off), so that the next node's drain does not send
# them back again while they are still on their way. SETTLE (seconds, default 1) is a pause after that.
set -euo pipefail

mode="${1:-}"
shift || true
[ "$mode" = processes ] || [ "$mode" = systemd ] && [ $# -gt 0 ] || {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 64
}
timeout="${READY_TIMEOUT:-60}"
settle="${SETTLE:-1}"
home_timeout="${HOME_TIMEOUT:-10}"

readyz() { curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/readyz" || true; }

# The connections open on every node (0 for a node that does not answer or serves no /metrics).
connections() {
  local node total=0 count
  for node in "$@"; do
    count="$(curl -s -m 2 "http://127.0.0.1:${node##*:}/metrics" 2>/dev/null \
      | sed -n 's/^pomodoro_connections \([0-9][0-9]*\).*/\1/p' | head -n 1)"
    total=$((total + ${count:-0}))
  done
  echo "$total"
}

# Waits until the nodes hold `want` connections again (the members a drained node sent back are home).
wait_home() {
  local want="$1" deadline=$((SECONDS + home_timeout)) now
  shift
  while now="$(connections "$@")"; [ "$now" -lt "$want" ]; do
    [ $SECONDS -lt $deadline ] || { echo "  $now of $want connections back after ${home_timeout} s; going on"; return 0; }
    sleep 0.2
  done
  echo "  $now connections back (of $want before the stop)"
}

# The pid of the process listening on 127.0.0.1:PORT.
listener() {
  ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p' | head -n 1
}

wait_ready() {
  local port="$1" deadline=$((SECONDS + timeout))
  until [ "$(readyz "$port")" = 200 ]; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# Every node must be ready before one is taken out: never two out at once.
first=yes
for node in "$@"; do
  port="${node##*:}"
  [ "$(readyz "$port")" = 200 ] || { echo "the node on port $port is not ready (/readyz: $(readyz "$port")); nothing restarted"; exit 1; }
done

for node in "$@"; do
  port="${node##*:}"
  [ "$first" = yes ] || sleep "$settle"
  first=no
  started=$(date +%s.%N)
  before="$(connections "$@")"
  if [ "$mode" = systemd ]; then
    unit="${node%:*}"
    echo "restarting $unit (port $port)"
    # systemd sends SIGTERM, waits for the drain (within TimeoutStopSec), then starts the unit again.
    systemctl restart "$unit"
  else
    pid="$(listener "$port")"
    [ -n "$pid" ] || { echo "nothing listens on port $port"; exit 1; }
    echo "stopping the node on port $port (pid $pid)"
    kill -TERM "$pid"
    deadline=$((SECONDS + timeout))
    while kill -0 "$pid" 2>/dev/null; do
      [ $SECONDS -lt $deadline ] || { echo "pid $pid did not exit within ${timeout} s"; exit 1; }
      sleep 0.05
    done
    echo "  exited after $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $started }") s"
  fi
  if ! wait_ready "$port"; then
    echo "the node on port $port is not ready ${timeout} s after its restart (/readyz: $(readyz "$port")); stopping here"
    exit 1
  fi
  echo "  ready again after $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $started }") s"
  wait_home "$before" "$@"
done
echo "restarted $# nodes"
