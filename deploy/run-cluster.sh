#!/usr/bin/env bash
# A cluster on one machine, for trying it (docs/CLUSTER.md): Redis, PostgreSQL, three pomodoro-server nodes
# and nginx (deploy/nginx-cluster.conf), all on loopback in a temporary folder; the page at
# http://127.0.0.1:8080/. Ctrl-C stops all of it and removes the folder.
#   bash deploy/run-cluster.sh path/to/pomodoro-server [web-root]
# `make run-cluster` builds the release server and runs this. PostgreSQL runs as the postgres user when
# this runs as root (it refuses root), as the caller otherwise.
# PROXY_PORT (8080), NODE_PORTS ("8081 8082 8083"), REDIS_PORT (6390) and PG_PORT (5440) move it elsewhere
# (deploy/test-cluster.sh runs it on free ports beside a cluster on the usual ones).
# SENTINEL=1 (`make run-cluster SENTINEL=1`): Redis as a master, a replica and three sentinels watching
# them (down after 1 s), the nodes given --cluster redis-sentinel://…/pomodoro: kill the master and watch
# the rooms go on while the sentinels promote the replica.
set -euo pipefail

server="${1:?usage: run-cluster.sh path/to/pomodoro-server [web-root]}"
root="$(cd "$(dirname "$0")/.." && pwd)"
web="${2:-$root/web}"
work="$(mktemp -d /tmp/pomodoro-cluster-XXXXXX)"
pids=() supervisors=()
proxy_port="${PROXY_PORT:-8080}" redis_port="${REDIS_PORT:-6390}" pg_port="${PG_PORT:-5440}"
read -r -a node_ports <<<"${NODE_PORTS:-8081 8082 8083}"
[ ${#node_ports[@]} = 3 ] || { echo "NODE_PORTS: three ports"; exit 64; }
pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -x "$pg_bin/postgres" ] || { echo "PostgreSQL is not installed: make deps"; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server is not installed: make deps"; exit 1; }
command -v nginx >/dev/null || { echo "nginx is not installed: make deps"; exit 1; }
as_pg=()
if [ "$(id -u)" = 0 ]; then
  as_pg=(runuser -u postgres --)
  chown postgres: "$work"
fi

# The nodes first: each drains (writes what it had to PostgreSQL, gives its leases back to Redis) and is
# awaited, NODE_STOP_TIMEOUT seconds at most (default 30: a drain is bounded at 20 s), then killed; only
# then are nginx, PostgreSQL and Redis stopped and the folder removed.
stop_all() {
  trap - INT TERM EXIT
  echo "stopping the nodes"
  touch "$work/stopping"
  local file pid deadline=$((SECONDS + ${NODE_STOP_TIMEOUT:-30})) running signalled=" "
  while :; do
    running=""
    # Each node once; a supervisor between two starts may have started its node again: that one too.
    for file in "$work"/node-*.pid; do
      [ -f "$file" ] && pid="$(cat "$file")" && kill -0 "$pid" 2>/dev/null || continue
      running="$running $pid"
      [[ "$signalled" == *" $pid "* ]] || { kill -TERM "$pid" 2>/dev/null || true; signalled="$signalled$pid "; }
    done
    for pid in "${supervisors[@]}"; do kill -0 "$pid" 2>/dev/null && running="$running $pid"; done
    [ -n "$running" ] || break
    if [ $SECONDS -ge $deadline ]; then
      echo "  still running after ${NODE_STOP_TIMEOUT:-30} s, killed:$running"
      for file in "$work"/node-*.pid; do [ -f "$file" ] && kill -KILL "$(cat "$file")" 2>/dev/null || true; done
      break
    fi
    sleep 0.1
  done
  echo "stopping nginx, PostgreSQL and Redis"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/pg/postmaster.pid" ] && "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" stop -m fast -w >/dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$work"
  echo "stopped"
}
trap stop_all INT TERM EXIT

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
      "$server" --host 127.0.0.1 --port "${node_ports[n - 1]}" --web-root "$web" --db "$database" \
        --cluster "$cluster" --node-id "node-$n" --trusted-proxy 127.0.0.1/32 \
        >>"$work/node-$n.out" 2>>"$work/node-$n.log" &
      echo $! >"$work/node-$n.pid"
      status=0
      wait $! || status=$?
      [ -e "$work/stopping" ] && echo "  node-$n exited ($status)" || sleep 0.5
    done
  ) &
  supervisors+=($!)
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
  include $work/nginx/cluster.conf;
}
CONF
# deploy/nginx-cluster.conf as it is, but for the ports (the same file on the usual ones).
sed -e "s/127\.0\.0\.1:8080\b/127.0.0.1:$proxy_port/" -e "s/127\.0\.0\.1:8081\b/127.0.0.1:${node_ports[0]}/" \
  -e "s/127\.0\.0\.1:8082\b/127.0.0.1:${node_ports[1]}/" -e "s/127\.0\.0\.1:8083\b/127.0.0.1:${node_ports[2]}/" \
  "$root/deploy/nginx-cluster.conf" >"$work/nginx/cluster.conf"
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)

cat <<TEXT
The cluster is up (folder $work):
  the page:        http://127.0.0.1:$proxy_port/  (nginx, rooms hashed over the nodes)
  nodes:           http://127.0.0.1:${node_ports[0]}/ ${node_ports[1]}/ ${node_ports[2]}/  (each: /metrics, and /api/cluster for this host only; logs node-N.log)
  Redis:           $cluster    PostgreSQL: $database
Try: kill -9 the node that runs a room (curl -s 127.0.0.1:${node_ports[0]}/api/cluster/rooms/NAME names it); its
members reconnect through nginx to the next node, which takes the room with the same endsAt.
Or restart every node in turn, each draining its rooms to the others (nodes come back by themselves here):
  bash deploy/rolling-restart.sh processes ${node_ports[*]}
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
