#!/usr/bin/env bash
# The calendar feed checked by an independent parser: installs Python's icalendar and recurring_ical_events
# from PyPI when missing, has the Swift tests write feeds and the core's own occurrences, and compares them
# (Tests/calendar/check_ics.py). Run after `swift build --build-tests`.
#   bash Tests/calendar/run.sh
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
sudo_cmd=""
[ "$(id -u)" = 0 ] || sudo_cmd="sudo"

if ! python3 -c 'import icalendar, recurring_ical_events' 2>/dev/null; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "installing: python3-pip"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-pip
  fi
  echo "installing: icalendar recurring-ical-events (pip)"
  python3 -m pip install --quiet icalendar recurring-ical-events 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages icalendar recurring-ical-events
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
swift="$(command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)"
POMODORO_CALENDAR_OUT="$out" "$swift" test --skip-build --filter CalendarFeedExportTests > "$out/swift.log" 2>&1 \
  || { tail -n 20 "$out/swift.log"; echo "0 passed, 1 failed"; exit 1; }
ls "$out"/*.ics >/dev/null 2>&1 || { echo "no feeds written"; echo "0 passed, 1 failed"; exit 1; }
python3 Tests/calendar/check_ics.py "$out"
