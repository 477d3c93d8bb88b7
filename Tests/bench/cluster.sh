#!/usr/bin/env bash
# Three cluster nodes beside one server, the same load from pomo-bench (docs/PERFORMANCE.md, "A cluster"):
#   Tests/bench/cluster.sh BIN_DIR [pomo-bench options...]
# BIN_DIR holds pomodoro-server and pomo-bench (the release build: make bench-cluster). Starts, on loopback
# in a temporary folder, Redis and PostgreSQL (as Tests/bench/run.sh does for BENCH_DB=postgres; as the
# postgres user when run as root), then for each of CLUSTER_RUNS rounds (default 3) and each mode of
# CLUSTER_MODES (default "split room single"), fresh server processes and one pomo-bench run:
#   split   three nodes (--cluster), every room's members spread over all three (--placement split)
#   room    three nodes, each room's members all on one node (--placement room, as nginx's hash gives)
#   one     one node (--cluster), everyone on it: what the cluster's machinery costs without relaying
#   single  one server on the same PostgreSQL without --cluster
# While pomo-bench measures, it reads Redis's CPU time (/proc/PID/stat) and its PUBLISH count
# (INFO commandstats), and each node's count of rooms it runs (GET /api/cluster). Then prints one table:
# medians over the rounds with their ranges. Everything is stopped whatever happens.
# CLUSTER_MEMBERS (3000), CLUSTER_ROOMS (300), CLUSTER_DURATION (20), CLUSTER_COMMAND_ROOMS (30) and
# CLUSTER_COMMAND_SENDERS (3 in each of those rooms, in every mode) size the load; CLUSTER_OUT keeps each run's JSON report and figures; CLUSTER_SMOKE=1 is a short delivery check
# (300 members, 30 rooms, split only, one round, --expect-all: exit 1 unless everything was delivered).
# With CLUSTER_OUT, each run's Redis INFO commandstats at both ends of the window are kept beside its report
# (MODE-ROUND.commandstats.first and .last; Tests/bench/commandstats.py tells what each command cost).
# CLUSTER_OUTAGE=SECONDS stops Redis that long, CLUSTER_OUTAGE_AFTER (5) seconds into each run's window, and
# starts it again empty (modes default to split, the window to the outage plus 20 s); each run then reports
# the members closed, the seconds missed on the owners' nodes and relayed, and the journal's focus sessions
# with any missing from PostgreSQL (Redis's own figures are left out: it restarted).
set -euo pipefail

bin="${1:?usage: cluster.sh BIN_DIR [pomo-bench options...]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
runs="${CLUSTER_RUNS:-3}"
modes="${CLUSTER_MODES:-split room single}"
members="${CLUSTER_MEMBERS:-3000}"
rooms="${CLUSTER_ROOMS:-300}"
duration="${CLUSTER_DURATION:-20}"
command_rooms="${CLUSTER_COMMAND_ROOMS:-30}"
# Senders of timed commands in each of those rooms, the same in every mode (one per node when split), so
# that every mode carries the same commands.
command_senders="${CLUSTER_COMMAND_SENDERS:-3}"
outage="${CLUSTER_OUTAGE:-0}"
outage_after="${CLUSTER_OUTAGE_AFTER:-5}"
case "$outage$outage_after" in *[!0-9]*) echo "cluster.sh: CLUSTER_OUTAGE and CLUSTER_OUTAGE_AFTER are whole seconds" >&2; exit 64 ;; esac
if [ "$outage" -gt 0 ]; then
  modes="${CLUSTER_MODES:-split}"
  duration="${CLUSTER_DURATION:-$((outage + outage_after + 15))}"
fi
extra=()
if [ "${CLUSTER_SMOKE:-0}" = 1 ]; then
  runs=1 modes=split members=300 rooms=30 duration=4 command_rooms=5
  extra=(--scenario smoke --expect-all)
else
  extra=(--scenario rooms)
fi
case "$runs" in ''|*[!0-9]*|0) echo "cluster.sh: CLUSTER_RUNS must be a positive number" >&2; exit 64 ;; esac
for mode in $modes; do
  case "$mode" in split|room|one|single) ;; *) echo "cluster.sh: unknown mode '$mode' (split, room, one, single)" >&2; exit 64 ;; esac
done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
work="$(mktemp -d "${TMPDIR:-/tmp}/pomo-cluster-bench.XXXXXX")"
out="${CLUSTER_OUT:-$work/out}"
mkdir -p "$out"
# shellcheck source=Tests/bench/engines.sh
source "$here/engines.sh"
node_pids=()
stop_nodes() {
  local pid
  for pid in "${node_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${node_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  node_pids=()
}
cleanup() {
  trap - EXIT INT TERM
  stop_nodes
  stop_engines
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_engines cluster.sh

# CLUSTER_OUTAGE: Redis stopped (it forgets everything) for $outage s, $outage_after s from now, then
# started again on the same port; sleeps to the end of the window.
redis_outage() {
  local window_left="$1"
  sleep "$outage_after"
  kill -TERM "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  echo "  Redis stopped at $(date -u '+%H:%M:%S') for $outage s"
  sleep "$outage"
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
    --logfile "$work/redis.log" >/dev/null &
  redis_pid=$!
  for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  echo "  Redis started again at $(date -u '+%H:%M:%S')"
  sleep "$(python3 -c "print(max(1, $window_left - $outage_after - $outage))")"
}

# CLUSTER_OUTAGE: the focus sessions journaled in PostgreSQL during the run, and those missing: each room's
# focus sessions end one focus and one break apart (pomo-bench's rooms), so a longer gap is one lost.
journal_check() {
  local since_ms="$1" result="$2"
  "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U pomodoro -d pomodoro -At -F ' ' -c \
    "SELECT room_id, ended_at_ms FROM focus_session WHERE ended_at_ms >= $since_ms ORDER BY room_id, ended_at_ms" \
    | python3 -c '
import json, sys
period = 15000  # pomo-bench rooms: a 10 s focus, a 5 s break
ends = {}
for line in sys.stdin:
    room, ended = line.split()
    ends.setdefault(room, []).append(int(ended))
missing = sum(max(0, round((b - a) / period) - 1) for e in ends.values() for a, b in zip(e, e[1:]))
print(json.dumps({"rooms": len(ends), "focusSessions": sum(map(len, ends.values())), "missing": missing}))
' >"$result"
}

# Starts COUNT servers (cluster nodes unless single); sets ports and node_pids.
ports=()
start_nodes() {
  local count="$1" cluster="$2" n port
  ports=()
  for n in $(seq "$count"); do
    : >"$work/node-$n.out"
    : >"$work/node-$n.err"
    local as_node=()
    [ "$cluster" = yes ] && as_node=(--cluster "redis://127.0.0.1:$redis_port" --node-id "node-$n")
    "$bin/pomodoro-server" "${node_options[@]}" --port 0 --log-level warning \
      "${as_node[@]}" >"$work/node-$n.out" 2>"$work/node-$n.err" &
    node_pids+=($!)
  done
  for n in $(seq "$count"); do
    port=""
    for _ in $(seq 150); do
      port="$(sed -n 's|^pomodoro-[a-z]* listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$work/node-$n.out" | head -n 1)"
      [ -n "$port" ] && break
      kill -0 "${node_pids[$((n - 1))]}" 2>/dev/null || break
      sleep 0.1
    done
    if [ -z "$port" ]; then
      echo "cluster.sh: node $n did not start:" >&2
      tail -n 20 "$work/node-$n.err" >&2
      return 1
    fi
    ports+=("$port")
  done
}

# One reading: wall time, Redis's CPU ticks, PUBLISH calls, commands processed.
redis_reading() {
  local stat publish total
  stat="$(sed 's/^.*) //' "/proc/$redis_pid/stat" | awk '{print $12 + $13}')"
  publish="$(redis-cli -p "$redis_port" info commandstats | sed -n 's/^cmdstat_publish:calls=\([0-9]*\),.*/\1/p')"
  total="$(redis-cli -p "$redis_port" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p')"
  echo "$(date +%s.%N) $stat ${publish:-0} ${total:-0}"
}

echo "cluster benchmark: $members members in $rooms rooms, window $duration s, timed commands from $command_senders members in each of $command_rooms rooms;" \
  "modes: $modes; $runs rounds; pomo-bench options: ${*:-none}"
echo "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC on $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
failed=0
for round in $(seq "$runs"); do
  for mode in $modes; do
    case "$mode" in
      split|room) start_nodes 3 yes ;;
      one) start_nodes 1 yes ;;
      single) start_nodes 1 no ;;
    esac
    args=()
    for i in "${!ports[@]}"; do args+=(--url "ws://127.0.0.1:${ports[$i]}" --server-pid "${node_pids[$i]}"); done
    [ "$mode" = room ] && args+=(--placement room)
    owners="$out/$mode-$round.owners"
    : >"$owners"
    [ "${#ports[@]}" -gt 1 ] && args+=(--owners "$owners")
    report="$out/$mode-$round.json"
    log="$out/$mode-$round.log"
    : >"$log"
    status=0
    "$bin/pomo-bench" "${extra[@]}" --members "$members" --rooms "$rooms" --duration "$duration" \
      --command-rooms "$command_rooms" --command-senders "$command_senders" "${args[@]}" --json "$@" >"$report" 2>"$log" &
    bench_pid=$!
    run_started_ms="$(date +%s%3N)"
    # Redis and the nodes' rooms read inside the generator's window, which opens 0.1 s after it says so.
    until grep -q "measuring for" "$log" || ! kill -0 "$bench_pid" 2>/dev/null; do sleep 0.05; done
    if grep -q "measuring for" "$log"; then
      sleep 0.2
      first="$(redis_reading)"
      redis-cli -p "$redis_port" info commandstats >"$out/$mode-$round.commandstats.first" 2>/dev/null || true
      # The rooms each node runs: counted here, and named to pomo-bench (--owners), which reads them after
      # the window to count each member on its room's owner or relayed. (A node lists its rooms only to a
      # client on its own host's loopback, as this script is; docs/SECURITY.md.)
      owned=()
      if [ "$mode" != single ]; then
        for i in "${!ports[@]}"; do
          rooms_of_node="$(curl -s --max-time 5 "http://127.0.0.1:${ports[$i]}/api/cluster" \
            | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["rooms"]))' 2>/dev/null)" || rooms_of_node=""
          [ -n "$rooms_of_node" ] && sed "s/^/$i /" <<<"$rooms_of_node" >>"$owners"
          owned+=("$(grep -c "^$i " "$owners" || true)")
        done
      fi
      if [ "$outage" -gt 0 ]; then
        redis_outage "$(python3 -c "print($duration - 0.6)")"
        first=""
      else
        sleep "$(python3 -c "print(max(1, $duration - 0.6))")"
      fi
      last="$(redis_reading)"
      redis-cli -p "$redis_port" info commandstats >"$out/$mode-$round.commandstats.last" 2>/dev/null || true
      [ -n "$first" ] && python3 - "$first" "$last" "$(getconf CLK_TCK)" "${owned[*]:-}" >"$out/$mode-$round.redis.json" <<'PY'
import json, sys
a, b = ([float(x) for x in s.split()] for s in sys.argv[1:3])
seconds = b[0] - a[0]
print(json.dumps({"seconds": round(seconds, 2),
                  "redisCPUPercentOfCore": round((b[1] - a[1]) / float(sys.argv[3]) / seconds * 100, 1),
                  "publishesPerSecond": round((b[2] - a[2]) / seconds, 1),
                  "commandsPerSecond": round((b[3] - a[3]) / seconds, 1),
                  "roomsOwned": [int(x) if x.isdigit() else None for x in sys.argv[4].split()]}))
PY
    fi
    wait "$bench_pid" || status=$?
    for i in "${!node_pids[@]}"; do
      kill -0 "${node_pids[$i]}" 2>/dev/null || { echo "cluster.sh: node $((i + 1)) died during the run" >&2; tail -n 20 "$work/node-$((i + 1)).err" >&2; status=1; }
    done
    stop_nodes
    [ "$outage" -gt 0 ] && for i in "${!ports[@]}"; do cp "$work/node-$((i + 1)).err" "$out/$mode-$round.node-$((i + 1)).err"; done
    if [ "$status" != 0 ]; then
      echo "round $round, $mode: exit status $status; the run's last lines:" >&2
      tail -n 8 "$log" >&2
      failed=1
    fi
    if ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$report" 2>/dev/null; then
      rm -f "$report"
      failed=1
      continue
    fi
    python3 "$here/cluster-table.py" --line "$out" "$mode" "$round"
    if [ "$outage" -gt 0 ]; then
      journal_check "$run_started_ms" "$out/$mode-$round.journal.json"
      python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); j = json.load(open(sys.argv[2])); t = r["ticks"]
closed = sum(n for k, n in r.get("errorsByKind", {}).items() if k.startswith("closed"))
print("  Redis away {} s: members closed {}; seconds missing on the owners nodes {} ({} members), relayed {};"
      " journal: {} focus sessions in {} rooms, {} missing".format(sys.argv[3], closed, t.get("ownerNodeMissing"),
      t.get("ownerNodeMembersMissing"), t.get("relayedMissing"), j["focusSessions"], j["rooms"], j["missing"]))
' "$report" "$out/$mode-$round.journal.json" "$outage"
    fi
  done
done
echo "ended $(date -u '+%Y-%m-%d %H:%M:%S') UTC; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
python3 "$here/cluster-table.py" "$out" "$modes"
exit "$failed"
