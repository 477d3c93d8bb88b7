#!/usr/bin/env bash
# A cluster on one machine, for trying it (docs/CLUSTER.md): Redis, PostgreSQL, three pomodoro-server nodes
# and nginx (deploy/nginx-cluster.conf), all on loopback in a temporary folder; the page at
# http://127.0.0.1:8080/. Ctrl-C stops all of it and removes the folder.
#   bash deploy/run-cluster.sh path/to/pomodoro-server [web-root]
# `make run-cluster` builds the release server and runs this. PostgreSQL runs as the postgres user when
# this runs as root (it refuses root), as the caller otherwise.
# SENTINEL=1 (`make run-cluster SENTINEL=1`): Redis as a master, a replica and three sentinels watching
# them (down after 1 s), the nodes given --cluster redis-sentinel://…/pomodoro: kill the master and watch
# the rooms go on while the sentinels promote the replica.
set -euo pipefail

server="${1:?usage: run-cluster.sh path/to/pomodoro-server [web-root]}"
root="$(cd "$(dirname "$0")/.." && pwd)"
web="${2:-$root/web}"
work="$(mktemp -d /tmp/pomodoro-cluster-XXXXXX)"
pids=()
pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -x "$pg_bin/postgres" ] || { echo "PostgreSQL is not installed: make deps"; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server is not installed: make deps"; exit 1; }
command -v nginx >/dev/null || { echo "nginx is not installed: make deps"; exit 1; }
as_pg=()
if [ "$(id -u)" = 0 ]; then
  as_pg=(runuser -u postgres --)
  chown postgres: "$work"
fi

stop_all() {
  trap - INT TERM EXIT
  echo "stopping"
  touch "$work/stopping"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for file in "$work"/node-*.pid; do [ -f "$file" ] && kill "$(cat "$file")" 2>/dev/null || true; done
  [ -f "$work/pg/postmaster.pid" ] && "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" stop -m fast -w >/dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap stop_all INT TERM EXIT

redis_port=6390 pg_port=5440
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --logfile "$work/redis.log" &
pids+=($!)
cluster="redis://127.0.0.1:$redis_port"
if [ "${SENTINEL:-}" = 1 ]; then
  command -v redis-sentinel >/dev/null || { echo "redis-sentinel is not installed: make deps"; exit 1; }
  redis-server --port $((redis_port + 1)) --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
    --replicaof 127.0.0.1 "$redis_port" --logfile "$work/redis-replica.log" &
  pids+=($!)
  sentinels=()
  for s in 1 2 3; do
    port=$((26390 + s))
    cat >"$work/sentinel-$s.conf" <<CONF
port $port
bind 127.0.0.1
dir $work
logfile $work/sentinel-$s.log
sentinel monitor pomodoro 127.0.0.1 $redis_port 2
sentinel down-after-milliseconds pomodoro 1000
sentinel failover-timeout pomodoro 10000
CONF
    redis-sentinel "$work/sentinel-$s.conf" &
    pids+=($!)
    sentinels+=("127.0.0.1:$port")
  done
  cluster="redis-sentinel://$(IFS=,; echo "${sentinels[*]}")/pomodoro"
fi

"${as_pg[@]}" "$pg_bin/initdb" -D "$work/pg" -U pomodoro -A trust -E UTF8 --no-sync --no-instructions >/dev/null
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
  -o "-p $pg_port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
"${as_pg[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U pomodoro pomodoro

database="postgres://pomodoro@127.0.0.1:$pg_port/pomodoro"
# Each node is started again whenever it exits (as systemd's Restart=always would), until Ctrl-C: a node
# stopped with SIGTERM drains and comes back, which is what deploy/rolling-restart.sh does to each in turn.
for n in 1 2 3; do
  (
    trap 'exit 0' TERM
    while [ ! -e "$work/stopping" ]; do
      "$server" --host 127.0.0.1 --port "808$n" --web-root "$web" --db "$database" \
        --cluster "$cluster" --node-id "node-$n" --trusted-proxy 127.0.0.1/32 \
        >>"$work/node-$n.out" 2>>"$work/node-$n.log" &
      echo $! >"$work/node-$n.pid"
      wait $! || true
      [ -e "$work/stopping" ] || sleep 0.5
    done
  ) &
  pids+=($!)
done
for n in 1 2 3; do
  for _ in $(seq 1 100); do grep -q listening "$work/node-$n.out" 2>/dev/null && break; sleep 0.1; done
  grep -q listening "$work/node-$n.out" || { echo "node-$n did not start:"; cat "$work/node-$n.log"; exit 1; }
done

mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<CONF
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
daemon off;
events {}
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  include $root/deploy/nginx-cluster.conf;
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)

cat <<TEXT
The cluster is up (folder $work):
  the page:        http://127.0.0.1:8080/  (nginx, rooms hashed over the nodes)
  nodes:           http://127.0.0.1:8081/ 8082/ 8083/  (each: /metrics, and /api/cluster for this host only; logs node-N.log)
  Redis:           $cluster    PostgreSQL: $database
Try: kill -9 the node that runs a room (curl -s 127.0.0.1:8081/api/cluster/rooms/NAME names it); its
members reconnect through nginx to the next node, which takes the room with the same endsAt.
Or restart every node in turn, each draining its rooms to the others (nodes come back by themselves here):
  bash deploy/rolling-restart.sh processes 8081 8082 8083
Or stop Redis for a while (kill -STOP, then -CONT, the redis-server on port $redis_port): the rooms go on.
TEXT
if [ "${SENTINEL:-}" = 1 ]; then
  cat <<TEXT
Sentinel: master on $redis_port, replica on $((redis_port + 1)), sentinels on 26391-26393; kill the master
  (kill -9 \$(redis-cli -p $redis_port INFO server | awk -F: '/process_id/{print \$2}' | tr -d '\\r'))
  and ask a sentinel which is the master now
  (redis-cli -p 26391 SENTINEL get-master-addr-by-name pomodoro): the rooms never stop.
TEXT
fi
echo "Ctrl-C stops everything."
wait
