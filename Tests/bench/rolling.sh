#!/usr/bin/env bash
# A rolling restart of three cluster nodes under make bench-cluster's load (docs/PERFORMANCE.md, "Rolling
# restart"):
#   Tests/bench/rolling.sh BIN_DIR [pomo-bench options...]
# BIN_DIR holds pomodoro-server and pomo-bench (the release build: make bench-rolling). Starts Redis and
# PostgreSQL on loopback in a temporary folder (Tests/bench/engines.sh, as cluster.sh), then for each of
# ROLLING_RUNS rounds (default 3): three nodes on fixed loopback ports, each started again whenever it
# exits (as systemd's Restart=always or deploy/run-cluster.sh would), with JSON logs at level info;
# pomo-bench puts the load on them (members split over the nodes, rooms running, timed commands, members
# following close 1012 to the next node with their token, as a proxy would send them); ROLLING_LEAD
# seconds (default 5) into the measurement window, deploy/rolling-restart.sh restarts the three nodes one
# after the other. After the run every node is stopped (each flushes its store) and
# Tests/bench/rolling-check.py reads what came of it:
#   - per member, the longest run of consecutive seconds it missed (pomo-bench; target: at most 2);
#   - every command answered ok still in effect: each sender's task in PostgreSQL is its last ok or later;
#   - the journal: each room's focus sessions in PostgreSQL, none twice, none missing (one per cycle);
#   - each room's hand-off, from its release on the draining node to the node taking it and running it
#     (both lines of the nodes' logs, with their time stamps; target: under 300 ms);
#   - each drained node's time from SIGTERM to its exit (rolling-restart.sh; target: within 10 s).
# Then a table of medians over the rounds. ROLLING_MEMBERS (3000), ROLLING_ROOMS (300),
# ROLLING_COMMAND_ROOMS (30) and ROLLING_DURATION (the window, 60 s) size it; ROLLING_OUT keeps every
# round's files; ROLLING_JSON=1 prints the summary as JSON. ROLLING_SMOKE=1 is a short check (300 members,
# 30 rooms, one round): exit 1 unless no command was lost, the journal is whole and every member came back.
# The exit status is 1 when a round lost a command, the journal is wrong or a member did not come back;
# the timing targets are printed, never judged (the machine may be shared).
set -euo pipefail

bin="${1:?usage: rolling.sh BIN_DIR [pomo-bench options...]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
runs="${ROLLING_RUNS:-3}"
members="${ROLLING_MEMBERS:-3000}"
rooms="${ROLLING_ROOMS:-300}"
command_rooms="${ROLLING_COMMAND_ROOMS:-30}"
duration="${ROLLING_DURATION:-60}"
lead="${ROLLING_LEAD:-5}"
if [ "${ROLLING_SMOKE:-0}" = 1 ]; then
  runs=1 members=300 rooms=30 command_rooms=5 duration=30 lead=3
fi
case "$runs" in ''|*[!0-9]*|0) echo "rolling.sh: ROLLING_RUNS must be a positive number" >&2; exit 64 ;; esac

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
work="$(mktemp -d "${TMPDIR:-/tmp}/pomo-rolling-bench.XXXXXX")"
out="${ROLLING_OUT:-$work/out}"
mkdir -p "$out"
# shellcheck source=Tests/bench/engines.sh
source "$here/engines.sh"
supervisors=()
# Stops the nodes for good: no supervisor starts one again, and each drains and flushes its store.
stop_nodes() {
  local n pid
  touch "$work/stopping"
  for n in 1 2 3; do
    pid="$(cat "$work/node-$n.pid" 2>/dev/null || true)"
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
  done
  for n in 1 2 3; do
    pid="$(cat "$work/node-$n.pid" 2>/dev/null || true)"
    [ -n "$pid" ] || continue
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  for pid in "${supervisors[@]}"; do wait "$pid" 2>/dev/null || true; done
  supervisors=()
  rm -f "$work"/node-*.pid "$work/stopping"
}
cleanup() {
  trap - EXIT INT TERM
  stop_nodes
  stop_engines
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_engines rolling.sh
psql_query() { psql -X -q -A -t -F ' ' -h 127.0.0.1 -p "$pg_port" -U pomodoro -d pomodoro -c "$1"; }

echo "rolling restart benchmark: $members members in $rooms rooms on 3 nodes, window $duration s, timed commands" \
  "in $command_rooms rooms, the restart $lead s into the window; $runs rounds; pomo-bench options: ${*:-none}"
echo "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC on $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
failed=0
for round in $(seq "$runs"); do
  ports=("$(free_port)" "$(free_port)" "$(free_port)")
  for n in 1 2 3; do
    : >"$out/node-$round-$n.log"
    (
      trap 'exit 0' TERM
      while [ ! -e "$work/stopping" ]; do
        "$bin/pomodoro-server" "${node_options[@]}" --port "${ports[$((n - 1))]}" --log-level info --log-format json \
          --cluster "redis://127.0.0.1:$redis_port" --node-id "node-$n" >/dev/null 2>>"$out/node-$round-$n.log" &
        echo $! >"$work/node-$n.pid"
        wait $! || true
        [ -e "$work/stopping" ] || sleep 0.1
      done
    ) &
    supervisors+=($!)
  done
  for port in "${ports[@]}"; do
    for _ in $(seq 300); do
      [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)" = 200 ] && break
      sleep 0.1
    done
  done

  prefix="rolling-$round-$$"
  report="$out/bench-$round.json"
  log="$out/bench-$round.log"
  : >"$log"
  args=()
  for port in "${ports[@]}"; do args+=(--url "ws://127.0.0.1:$port"); done
  status=0
  "$bin/pomo-bench" --scenario rooms --members "$members" --rooms "$rooms" --duration "$duration" \
    --command-rooms "$command_rooms" --room-prefix "$prefix" --follow-restarts \
    --commands-out "$out/commands-$round.txt" "${args[@]}" --json "$@" >"$report" 2>"$log" &
  bench_pid=$!
  until grep -q "measuring for" "$log" || ! kill -0 "$bench_pid" 2>/dev/null; do sleep 0.05; done
  restart_status=0
  if grep -q "measuring for" "$log"; then
    sleep "$lead"
    restart_began=$(date +%s.%N)
    READY_TIMEOUT=60 bash "$root/deploy/rolling-restart.sh" processes "${ports[@]}" >"$out/restart-$round.txt" 2>&1 \
      || restart_status=$?
    restart_ended=$(date +%s.%N)
    echo "restart_seconds $(python3 -c "print(round($restart_ended - $restart_began, 2))")" >>"$out/restart-$round.txt"
    echo "restart_ended_ms $(python3 -c "print(int($restart_ended * 1000))")" >>"$out/restart-$round.txt"
  fi
  wait "$bench_pid" || status=$?
  echo "bench_ended_ms $(date +%s%3N)" >>"$out/restart-$round.txt"
  stop_nodes
  psql_query "SELECT room_id, started_at_ms, ended_at_ms FROM focus_session WHERE room_id LIKE '$prefix-%' ORDER BY room_id, ended_at_ms" \
    >"$out/sessions-$round.txt"
  psql_query "SELECT room_id, name, task FROM member WHERE room_id LIKE '$prefix-%' AND task LIKE 'timed %'" \
    >"$out/tasks-$round.txt"
  if [ "$status" != 0 ] || [ "$restart_status" != 0 ]; then
    echo "round $round: pomo-bench exit status $status, rolling-restart.sh $restart_status; their last lines:" >&2
    tail -n 8 "$log" "$out/restart-$round.txt" >&2
    failed=1
  fi
  python3 "$here/rolling-check.py" --round "$out" "$round" || failed=1
done
echo "ended $(date -u '+%Y-%m-%d %H:%M:%S') UTC; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
summary=(--summary "$out")
[ "${ROLLING_JSON:-0}" = 1 ] && summary+=(--json)
python3 "$here/rolling-check.py" "${summary[@]}"
exit "$failed"
