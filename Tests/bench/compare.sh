#!/usr/bin/env bash
# Our server against the reference peers (Tests/bench/peer in Node `ws`, Tests/bench/gopeer in Go gorilla),
# same scenarios, same generator:
#   Tests/bench/compare.sh BIN_DIR "SCENARIO..." [pomo-bench options...]
# BIN_DIR holds the release pomodoro-server and pomo-bench. Each of BENCH_RUNS rounds (default 3) runs every
# scenario against each server of COMPARE_SERVERS (default "ours peer gopeer") one after the other, each on a
# fresh process (Tests/bench/run.sh), so that what the machine is doing meanwhile falls on all alike.
# A server named `before` is ours again, from the build in COMPARE_BEFORE_BIN (an earlier commit's release
# folder), measured by the same pomo-bench: COMPARE_SERVERS="before ours peer gopeer" puts a change and the
# peers side by side in one sitting. COMPARE_WINDOW (default 10) is each run's window in seconds. Ours runs with BENCH_DB (default sqlite: the
# server as deployed; none to leave the store out, as the peers keep nothing). Then, per scenario, a table of
# medians over the runs with their ranges and ours/peer, and the summary table of the two workloads
# (storm: 10,000 members in 1,000 rooms, joining at once; allhands: one room of 5,000). Each run's JSON
# report stays in BENCH_OUT if given.
set -euo pipefail

bin="${1:?usage: compare.sh BIN_DIR \"SCENARIO...\" [pomo-bench options...]}"
scenarios="${2:?usage: compare.sh BIN_DIR \"SCENARIO...\" [pomo-bench options...]}"
shift 2
runs="${BENCH_RUNS:-3}"
db="${BENCH_DB:-sqlite}"
servers="${COMPARE_SERVERS:-ours peer gopeer}"
window="${COMPARE_WINDOW:-10}"
here="$(cd "$(dirname "$0")" && pwd)"

case "$runs" in ''|*[!0-9]*|0) echo "compare.sh: BENCH_RUNS must be a positive number" >&2; exit 64 ;; esac
command -v node >/dev/null || { echo "compare.sh: needs node (Debian's nodejs and node-ws: make bench-compare installs them)" >&2; exit 1; }

out="${BENCH_OUT:-}"
if [ -z "$out" ]; then
  out="$(mktemp -d "${TMPDIR:-/tmp}/pomo-compare.XXXXXX")"
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
case " $servers " in
  *" gopeer "*)
    bash "$here/gopeer/build.sh" "$out/gopeer"
    export GOPEER_BIN="$out/gopeer" ;;
esac

echo "$scenarios; $runs rounds of: $servers (ours with store $db); window $window s; pomo-bench options: ${*:-none}"
echo "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC on $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
failed=0
for round in $(seq "$runs"); do
  for scenario in $scenarios; do
    for server in $servers; do
      report="$out/$scenario-$server-$round.json"
      status=0
      kind="$server"; server_bin=""
      if [ "$server" = before ]; then
        kind=ours; server_bin="${COMPARE_BEFORE_BIN:?compare.sh: the server before needs COMPARE_BEFORE_BIN}"
      fi
      BENCH_SERVER="$kind" BENCH_SERVER_BIN="$server_bin" BENCH_DB="$db" bash "$here/run.sh" "$bin" "$scenario" --json --duration "$window" "$@" \
        >"$report" 2>"$out/$scenario-$server-$round.log" || status=$?
      if [ "$status" != 0 ]; then
        echo "round $round, $scenario, $server: exit status $status; the run's last lines:" >&2
        tail -n 8 "$out/$scenario-$server-$round.log" >&2
        failed=1
      fi
      # A run that printed no report (it overran its bound, or the server did not start) counts for nothing.
      if ! node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$report" 2>/dev/null; then
        rm -f "$report"
        failed=1
        continue
      fi
      node -e '
        const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        const d = r.ticks.delayMs || {};
        console.log(`round ${process.argv[2]}, ${process.argv[3].padEnd(8)} ${process.argv[4].padEnd(6)}: p50 ${d.p50} ms, p99 ${d.p99} ms, ` +
          `joined in ${r.connections.joinSeconds} s (server CPU ${r.connections.joinServerCPUSeconds} s), CPU ${r.server && r.server.cpuPercentOfCore}% of a core, ` +
          `${r.traffic.framesPerSecond} frames/s, machine ${r.machineBusyPercent}% busy, ` +
          `${r.deliveryFailures.length ? r.deliveryFailures.join("; ") : "everything delivered"}`);
      ' "$report" "$round" "$scenario" "$server"
    done
  done
done
echo "ended $(date -u '+%Y-%m-%d %H:%M:%S') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
node "$here/peer/table.js" "$out" "$runs" "$scenarios" "$servers"
exit "$failed"
