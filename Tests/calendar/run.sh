#!/usr/bin/env bash
# The calendar feed checked by an independent parser: installs Python's icalendar and recurring_ical_events
# from PyPI when missing, has the Swift tests write feeds and the core's own occurrences, and compares them
# (Tests/calendar/check_ics.py). Run after `swift build --build-tests`.
#   bash Tests/calendar/run.sh
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
source "$root/Tests/lib/common.sh"
pip_modules icalendar:icalendar recurring_ical_events:recurring-ical-events

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
swift="$(command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)"
POMODORO_CALENDAR_OUT="$out" "$swift" test --skip-build --filter CalendarFeedExportTests > "$out/swift.log" 2>&1 \
  || { tail -n 20 "$out/swift.log"; echo "0 passed, 1 failed"; exit 1; }
ls "$out"/*.ics >/dev/null 2>&1 || { echo "no feeds written"; echo "0 passed, 1 failed"; exit 1; }
python3 Tests/calendar/check_ics.py "$out"
