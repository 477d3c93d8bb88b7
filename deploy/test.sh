#!/usr/bin/env bash
# Tests the deploy folder with the real tools, on loopback only:
#   - the systemd unit: `systemd-analyze verify` and `security --offline`, and the hardening it must keep;
#   - the example environment and config files: the server reads them without a complaint;
#   - nginx: `nginx -t` on a config built from deploy/nginx.conf, then the server behind a real nginx with
#     TLS (a self-signed certificate): /healthz, the page, HTTP to HTTPS, /metrics kept from the public,
#     WebSocket sessions through it, clients counted by their forwarded address (and forged headers from
#     an untrusted peer ignored);
#   - Caddy (when Debian has it): `caddy validate` on deploy/Caddyfile, then WebSocket sessions and /metrics
#     through it;
#   - the Dockerfile, which cannot be built here (no Docker engine): its runtime packages against `ldd` of
#     the binary, and its HEALTHCHECK command against the running server;
#   - `make install` into staging folders;
#   - /readyz, deploy/prometheus (promtool, a real Prometheus over three nodes, the dashboard's queries) and
#     deploy/kubernetes (kubernetes-validate), in deploy/test-ops.sh;
#   - a rolling restart through nginx (deploy/run-cluster.sh on free ports, deploy/nginx-cluster.conf,
#     deploy/rolling-restart.sh, members connected through nginx) and run-cluster.sh's stop, in
#     deploy/test-cluster.sh.
# Installs what it needs through apt-get (nginx, systemd's tools, openssl, curl, caddy, prometheus) and pip
# (kubernetes-validate).
#
#   bash deploy/test.sh <folder with pomodoro-server>      (make test-deploy passes the release build's)
#
# The last line is "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
bin_dir=$(cd "${1:?usage: deploy/test.sh <folder with pomodoro-server>}" && pwd)
server="$bin_dir/pomodoro-server"
export PATH="$PATH:/usr/sbin:/sbin"
[ -x "$server" ] || { echo "no executable $server"; echo "0 passed, 1 failed"; exit 1; }

work=$(mktemp -d /tmp/pomodoro-deploy-test.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0 failed=0 skipped=0
# check NAME COMMAND...: runs the command, prints ok or FAIL with the command's output.
check() {
    local name=$1 output
    shift
    if output=$("$@" 2>&1); then
        passed=$((passed + 1))
        echo "ok   $name"
        [ -n "$output" ] && [ "${VERBOSE:-}" = 1 ] && echo "$output" | sed 's/^/     /'
    else
        failed=$((failed + 1))
        echo "FAIL $name"
        echo "$output" | tail -n 25 | sed 's/^/     /'
    fi
    return 0
}
skip() { skipped=$((skipped + 1)); echo "skip $1"; }
note() { echo "     $*"; }

# --- tools -------------------------------------------------------------------------------------------
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
install_packages() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} = 0 ] && return 0
    echo "installing: ${missing[*]}"
    # Installing nginx must not start the system's nginx on port 80: policy-rc.d says no to service starts.
    local policy=/usr/sbin/policy-rc.d made_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy" && made_policy=1
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    local status=$?
    [ -n "$made_policy" ] && $sudo rm -f "$policy"
    return $status
}
install_packages systemd nginx openssl curl redis-server postgresql || echo "could not install every tool; the checks that need one will fail"
have_caddy=""
if command -v caddy >/dev/null || { apt-cache policy caddy 2>/dev/null | grep -q 'Candidate: [0-9]' && install_packages caddy; }; then
    have_caddy=1
fi

free_ports() {  # N free loopback TCP ports
    python3 - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}
wait_for_port() {  # PORT [seconds]
    local deadline=$((SECONDS + ${2:-10}))
    while ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.1
    done
}

# --- the systemd unit ----------------------------------------------------------------------------------
unit="$here/pomodoro.service"
mkdir -p "$work/systemd"
# verify checks that ExecStart's program exists: a copy points it at the binary under test, nothing else changes.
sed "s|^ExecStart=/usr/local/bin/pomodoro-server|ExecStart=$server|" "$unit" > "$work/systemd/pomodoro.service"

unit_verifies() {
    grep -q "^ExecStart=$server\$" "$work/systemd/pomodoro.service" || { echo "ExecStart was not substituted"; return 1; }
    local output
    output=$(systemd-analyze verify "$work/systemd/pomodoro.service" 2>&1) || { echo "$output"; return 1; }
    [ -z "$output" ] || { echo "systemd-analyze verify is not silent:"; echo "$output"; return 1; }
}
check "systemd-analyze verify deploy/pomodoro.service (ExecStart pointed at the binary under test)" unit_verifies

unit_exposure() {
    local output level
    output=$(systemd-analyze security --offline=true "$work/systemd/pomodoro.service" 2>&1)
    level=$(echo "$output" | sed -n 's/.*Overall exposure level for pomodoro.service: \([0-9.]*\).*/\1/p')
    [ -n "$level" ] || { echo "$output" | tail -n 5; return 1; }
    echo "exposure $level"
    python3 -c "import sys; sys.exit(0 if float('$level') <= 2.0 else 1)" || { echo "exposure $level > 2.0"; return 1; }
}
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
    check "systemd-analyze security --offline: exposure at most 2.0 ('OK')" unit_exposure
    note "$(systemd-analyze security --offline=true "$work/systemd/pomodoro.service" 2>&1 | grep 'Overall exposure')"
else
    skip "systemd-analyze security --offline (this systemd is older than 250)"
fi

unit_keeps_its_hardening() {
    local line missing=0
    for line in "DynamicUser=yes" "StateDirectory=pomodoro" "ProtectSystem=strict" "ProtectHome=yes" \
                "NoNewPrivileges=yes" "PrivateTmp=yes" "PrivateDevices=yes" \
                "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX" "CapabilityBoundingSet=" \
                "SystemCallFilter=@system-service" "MemoryDenyWriteExecute=yes" "Restart=on-failure" \
                "RestartPreventExitStatus=78" "LimitNOFILE=65536" "EnvironmentFile=-/etc/pomodoro/pomodoro.env" \
                "ExecStart=/usr/local/bin/pomodoro-server" "Environment=POMODORO_WEB_ROOT=/usr/local/share/pomodoro/web"; do
        grep -qxF "$line" "$unit" || { echo "missing: $line"; missing=1; }
    done
    return $missing
}
check "the unit keeps its user, state directory, restart policy and hardening" unit_keeps_its_hardening

# --- the example settings --------------------------------------------------------------------------------
env_file_reads_cleanly() {
    local output
    # As systemd would: the unit's Environment= lines, then the EnvironmentFile.
    output=$(env -i POMODORO_HOST=127.0.0.1 POMODORO_WEB_ROOT=/usr/local/share/pomodoro/web \
             $(grep -v '^#' "$here/pomodoro.env" | xargs) "$server" --print-config) || { echo "$output"; return 1; }
    echo "$output" | grep -q '^# warning' && { echo "$output" | grep '^# warning'; return 1; }
    echo "$output" | grep -qx 'trusted-proxy = 127.0.0.1/32, ::1/128 *# from POMODORO_TRUSTED_PROXY' \
        || { echo "$output"; return 1; }
    echo "$output" | grep -qx 'max-connections-per-address = 64 *# default' || { echo "$output"; return 1; }
}
check "deploy/pomodoro.env: every variable is a setting, and --print-config shows it" env_file_reads_cleanly

config_file_reads_cleanly() {
    local output
    output=$(env -i "$server" --print-config --config "$here/pomodoro.conf") || { echo "$output"; return 1; }
    echo "$output" | grep -q "^ping-after = 30 *# from $here/pomodoro.conf:" || { echo "$output"; return 1; }
}
check "deploy/pomodoro.conf reads without an error" config_file_reads_cleanly

# --- the server, as the unit runs it, on loopback ---------------------------------------------------------
read -r http_port tls_port caddy_port caddy_admin_port unused_port <<<"$(free_ports 5)"
read_timeout=3  # the proxies' read timeout in this test: longer than --ping-after 1, shorter than the idle test
per_address=2   # --max-connections-per-address here: small enough to reach; the other sessions come one at a time
mkdir -p "$work/server"
# The example environment file, as systemd passes it; options win over it (port 0 picks a free port).
env $(grep -v '^#' "$here/pomodoro.env" | xargs) POMODORO_LOG_FORMAT=json \
    "$server" --port 0 --web-root "$repo/web" --db "$work/server/pomodoro.sqlite" --ping-after 1 --hang-up-after 4 \
    --max-connections-per-address "$per_address" \
    >"$work/server/stdout" 2>"$work/server/stderr" &
pids+=($!)
server_port=""
for _ in $(seq 100); do
    server_port=$(sed -n 's|^pomodoro-server listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$work/server/stdout" 2>/dev/null)
    [ -n "$server_port" ] && break
    sleep 0.1
done
if [ -z "$server_port" ]; then
    echo "the server did not start:"; cat "$work/server/stdout" "$work/server/stderr"
    echo "$passed passed, $((failed + 1)) failed"
    exit 1
fi
echo "     server on 127.0.0.1:$server_port ($server)"

json_logs() {
    python3 - "$work/server/stderr" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objects = [json.loads(line) for line in lines if line.startswith("{")]
others = [line for line in lines if not line.startswith("{")]
assert any(o["message"] == "listening" and o["level"] == "info" and o["port"] and "timestamp" in o for o in objects), lines
for o in objects:
    assert list(o)[:4] == ["timestamp", "level", "label", "message"], o
if others:
    print("lines written past the logger (libwebsockets, libdispatch):", *others, sep="\n  ")
EOF
}
check "--log-format json writes one JSON object per line" json_logs
past_logger=$(json_logs 2>&1 | head -n 4)
[ -n "$past_logger" ] && note "$past_logger"

# --- the container image's pieces -------------------------------------------------------------------------
dockerfile="$here/Dockerfile"
# The packages the runtime stage's `apt-get install` brings, dependencies included, as this machine's dpkg
# knows them: each package named and what it depends on, recursively.
runtime_closure() {
    local queue=("$@") seen=" " package deps
    while [ ${#queue[@]} -gt 0 ]; do
        package=${queue[0]}; queue=("${queue[@]:1}")
        case "$seen" in *" $package "*) continue ;; esac
        seen="$seen$package "
        deps=$(dpkg-query -W -f='${Depends},${Pre-Depends}' "$package" 2>/dev/null) || continue
        for dep in $(tr ',' '\n' <<<"$deps" | sed 's/|.*//; s/(.*)//; s/:any//' | tr -d ' '); do
            [ -n "$dep" ] && queue+=("$dep")
        done
    done
    echo "$seen"
}
runtime_packages_cover_ldd() {
    local runtime lib path package missing=0
    # Every word of the runtime stage that names a package (the rest, FROM, apt-get and so on, name none).
    runtime=$(runtime_closure $(sed -n '/^FROM debian:bookworm-slim/,$p' "$dockerfile" | tr '\\\n' '  '))
    grep -q -- '--static-swift-stdlib' "$dockerfile" || { echo "the build stage does not link the Swift runtime in"; return 1; }
    while read -r lib path; do
        [ "$path" = "not" ] && { echo "$lib: not found"; missing=1; continue; }
        package=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "$path" 2>/dev/null)
        package=${package%%:*}
        if [ -z "$package" ]; then
            echo "$lib ($path) is not from a Debian package: the runtime image would not have it"; missing=1
        elif [ "$package" = libc6 ]; then
            echo "$lib: libc6 (in every Debian image)"
        elif grep -qw -- "$package" <<<"$runtime"; then
            echo "$lib: $package"
        else
            echo "$lib: $package is not installed by the runtime stage"; missing=1
        fi
    done < <(ldd "$server" | awk '$2 == "=>" { print $1, $3 }')
    return $missing
}
check "Dockerfile: the runtime stage installs the package of every library ldd lists" runtime_packages_cover_ldd
[ "${VERBOSE:-}" = 1 ] || note "$(runtime_packages_cover_ldd 2>&1 | tr '\n' ';' | sed 's/;$//; s/;/; /g')"

healthcheck_command() {  # the HEALTHCHECK's CMD, one argument per line
    python3 - "$dockerfile" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
line = next(l for l in text.splitlines() if l.startswith("HEALTHCHECK"))
for argument in json.loads(re.search(r"\bCMD\s+(\[.*\])", line).group(1)):
    print(argument)
EOF
}
healthcheck_works() {
    local -a command
    mapfile -t command < <(healthcheck_command)
    [ ${#command[@]} -gt 0 ] || { echo "no HEALTHCHECK CMD"; return 1; }
    env -i PATH=/usr/bin:/bin POMODORO_PORT="$server_port" "${command[@]}" || { echo "unhealthy while serving"; return 1; }
    if env -i PATH=/usr/bin:/bin POMODORO_PORT="$unused_port" "${command[@]}" 2>/dev/null; then
        echo "healthy with nothing listening"; return 1
    fi
}
check "Dockerfile: the HEALTHCHECK command passes against the server and fails without one" healthcheck_works
check "compose.yaml builds from deploy/Dockerfile and keeps a data volume" \
    grep -q -e 'dockerfile: deploy/Dockerfile' -e 'pomodoro-data:/var/lib/pomodoro' "$here/compose.yaml"

# --- nginx in front, with TLS -----------------------------------------------------------------------------
mkdir -p "$work/nginx" "$work/tls" "$work/acme"
for d in client_body proxy fastcgi uwsgi scgi; do mkdir -p "$work/nginx/$d" && chmod 1777 "$work/nginx/$d"; done
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=focus.example.com \
    -addext subjectAltName=DNS:focus.example.com -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" 2>/dev/null
# deploy/nginx.conf with loopback ports, the test's certificate and folders, and a shorter read timeout.
sed -e "s|listen 80;|listen 127.0.0.1:$http_port;|" \
    -e '/listen \[::\]:/d' \
    -e "s|listen 443 ssl http2;|listen 127.0.0.1:$tls_port ssl http2;|" \
    -e "s|server 127.0.0.1:8080;|server 127.0.0.1:$server_port;|" \
    -e "s|/etc/letsencrypt/live/focus.example.com/fullchain.pem|$work/tls/cert.pem|" \
    -e "s|/etc/letsencrypt/live/focus.example.com/privkey.pem|$work/tls/key.pem|" \
    -e "s|root /var/www/html;|root $work/acme;|" \
    -e "s|proxy_read_timeout 120s;|proxy_read_timeout ${read_timeout}s;|" \
    -e "s|proxy_send_timeout 120s;|proxy_send_timeout ${read_timeout}s;|" \
    "$here/nginx.conf" > "$work/nginx/site.conf"
cat > "$work/nginx/nginx.conf" <<EOF
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
worker_processes 1;
events { worker_connections 256; }
http {
    access_log $work/nginx/access.log;
    client_body_temp_path $work/nginx/client_body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    include $work/nginx/site.conf;
}
EOF
nginx_config_is_substituted() {
    ! grep -nE 'listen (80|443)|\[::\]|:8080;|letsencrypt|/var/www|120s' "$work/nginx/site.conf" | grep -vE '^[0-9]+: *#' 
}
check "the test's nginx config replaced every production address and path" nginx_config_is_substituted
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
check "nginx -t on deploy/nginx.conf (loopback ports, a temporary folder)" \
    "$nginx_bin" -t -q -c "$work/nginx/nginx.conf" -p "$work/nginx" -e "$work/nginx/error.log"
# deploy/nginx-cluster.conf (make run-cluster) in the same main config: loopback ports already.
sed "s|include $work/nginx/site.conf;|include $here/nginx-cluster.conf;|" "$work/nginx/nginx.conf" \
    > "$work/nginx/cluster-main.conf"
check "nginx -t on deploy/nginx-cluster.conf" \
    "$nginx_bin" -t -q -c "$work/nginx/cluster-main.conf" -p "$work/nginx" -e "$work/nginx/error.log"

timeout_outlasts_pings() {
    local timeout ping
    timeout=$(sed -n 's/^ *proxy_read_timeout \([0-9]*\)s;.*/\1/p' "$here/nginx.conf")
    ping=$(env -i "$server" --print-config | sed -n 's/^ping-after = \([0-9]*\).*/\1/p')
    echo "proxy_read_timeout ${timeout}s, ping-after ${ping}s"
    [ -n "$timeout" ] && [ -n "$ping" ] && [ "$timeout" -gt "$ping" ]
}
check "deploy/nginx.conf's proxy_read_timeout is longer than the server's default --ping-after" timeout_outlasts_pings

"$nginx_bin" -c "$work/nginx/nginx.conf" -p "$work/nginx" -e "$work/nginx/error.log" -g 'daemon off;' \
    >"$work/nginx/stdout" 2>&1 &
pids+=($!)
wait_for_port "$tls_port" || { echo "nginx did not start:"; cat "$work/nginx/stdout" "$work/nginx/error.log"; }

site="focus.example.com:$tls_port"
tls_curl() { curl -sS --max-time 5 --cacert "$work/tls/cert.pem" --resolve "$site:127.0.0.1" "$@"; }
check "GET https://focus.example.com/healthz through nginx answers ok" \
    bash -c "[ \"\$(curl -sS --max-time 5 --cacert '$work/tls/cert.pem' --resolve '$site:127.0.0.1' https://$site/healthz)\" = ok ]"
page_through_nginx() {
    local page  # not `curl | grep -q`: grep's early exit fails curl's write, and pipefail the check
    page=$(tls_curl "https://$site/r/design-team") && grep -q '<title>Pomodoro' <<<"$page"
}
check "the page (an invite link) comes through nginx" page_through_nginx
redirect_to_https() {
    local answer
    answer=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code} %{redirect_url}' -H 'Host: focus.example.com' \
             "http://127.0.0.1:$http_port/r/design-team")
    echo "$answer"
    [ "$answer" = "301 https://focus.example.com/r/design-team" ]
}
check "plain HTTP is redirected to HTTPS" redirect_to_https

# metrics_kept_from_the_public BASE-URL [curl options...]: the server serves /metrics on the host, and the
# proxy at BASE-URL answers 404 for it, however the path is spelled.
metrics_kept_from_the_public() {
    local base=$1 direct path status
    shift
    direct=$(curl -sS --max-time 5 "http://127.0.0.1:$server_port/metrics") || return 1
    grep -q '^pomodoro_connections ' <<<"$direct" || { echo "the server itself does not serve /metrics"; return 1; }
    for path in /metrics '/metrics?x=1' //metrics /./metrics /r/../metrics /%6detrics /Metrics; do
        status=$(curl -sS --max-time 5 --path-as-is -o /dev/null -w '%{http_code}' "$@" "$base$path") || return 1
        echo "$path: $status"
        [ "$status" = 404 ] || return 1
    done
}
check "/metrics is served on the host and answers 404 through nginx" \
    metrics_kept_from_the_public "https://$site" --cacert "$work/tls/cert.pem" --resolve "$site:127.0.0.1"

smoke() { python3 "$here/smoke.py" "$@"; }
check "a WebSocket session through nginx (wss, the certificate verified, the page's Origin): join, welcome" \
    smoke "wss://$site/ws" --connect "127.0.0.1:$tls_port" --cafile "$work/tls/cert.pem" --origin "https://$site"
check "a foreign Origin through nginx is refused with 403 (nginx passes Origin and Host through)" \
    smoke "wss://$site/ws" --connect "127.0.0.1:$tls_port" --cafile "$work/tls/cert.pem" \
    --origin https://elsewhere.example --expect-status 403
check "an idle session outlives nginx's read timeout (${read_timeout} s) on the server's pings" \
    smoke "wss://$site/ws" --connect "127.0.0.1:$tls_port" --cafile "$work/tls/cert.pem" \
    --origin "https://$site" --idle $((read_timeout * 2))
# sessions MODE PORT SOURCE:COUNT... [-- HEADER]: opens the sessions in order, from each SOURCE (a loopback
# address of its own) COUNT of them, all held open at once, and prints one word for each: "admitted" (it
# answers a ping) or "refused" (the server closed it with 1008). MODE tls goes through nginx, plain to the
# server. A HEADER line is sent with every handshake.
sessions() {
    python3 - "$work/tls/cert.pem" "$site" "$@" <<'PY'
import base64, json, os, socket, ssl, struct, sys
cafile, site, mode, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rest = sys.argv[5:]
header = rest[rest.index("--") + 1] if "--" in rest else ""
groups = [(g.split(":")[0], int(g.split(":")[1])) for g in (rest[:rest.index("--")] if "--" in rest else rest)]

def frame(opcode, payload):
    mask = os.urandom(4)
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))

def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("the connection closed")
        data += chunk
    return data

def open_session(source):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    if mode == "tls":
        sock = ssl.create_default_context(cafile=cafile).wrap_socket(sock, server_hostname=site.split(":")[0])
    host = site if mode == "tls" else f"127.0.0.1:{port}"
    request = ["GET /ws HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
               f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}", "Sec-WebSocket-Version: 13"]
    sock.sendall(("\r\n".join(request + ([header] if header else [])) + "\r\n\r\n").encode())
    response = b""
    while b"\r\n\r\n" not in response:
        response += read_exact(sock, 1)
    if not response.startswith(b"HTTP/1.1 101"):
        raise SystemExit(f"the upgrade was refused: {response.splitlines()[0]!r}")
    return sock

def verdict(sock):
    sock.sendall(frame(1, json.dumps({"type": "ping", "ref": "p"}).encode()))
    try:
        while True:
            first, second = read_exact(sock, 2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack("!H", read_exact(sock, 2))[0]
            payload = read_exact(sock, length)
            if first & 0x0F == 0x8:
                return "refused" if payload[:2] == struct.pack("!H", 1008) else f"closed({payload[:2].hex()})"
            if first & 0x0F == 0x1 and json.loads(payload).get("type") == "pong":
                return "admitted"
    except (EOFError, OSError) as error:
        return f"ended({error})"

held = [open_session(source) for source, count in groups for _ in range(count)]
print(" ".join(verdict(sock) for sock in held))
PY
}
admitted_then_refused() { printf 'admitted %.0s' $(seq "$per_address"); echo -n refused; }

# Through nginx, which appends the address each client connected from to X-Forwarded-For: the server, which
# trusts nginx's 127.0.0.1 only, counts 127.0.0.2 and 127.0.0.3 apart.
clients_counted_apart() {
    local output
    output=$(sessions tls "$tls_port" "127.0.0.2:$((per_address + 1))" 127.0.0.3:1) || { echo "$output"; return 1; }
    echo "127.0.0.2 x$((per_address + 1)), then 127.0.0.3: $output"
    [ "$output" = "$(admitted_then_refused) admitted" ]
}
check "through nginx each client counts by its own address: one is refused past --max-connections-per-address $per_address, another still gets in" \
    clients_counted_apart
# Straight to the server from 127.0.0.4, which is no trusted proxy: a forged X-Forwarded-For is ignored.
forged_header_changes_nothing() {
    local output
    output=$(sessions plain "$server_port" "127.0.0.4:$((per_address + 1))" -- "X-Forwarded-For: 198.51.100.7") \
        || { echo "$output"; return 1; }
    echo "127.0.0.4 x$((per_address + 1)) claiming 198.51.100.7: $output"
    [ "$output" = "$(admitted_then_refused)" ]
}
check "an X-Forwarded-For sent straight to the server by a peer that is no trusted proxy changes nothing" \
    forged_header_changes_nothing
if [ -x "$bin_dir/pomo" ]; then note "pomo is built too ($bin_dir/pomo); the sessions above use deploy/smoke.py"; fi

# --- Caddy in front -----------------------------------------------------------------------------------------
if [ -n "$have_caddy" ]; then
    mkdir -p "$work/caddy"
    caddy_env=(env HOME="$work/caddy" XDG_DATA_HOME="$work/caddy/data" XDG_CONFIG_HOME="$work/caddy/config")
    check "caddy validate deploy/Caddyfile (as shipped, for focus.example.com)" \
        "${caddy_env[@]}" caddy validate --config "$here/Caddyfile" --adapter caddyfile
    # The same file, unchanged, with plain HTTP on loopback through its environment variables.
    "${caddy_env[@]}" SITE_ADDRESS="http://127.0.0.1:$caddy_port" UPSTREAM="127.0.0.1:$server_port" \
        CADDY_ADMIN="127.0.0.1:$caddy_admin_port" caddy run --config "$here/Caddyfile" --adapter caddyfile \
        >"$work/caddy/log" 2>&1 &
    pids+=($!)
    if wait_for_port "$caddy_port" 15; then
        check "a WebSocket session through Caddy: join, welcome" \
            smoke "ws://127.0.0.1:$caddy_port/ws" --origin "http://127.0.0.1:$caddy_port"
        check "/metrics is served on the host and answers 404 through Caddy" \
            metrics_kept_from_the_public "http://127.0.0.1:$caddy_port"
        check "a foreign Origin through Caddy is refused with 403" \
            smoke "ws://127.0.0.1:$caddy_port/ws" --origin https://elsewhere.example --expect-status 403
        check "an idle session stays open through Caddy" \
            smoke "ws://127.0.0.1:$caddy_port/ws" --origin "http://127.0.0.1:$caddy_port" --idle $((read_timeout * 2))
    else
        check "Caddy starts with deploy/Caddyfile" bash -c "cat '$work/caddy/log'; false"
    fi
else
    skip "Caddy: Debian offers no caddy package here (apt-cache policy caddy)"
fi

# --- readiness, Prometheus, Kubernetes (deploy/test-ops.sh) ------------------------------------------------
# shellcheck source=deploy/test-ops.sh
source "$here/test-ops.sh"

# --- a rolling restart through nginx (deploy/test-cluster.sh) ---------------------------------------------------
# shellcheck source=deploy/test-cluster.sh
source "$here/test-cluster.sh"

# --- make install ---------------------------------------------------------------------------------------------
installs_into() {  # PREFIX
    local stage="$work/stage$1" prefix=$1 output
    make -C "$repo" --no-print-directory -s install DESTDIR="$stage" PREFIX="$prefix" >"$work/install.log" 2>&1 \
        || { cat "$work/install.log"; return 1; }
    for file in bin/pomodoro-server share/pomodoro/web/index.html share/doc/pomodoro/deploy.md \
                lib/systemd/system/pomodoro.service; do
        [ -e "$stage$prefix/$file" ] || { echo "missing $prefix/$file"; return 1; }
    done
    if [ -x "$bin_dir/pomo" ] && [ ! -x "$stage$prefix/bin/pomo" ]; then echo "pomo was built but not installed"; return 1; fi
    grep -qx "ExecStart=$prefix/bin/pomodoro-server" "$stage$prefix/lib/systemd/system/pomodoro.service" \
        && grep -qx "Environment=POMODORO_WEB_ROOT=$prefix/share/pomodoro/web" "$stage$prefix/lib/systemd/system/pomodoro.service" \
        || { echo "the installed unit does not name $prefix"; return 1; }
    # Run from the install, outside a checkout, it finds its web files without --web-root.
    output=$(cd "$work" && env -i "$stage$prefix/bin/pomodoro-server" --print-config) || return 1
    echo "$output" | grep -q "^web-root = $stage$prefix/share/pomodoro/web " || { echo "$output" | grep web-root; return 1; }
}
check "make install DESTDIR=... (PREFIX /usr/local): binaries, web files, unit; the web root is found" installs_into /usr/local
check "make install PREFIX=/opt/pomodoro rewrites the unit's paths" installs_into /opt/pomodoro

echo
if [ $skipped -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ $failed = 0 ]
