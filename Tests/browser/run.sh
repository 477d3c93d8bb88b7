#!/usr/bin/env bash
# The browser tests: installs what is missing (Debian's chromium, chromium-driver and a CJK font, Python's selenium
# and axe-selenium-python),
# starts the real server on a free loopback port, runs Tests/browser/test_room.py, and stops the server.
#   bash Tests/browser/run.sh [path/to/pomodoro-server [--only WORDS]]
# Without an argument the debug build is used (built first when missing).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="$root/test-output/browser"
mkdir -p "$out"
sudo_cmd=""
[ "$(id -u)" = 0 ] || sudo_cmd="sudo"

# Chromium and its driver from Debian, and a font with Chinese and Korean glyphs for the screenshots of
# those pages; apt-get update runs only when something must be installed.
missing=""
for package in chromium chromium-driver fonts-wqy-zenhei; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq $missing
fi

# Selenium and axe-core (PyPI's axe-selenium-python bundles axe.min.js) from PyPI, each only when it is not
# importable (Debian's own Python needs pip from apt first, and --break-system-packages).
source "$root/Tests/lib/common.sh"
pip_modules selenium:selenium axe_selenium_python:axe-selenium-python

# The server binary: the argument, else the debug build.
server="${1:-}"
if [ -z "$server" ]; then
  swift="$(command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)"
  server="$("$swift" build --show-bin-path)/pomodoro-server"
  [ -x "$server" ] || "$swift" build --product pomodoro-server
fi
[ -x "$server" ] || { echo "no server binary at $server"; echo "0 passed, 1 failed"; exit 1; }

# Port 0: the server picks a free port and prints it.
log="$out/server.log"
: > "$log"
# Every server this run starts keeps its rooms in a database of its own, not the checkout's ./data.
export POMODORO_DB="$(mktemp -d)/pomodoro.sqlite"
# ... and lets rooms run focus phases of a few seconds.
export POMODORO_MIN_FOCUS=1
"$server" --port 0 --host 127.0.0.1 --web-root web > "$log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true' EXIT

port=""
for _ in $(seq 1 200); do
  port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p' "$log" | head -n 1)"
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.05
done
if [ -z "$port" ]; then
  echo "the server did not start:"; cat "$log"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "server: $server on 127.0.0.1:$port"

python3 "$root/Tests/browser/test_room.py" --base "http://127.0.0.1:$port" --server-bin "$server" --out "$out" "${@:2}"
