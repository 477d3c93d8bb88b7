# Redis and PostgreSQL on loopback for the cluster benchmarks (Tests/bench/cluster.sh, rolling.sh): sourced,
# with $work set to the run's temporary folder. start_engines starts both and sets redis_port, redis_pid,
# pg_bin, as_pg (runuser -u postgres when run as root), pg_port, database (the PostgreSQL URL) and
# node_options (what every benchmarked server is started with, port and cluster options aside);
# stop_engines stops them, whatever state they are in. free_port prints a free loopback port.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

redis_pid=""
as_pg=()

start_engines() {
  local name="$1"
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || { echo "$name: needs redis-server (make deps)" >&2; return 1; }
  pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -x "$pg_bin/postgres" ] || { echo "$name: needs Debian's postgresql (make deps)" >&2; return 1; }

  redis_port="$(free_port)"
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
    --logfile "$work/redis.log" >/dev/null &
  redis_pid=$!
  for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$redis_port" ping >/dev/null || { echo "$name: Redis did not start" >&2; return 1; }

  if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); chown postgres "$work"; fi
  pg_port="$(free_port)"
  "${as_pg[@]}" "$pg_bin/initdb" -D "$work/pg" -U pomodoro -A trust -E UTF8 --no-instructions >/dev/null
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w -t 30 \
    -o "-p $pg_port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
  "${as_pg[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U pomodoro pomodoro
  database="postgres://pomodoro@127.0.0.1:$pg_port/pomodoro"
  # As Tests/bench/run.sh: the per-address limits lifted (the generator is one address), short phases.
  node_options=(--host 127.0.0.1 --web-root "$work" --db "$database" --max-connections-per-address 0
    --members-per-address-per-room 0 --rooms-per-address-per-minute 0 --max-rooms 100000
    --handshake-timeout 30 --min-focus 1)
}

stop_engines() {
  if [ -n "$redis_pid" ]; then kill -TERM "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
  if [ -f "$work/pg/postmaster.pid" ]; then
    "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" stop -m immediate -w -t 20 >/dev/null 2>&1 || true
  fi
}
