"""The calendar feed read by an independent parser.

Python's icalendar parses the feeds the server's core writes and recurring_ical_events expands them; every
occurrence in the 60 days after the feed was written (UID, start, duration) must be one the core itself
computes, and the reverse. The feeds cross daylight-saving changes in both directions, with times in the
spring gap and in the repeated autumn hour. Lines must end in CRLF and be at most 75 octets.

    python3 Tests/calendar/check_ics.py FOLDER   (FOLDER holds NAME.ics and NAME.expected)
"""
import datetime
import pathlib
import sys

import icalendar
import recurring_ical_events


def occurrences(feed: bytes, start: int, end: int) -> list[str]:
    calendar = icalendar.Calendar.from_ical(feed)
    begin = datetime.datetime.fromtimestamp(start, datetime.timezone.utc)
    # The core's window includes its end; recurring_ical_events' does not.
    until = datetime.datetime.fromtimestamp(end + 1, datetime.timezone.utc)
    found = []
    for event in recurring_ical_events.of(calendar).between(begin, until):
        at = event["DTSTART"].dt
        length = event["DTEND"].dt - at if "DTEND" in event else event["DURATION"].dt
        found.append(f"{event['UID']} {int(at.timestamp())} {int(length.total_seconds())}")
    return sorted(found)


def lines_are_well_formed(feed: bytes) -> list[str]:
    problems = []
    if not feed.endswith(b"\r\n"):
        problems.append("the feed does not end in CRLF")
    for number, line in enumerate(feed.split(b"\r\n")[:-1], start=1):
        if b"\n" in line or b"\r" in line:
            problems.append(f"line {number} has a bare line break")
        if len(line) > 75:
            problems.append(f"line {number} is {len(line)} octets")
    return problems


def main(folder: pathlib.Path) -> int:
    passed = failed = 0
    for expected_file in sorted(folder.glob("*.expected")):
        name = expected_file.stem
        feed = (folder / f"{name}.ics").read_bytes()
        header, *expected = expected_file.read_text().splitlines()
        start, end = (int(x) for x in header.split())
        problems = lines_are_well_formed(feed)
        found = occurrences(feed, start, end)
        if found != sorted(expected):
            missing = sorted(set(expected) - set(found))
            extra = sorted(set(found) - set(expected))
            problems.append(f"occurrences differ: the parser lacks {missing[:5]}, has extra {extra[:5]}")
        if problems:
            failed += 1
            print(f"not ok {name}: " + "; ".join(problems))
        else:
            passed += 1
            print(f"ok {name}: {len(found)} occurrences agree, every line CRLF and at most 75 octets")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
