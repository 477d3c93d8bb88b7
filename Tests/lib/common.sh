# Sourced by the scripts that check the server with independent Python clients (Tests/api, Tests/events,
# Tests/calendar, Tests/browser run.sh):
#   pip_modules MODULE:PACKAGE...   installs from PyPI each package whose module Python cannot import (pip
#                                   itself from Debian first when missing);
#   start_server SERVER [OPTION...] starts SERVER on a free loopback port with a fresh SQLite store in a
#                                   temporary folder, sets $port once it listens (30 s at most), and stops
#                                   it and removes the folder when the calling script exits.

pip_modules() {
  local module
  for module in "$@"; do
    python3 -c "import ${module%%:*}" 2>/dev/null && continue
    if ! python3 -m pip --version >/dev/null 2>&1; then
      echo "installing: python3-pip"
      local sudo_cmd=""
      [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
      $sudo_cmd apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-pip
    fi
    echo "installing: ${module#*:} (pip)"
    python3 -m pip install --quiet "${module#*:}" 2>/dev/null \
      || python3 -m pip install --quiet --break-system-packages "${module#*:}"
  done
}

start_server() {
  local server="$1"
  shift
  server_dir="$(mktemp -d)"
  "$server" --port 0 --host 127.0.0.1 --db "$server_dir/pomodoro.sqlite" "$@" > "$server_dir/server.log" 2>&1 &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; rm -rf "$server_dir"' EXIT
  port=""
  for _ in $(seq 1 600); do
    port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p' "$server_dir/server.log" | head -n 1)"
    [ -n "$port" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "the server did not start:"
  cat "$server_dir/server.log"
  return 1
}
