#!/usr/bin/env bash
# One benchmark scenario against a server of its own (docs/PERFORMANCE.md):
#   Tests/bench/run.sh BIN_DIR SCENARIO [pomo-bench options...]
# BIN_DIR holds pomodoro-server and pomo-bench. The server is started on a free loopback port with the
# limits that keep one address from hurting others lifted (the generator is one address), the scenario
# runs with --server-pid, and the server is stopped afterwards, whatever happens.
set -euo pipefail

bin="${1:?usage: run.sh BIN_DIR SCENARIO [pomo-bench options...]}"
scenario="${2:?usage: run.sh BIN_DIR SCENARIO [pomo-bench options...]}"
shift 2

# Each connection is a file on both sides; the generator raises its own limit, the server inherits this.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work="$(mktemp -d "${TMPDIR:-/tmp}/pomo-bench.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Rooms hold up to 10,000 members by default, enough for every scenario. The queue bounds stay at
# their defaults: a member the server drops as too slow is an error the report must show. Scenarios run
# focus phases of a few seconds, below the server's default floor.
"$bin/pomodoro-server" --host 127.0.0.1 --port 0 --web-root "$work" --log-level warning \
  --db "$work/pomodoro.sqlite" --max-connections-per-address 0 --members-per-address-per-room 0 --rooms-per-address-per-minute 0 --max-rooms 100000 \
  --handshake-timeout 30 --min-focus 1 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!

port=""
for _ in $(seq 100); do
  port="$(sed -n 's|^pomodoro-server listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$work/server.out" | head -n 1)"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "run.sh: the server did not start" >&2
  cat "$work/server.err" >&2
  exit 1
fi

status=0
"$bin/pomo-bench" --scenario "$scenario" --url "ws://127.0.0.1:$port" --server-pid "$server_pid" "$@" || status=$?
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "run.sh: the server died during the run" >&2
  tail -n 20 "$work/server.err" >&2
  status=1
fi
if [ -s "$work/server.err" ]; then
  echo "run.sh: the server's log (last lines):" >&2
  tail -n 5 "$work/server.err" >&2
fi
exit "$status"
