#!/usr/bin/env bash
# Server-Sent Events read by an independent client: Python's requests (installed from PyPI when missing)
# against the real server on a free loopback port, with the real pomo making traffic.
#   bash Tests/events/run.sh path/to/pomodoro-server path/to/pomo
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/Tests/lib/common.sh"
pip_modules requests:requests
start_server "$1" --min-focus 1
python3 "$root/Tests/events/test_events.py" --base "http://127.0.0.1:$port" --pomo "$2"
