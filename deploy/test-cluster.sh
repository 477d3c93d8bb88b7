# A rolling restart through nginx, sourced by deploy/test.sh (it uses that script's check, note, pids, work,
# here, repo, server and free_ports): deploy/run-cluster.sh on free loopback ports (Redis, PostgreSQL, three
# nodes, nginx with deploy/nginx-cluster.conf), MEMBERS members joined through nginx, each coming back
# whenever its connection ends; deploy/rolling-restart.sh across the three nodes; then:
#   - no WebSocket upgrade through nginx was answered 502, and each member was back (101 and a welcome)
#     within OUTAGE_BOUND seconds of losing its connection (nginx-cluster.conf's upstream must not mark a
#     draining node's 503 as a failure: with max_fails=1 every node was out after a rolling restart and
#     members got 502 for 5-17 s);
#   - fresh upgrades through nginx right after the restart, one per room, all answered 101;
#   - run-cluster.sh's stop (SIGTERM, as Ctrl-C) waits for every node's drain before it stops PostgreSQL,
#     Redis and nginx, and removes its folder.
# About 60 s (2026-11-30, the shared 2-core machine at a load average of 25-50). Everything runs under bounds (the members 150 s, the restart 120 s, the stop 45 s) and
# deploy/test.sh's cleanup stops run-cluster.sh whatever happens.

cluster_members=12
outage_bound=5
read -r proxy_port cluster_a cluster_b cluster_c cluster_redis cluster_pg <<<"$(free_ports 6)"
mkdir -p "$work/cluster"
PROXY_PORT=$proxy_port NODE_PORTS="$cluster_a $cluster_b $cluster_c" REDIS_PORT=$cluster_redis PG_PORT=$cluster_pg \
    bash "$here/run-cluster.sh" "$server" "$repo/web" >"$work/cluster/run.out" 2>&1 &
cluster_pid=$!
pids+=("$cluster_pid")
cluster_up() {
    local deadline=$((SECONDS + 90))
    until grep -q "Ctrl-C stops everything" "$work/cluster/run.out" && wait_for_port "$proxy_port" 1; do
        kill -0 "$cluster_pid" 2>/dev/null && [ $SECONDS -lt $deadline ] || { tail -n 20 "$work/cluster/run.out"; return 1; }
        sleep 0.2
    done
}
check "deploy/run-cluster.sh on free ports: Redis, PostgreSQL, three nodes, nginx (nginx-cluster.conf)" cluster_up

# members PORT COUNT STOP-FILE: COUNT members in rooms of their own through nginx on PORT, each joining
# again whenever its connection ends, until STOP-FILE exists (150 s at most); "ready" on stderr once all have
# joined; at the end one JSON line: the answers to the upgrades by status, each member's longest time off.
members() {
    PYTHONPATH="$here" python3 - "$@" <<'PY'
import base64, json, os, socket, sys, threading, time
import smoke
port, count, stop_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
# Per member: joined once, off since when (None while joined), the longest time off.
statuses, joined, off_since, longest = {}, [False] * count, [None] * count, [0.0] * count
started = time.monotonic()

def ended(message):
    raise EOFError(message)

smoke.fail = ended  # deploy/smoke.py's frames, but a closed session is a member's to come back from

def session(index):
    """One connection: the upgrade, the join, then frames until it ends (or the stop file appears)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        room = f"roll{index}"
        sock.sendall((f"GET /ws?room={room} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            response += smoke.read_exact(sock, 1)
        status = response.split(b" ", 2)[1].decode()
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
        if status != "101":
            return
        smoke.send_frame(sock, 0x1, json.dumps({"type": "join", "room": room, "name": f"m{index}", "ref": "j"}).encode())
        welcomed = False
        while not os.path.exists(stop_file):
            message = smoke.next_message(sock, time.monotonic() + 1)  # None after a quiet second
            if message and message.get("type") == "welcome" and not welcomed:
                welcomed = True
                with lock:
                    joined[index] = True
                    if off_since[index] is not None:
                        longest[index] = max(longest[index], time.monotonic() - off_since[index])
                        off_since[index] = None

def member(index):
    while not os.path.exists(stop_file) and time.monotonic() - started < 150:
        try:
            session(index)
        except (OSError, EOFError, ValueError, IndexError):
            pass
        with lock:
            if off_since[index] is None and not os.path.exists(stop_file):
                off_since[index] = time.monotonic()
        time.sleep(0.1)

threads = [threading.Thread(target=member, args=(i,), daemon=True) for i in range(count)]
for thread in threads:
    thread.start()
while not all(joined) and time.monotonic() - started < 60:
    time.sleep(0.1)
print("ready" if all(joined) else "not all joined", file=sys.stderr, flush=True)
for thread in threads:
    thread.join(timeout=160)
ended = time.monotonic()
for index in range(count):  # a member still off when it all ended counts until then
    if off_since[index] is not None:
        longest[index] = max(longest[index], ended - off_since[index])
print(json.dumps({"statuses": statuses, "longest_off": round(max(longest), 2), "joined": sum(joined)}))
PY
}

rm -f "$work/cluster/stop"
members "$proxy_port" "$cluster_members" "$work/cluster/stop" \
    >"$work/cluster/members.json" 2>"$work/cluster/members.err" &
members_pid=$!
pids+=("$members_pid")
deadline=$((SECONDS + 60))
until grep -q "joined\|ready" "$work/cluster/members.err" 2>/dev/null || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
members_joined() { grep -qx ready "$work/cluster/members.err" || { cat "$work/cluster/members.err"; return 1; }; }
check "$cluster_members members joined through nginx, each in a room of its own" members_joined

rolling_restart() {
    READY_TIMEOUT=30 HOME_TIMEOUT=10 timeout 120 bash "$here/rolling-restart.sh" processes \
        "$cluster_a" "$cluster_b" "$cluster_c" >"$work/cluster/rolling.out" 2>&1
    local status=$?
    cat "$work/cluster/rolling.out"
    return $status
}
check "deploy/rolling-restart.sh across the three nodes, the members connected through nginx" rolling_restart
note "$(grep -h 'exited after' "$work/cluster/rolling.out" | tr -s ' ' | paste -sd ';' -)"

# Right after the restart: one fresh upgrade per room through nginx, each must be answered 101 at once.
fresh_upgrades() {
    python3 - "$proxy_port" "$cluster_members" <<'PY'
import base64, os, socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
answers = []
for index in range(count):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall((f"GET /ws?room=fresh{index} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        answers.append(sock.recv(64).split(b" ", 2)[1].decode())
print(" ".join(answers))
sys.exit(0 if answers == ["101"] * count else 1)
PY
}
check "right after the rolling restart, $cluster_members fresh upgrades through nginx (one per room) all answered 101" fresh_upgrades

touch "$work/cluster/stop"
deadline=$((SECONDS + 20))
while kill -0 "$members_pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
members_came_back() {
    local summary
    summary=$(tail -n 1 "$work/cluster/members.json")
    echo "$summary"
    python3 -c '
import json, sys
summary, bound = json.loads(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if "502" not in summary["statuses"] and summary["longest_off"] <= bound else 1)' "$summary" "$outage_bound"
}
check "during the restart no upgrade through nginx was answered 502; every member back within $outage_bound s" members_came_back
note "$(tail -n 1 "$work/cluster/members.json")"

# run-cluster.sh's stop: the nodes drain and exit before PostgreSQL, Redis and nginx are stopped.
cluster_stops_in_order() {
    kill -TERM "$cluster_pid"
    local deadline=$((SECONDS + 45)) folder
    while kill -0 "$cluster_pid" 2>/dev/null; do
        [ $SECONDS -lt $deadline ] || { echo "run-cluster.sh still running 45 s after SIGTERM"; return 1; }
        sleep 0.2
    done
    sed -n '/^stopping the nodes/,$p' "$work/cluster/run.out"
    folder=$(sed -n 's/^The cluster is up (folder \(.*\)):$/\1/p' "$work/cluster/run.out")
    [ -n "$folder" ] && [ ! -e "$folder" ] || { echo "its folder $folder is still there"; return 1; }
    sed -n '/^stopping the nodes/,/^stopping nginx/p' "$work/cluster/run.out" \
        | grep -c '^  node-[123] exited (0)$' | grep -qx 3
}
check "run-cluster.sh's SIGTERM: each node drained and exited 0 before PostgreSQL, Redis and nginx were stopped" \
    cluster_stops_in_order
