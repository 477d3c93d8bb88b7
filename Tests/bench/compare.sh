#!/usr/bin/env bash
# Our server against the Node.js reference peer (Tests/bench/peer), same scenario, same generator:
#   Tests/bench/compare.sh BIN_DIR SCENARIO [pomo-bench options...]
# BIN_DIR holds the release pomodoro-server and pomo-bench. Each of BENCH_RUNS rounds (default 3) runs the
# scenario against our server and then against the peer, each on a fresh process (Tests/bench/run.sh), so
# that what the machine is doing meanwhile falls on both alike. Ours runs with BENCH_DB (default none: the
# peer keeps nothing either; sqlite or postgres to compare the server as deployed). Then one table: medians
# over the runs with their ranges, and ours/Node. Each run's JSON report stays in BENCH_OUT if given.
set -euo pipefail

bin="${1:?usage: compare.sh BIN_DIR SCENARIO [pomo-bench options...]}"
scenario="${2:?usage: compare.sh BIN_DIR SCENARIO [pomo-bench options...]}"
shift 2
runs="${BENCH_RUNS:-3}"
db="${BENCH_DB:-none}"
here="$(cd "$(dirname "$0")" && pwd)"

case "$runs" in ''|*[!0-9]*|0) echo "compare.sh: BENCH_RUNS must be a positive number" >&2; exit 64 ;; esac
command -v node >/dev/null || { echo "compare.sh: needs node (Debian's nodejs and node-ws: make bench-compare installs them)" >&2; exit 1; }

out="${BENCH_OUT:-}"
if [ -z "$out" ]; then
  out="$(mktemp -d "${TMPDIR:-/tmp}/pomo-compare.XXXXXX")"
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

echo "$scenario, $runs rounds of ours (store: $db) then the Node peer; pomo-bench options: ${*:-none}"
echo "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC on $(nproc) CPUs"
failed=0
for round in $(seq "$runs"); do
  for server in ours peer; do
    report="$out/$server-$round.json"
    status=0
    BENCH_SERVER="$server" BENCH_DB="$db" bash "$here/run.sh" "$bin" "$scenario" --json "$@" \
      >"$report" 2>"$out/$server-$round.log" || status=$?
    if [ "$status" != 0 ]; then
      echo "round $round, $server: exit status $status; the run's last lines:" >&2
      tail -n 8 "$out/$server-$round.log" >&2
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
      console.log(`round ${process.argv[2]}, ${process.argv[3].padEnd(4)}: p50 ${d.p50} ms, p99 ${d.p99} ms, ` +
        `CPU ${r.server && r.server.cpuPercentOfCore}% of a core, ${r.traffic.framesPerSecond} frames/s, ` +
        `machine ${r.machineBusyPercent}% busy, ${r.deliveryFailures.length ? r.deliveryFailures.join("; ") : "everything delivered"}`);
    ' "$report" "$round" "$server"
  done
done
echo "ended $(date -u '+%Y-%m-%d %H:%M:%S') UTC"
echo
node "$here/peer/table.js" "$out" "$runs"
exit "$failed"
