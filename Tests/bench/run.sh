#!/usr/bin/env bash
# One benchmark scenario against a server of its own (docs/PERFORMANCE.md):
#   Tests/bench/run.sh BIN_DIR SCENARIO [pomo-bench options...]
# BIN_DIR holds pomodoro-server and pomo-bench. The server is started on a free loopback port with the
# limits that keep one address from hurting others lifted (the generator is one address), the scenario
# runs with --server-pid, and the server is stopped afterwards, whatever happens.
# BENCH_DB=postgres keeps the rooms in a throwaway PostgreSQL (Debian's, started in the same temporary
# folder on a free loopback port, as the postgres user when run as root, and stopped at the end) instead of
# an SQLite file; BENCH_DB=none keeps them in memory only (--db none).
# BENCH_SERVER=peer starts the Node.js reference peer (Tests/bench/peer) instead of pomodoro-server, on a free
# loopback port too; BIN_DIR then only provides pomo-bench, which measures the peer's process as it would ours.
# BENCH_SERVER_BIN names another folder to take pomodoro-server from (an earlier build, say), with the same
# pomo-bench measuring it. BENCH_SERVER=gopeer does the same with the Go gorilla peer (Tests/bench/gopeer): GOPEER_BIN if given, else
# built offline into the run's temporary folder.
set -euo pipefail

bin="${1:?usage: run.sh BIN_DIR SCENARIO [pomo-bench options...]}"
scenario="${2:?usage: run.sh BIN_DIR SCENARIO [pomo-bench options...]}"
shift 2

# Each connection is a file on both sides; the generator raises its own limit, the server inherits this.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work="$(mktemp -d "${TMPDIR:-/tmp}/pomo-bench.XXXXXX")"
server_pid=""
pg_bin=""
as_pg=()
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  if [ -n "$pg_bin" ] && [ -f "$work/pg/postmaster.pid" ]; then
    "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" stop -m immediate -w -t 20 >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

db="$work/pomodoro.sqlite"
if [ "${BENCH_SERVER:-ours}" = peer ] || [ "${BENCH_SERVER:-ours}" = gopeer ]; then
  :
elif [ "${BENCH_DB:-sqlite}" = none ]; then
  db=none
elif [ "${BENCH_DB:-sqlite}" = postgres ]; then
  pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -x "$pg_bin/postgres" ] || { echo "run.sh: BENCH_DB=postgres needs Debian's postgresql" >&2; exit 1; }
  if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); chown postgres "$work"; fi
  pg_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "${as_pg[@]}" "$pg_bin/initdb" -D "$work/pg" -U pomodoro -A trust -E UTF8 --no-instructions >/dev/null
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w -t 30 \
    -o "-p $pg_port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
  "${as_pg[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U pomodoro pomodoro
  db="postgres://pomodoro@127.0.0.1:$pg_port/pomodoro"
fi

# Rooms hold up to 10,000 members by default, enough for every scenario. The queue bounds stay at
# their defaults: a member the server drops as too slow is an error the report must show. Scenarios run
# focus phases of a few seconds, below the server's default floor. The log files exist before the process
# opens them, so that the wait for the port below may read them at once.
: >"$work/server.out"
: >"$work/server.err"
if [ "${BENCH_SERVER:-ours}" = peer ]; then
  command -v node >/dev/null || { echo "run.sh: BENCH_SERVER=peer needs node (Debian's nodejs and node-ws)" >&2; exit 1; }
  # A simple command sent to the background: $! is node's own pid, whose /proc figures pomo-bench reads.
  node "$(dirname "$0")/peer/server.js" --host 127.0.0.1 --port 0 >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
elif [ "${BENCH_SERVER:-ours}" = gopeer ]; then
  gopeer="${GOPEER_BIN:-}"
  if [ -z "$gopeer" ]; then
    gopeer="$work/gopeer"
    bash "$(dirname "$0")/gopeer/build.sh" "$gopeer"
  fi
  "$gopeer" --host 127.0.0.1 --port 0 >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
else
"${BENCH_SERVER_BIN:-$bin}/pomodoro-server" --host 127.0.0.1 --port 0 --web-root "$work" --log-level warning \
  --db "$db" --max-connections-per-address 0 --members-per-address-per-room 0 --rooms-per-address-per-minute 0 --max-rooms 100000 \
  --handshake-timeout 30 --min-focus 1 >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
fi

port=""
for _ in $(seq 100); do
  port="$(sed -n 's|^pomodoro-[a-z]* listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$work/server.out" | head -n 1)"
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
