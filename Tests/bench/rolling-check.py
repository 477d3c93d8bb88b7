#!/usr/bin/env python3
"""What came of Tests/bench/rolling.sh's rounds.

  rolling-check.py --round OUT N     checks round N, prints its figures, writes OUT/rolling-N.json;
                                     exit 1 when a command was lost, the journal is wrong or a member
                                     did not come back
  rolling-check.py --summary OUT [--json]   medians over the rounds' rolling-N.json, with their ranges

A round's files in OUT: bench-N.json (pomo-bench --json), commands-N.txt (pomo-bench --commands-out:
"ROOM NAME LAST-OK LAST-SENT"), tasks-N.txt and sessions-N.txt (read from PostgreSQL after the nodes
stopped: "ROOM NAME timed K", "ROOM STARTED-MS ENDED-MS"), restart-N.txt (deploy/rolling-restart.sh's
output) and node-N-K.log (node K's JSON log lines, every start of it).
"""
import glob
import json
import os
import re
import statistics
import sys
from datetime import datetime, timezone

HANDOFF_TARGET_MS = 300
EXIT_TARGET_S = 10
MISSED_TARGET_S = 2


def read_lines(path):
    try:
        with open(path) as f:
            return [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        return []


def epoch_ms(stamp):
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp() * 1000


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


def handoffs(out, round_, until_ms):
    """Each room's hand-off during the rolling restart (released before `until_ms`; the nodes' final stop
    is not one): from its release on the draining node to the line of the node it was handed to saying
    it took the room and runs it, in ms; and the releases that node did not take, as a member's join
    brought the room back first, here or elsewhere (those hand-offs are not timed)."""
    released, taken = {}, []
    for path in sorted(glob.glob(os.path.join(out, f"node-{round_}-*.log"))):
        node = "node-" + path.rsplit("-", 1)[1].split(".")[0]
        for line in read_lines(path):
            if not line.startswith("{"):
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            message = entry.get("message")
            at = epoch_ms(entry["timestamp"])
            if message == "draining: room released for hand-off" and (until_ms is None or at <= until_ms):
                released.setdefault((entry["room"], node, entry["to"]), []).append(at)
            elif message == "took a room handed off by a draining node":
                taken.append(((entry["room"], entry["from"], node), at))
    times, took = [], set()
    for key, at in taken:
        before = [r for r in released.get(key, []) if r <= at + 1]
        if before:
            times.append(at - max(before))
            took.add((key, max(before)))
    releases = sum(len(v) for v in released.values())
    return times, releases - len(took)


def journal(out, round_, cycle_ms, restart_ended_ms, bench_ended_ms):
    """Each room's focus sessions as PostgreSQL holds them: two ending within a second of each other are
    one session twice; a gap of more than a cycle and a half between two is a session missing; and when
    the run went on for a cycle and a half after the restart, a room whose sessions stop before the
    restart ended lost the ones after it."""
    by_room = {}
    for line in read_lines(os.path.join(out, f"sessions-{round_}.txt")):
        room, _started, ended = line.split()
        by_room.setdefault(room, []).append(int(ended))
    twice, missing, rows = [], [], 0
    for room, ends in by_room.items():
        ends.sort()
        rows += len(ends)
        for a, b in zip(ends, ends[1:]):
            if b - a < 1000:
                twice.append(room)
            elif b - a > cycle_ms * 1.5:
                missing.append((room, round((b - a) / cycle_ms) - 1))
        if restart_ended_ms and bench_ended_ms and bench_ended_ms - restart_ended_ms > cycle_ms * 1.5 \
                and ends[-1] < restart_ended_ms:
            missing.append((room, 1))
    return {"rooms": len(by_room), "sessions": rows, "twice": len(twice),
            "missing": sum(n for _, n in missing), "roomsWithSessionMissing": sorted({r for r, _ in missing}),
            "roomsWithSessionTwice": sorted(set(twice))}


def commands(out, round_):
    """Every command answered ok still in effect: each sender's task, read from the store after the run,
    is its last command answered ok, or a later one it sent (applied, its answer cut off by a restart)."""
    tasks = {}
    for line in read_lines(os.path.join(out, f"tasks-{round_}.txt")):
        room, name, _word, number = line.split()
        tasks[(room, name)] = int(number)
    checked, lost, examples = 0, 0, []
    for line in read_lines(os.path.join(out, f"commands-{round_}.txt")):
        room, name, last_ok, _last_sent = line.split()
        if int(last_ok) == 0:
            continue
        checked += 1
        stored = tasks.get((room, name), 0)
        if stored < int(last_ok):
            lost += 1
            if len(examples) < 5:
                examples.append(f"{room}/{name}: ok for 'timed {last_ok}', the store has {stored or 'nothing'}")
    return {"senders": checked, "lost": lost, "examples": examples}


def restart(out, round_):
    text = "\n".join(read_lines(os.path.join(out, f"restart-{round_}.txt")))
    exits = [float(x) for x in re.findall(r"exited after ([0-9.]+) s", text)]
    ready = [float(x) for x in re.findall(r"ready again after ([0-9.]+) s", text)]
    total = re.search(r"restart_seconds ([0-9.]+)", text)
    ended = re.search(r"restart_ended_ms ([0-9]+)", text)
    bench = re.search(r"bench_ended_ms ([0-9]+)", text)
    return {"nodesRestarted": len(ready), "exitSeconds": exits, "readyAgainSeconds": ready,
            "restartSeconds": float(total.group(1)) if total else None,
            "restartEndedMs": int(ended.group(1)) if ended else None,
            "benchEndedMs": int(bench.group(1)) if bench else None}


def check_round(out, round_):
    with open(os.path.join(out, f"bench-{round_}.json")) as f:
        report = json.load(f)
    setup = report["setup"]
    cycle_ms = (setup["focusSeconds"] + setup["breakSeconds"]) * 1000
    restarts = report.get("restarts") or {}
    restarted = restart(out, round_)
    times, not_taken = handoffs(out, round_, restarted["restartEndedMs"])
    result = {
        "members": setup["members"], "rooms": setup["rooms"], "windowSeconds": setup["windowSeconds"],
        "restart": restarted,
        "longestMissedRunSeconds": restarts.get("longestMissedRunSeconds"),
        "membersMissingMoreThanTwoSeconds": restarts.get("membersMissingMoreThanTwoSeconds"),
        "membersByLongestMissedRun": restarts.get("membersByLongestMissedRun"),
        "restartsFollowed": restarts.get("followed"), "roomMovedFollowed": restarts.get("roomMovedFollowed"),
        "notBack": restarts.get("notBack"),
        "returnMs": restarts.get("returnMs"),
        "silenceBeforeCloseMs": restarts.get("silenceBeforeCloseMs"),
        "firstTickAfterReturnMs": restarts.get("firstTickAfterReturnMs"),
        "ticksDuplicated": report["ticks"]["duplicated"],
        "errorsByKind": report["errorsByKind"],
        "commands": dict(commands(out, round_), answered=(report.get("commands") or {}).get("answered"),
                         cutOff=(report.get("commands") or {}).get("cutOff")),
        "journal": journal(out, round_, cycle_ms, restarted["restartEndedMs"], restarted["benchEndedMs"]),
        "handOffMs": {"count": len(times), "takenOtherwise": not_taken,
                      "p50": percentile(times, 50), "p99": percentile(times, 99),
                      "max": max(times) if times else None},
        "machineBusyPercent": report.get("machineBusyPercent"),
    }
    with open(os.path.join(out, f"rolling-{round_}.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    r, j, c, h = result["restart"], result["journal"], result["commands"], result["handOffMs"]
    print(f"round {round_}: {r['nodesRestarted']} of 3 nodes restarted in {r['restartSeconds']} s; "
          f"SIGTERM to exit {', '.join(f'{x:.2f}' for x in r['exitSeconds'])} s; "
          f"hand-off p50 {fmt(h['p50'])} ms, p99 {fmt(h['p99'])} ms, max {fmt(h['max'])} ms ({h['count']} rooms, "
          f"{h['takenOtherwise']} taken otherwise first); longest gap {result['longestMissedRunSeconds']} s "
          f"({result['membersMissingMoreThanTwoSeconds']} members over 2 s; by longest gap {result['membersByLongestMissedRun']}); "
          f"1012 followed {result['restartsFollowed']}, 4005 {result['roomMovedFollowed']}, not back {result['notBack']}; "
          f"commands: {c['senders']} senders checked, {c['lost']} lost, {c['cutOff']} cut off; "
          f"journal: {j['sessions']} sessions in {j['rooms']} rooms, {j['twice']} twice, {j['missing']} missing; "
          f"errors {result['errorsByKind'] or 0}")
    for example in c["examples"]:
        print(f"  lost: {example}")
    for name, rooms in (("missing", j["roomsWithSessionMissing"]), ("twice", j["roomsWithSessionTwice"])):
        if rooms:
            print(f"  sessions {name} in: {', '.join(rooms[:10])}{' …' if len(rooms) > 10 else ''}")
    broken = c["lost"] > 0 or j["twice"] > 0 or j["missing"] > 0 or (result["notBack"] or 0) > 0 \
        or r["nodesRestarted"] < 3 or j["rooms"] < setup["rooms"]
    return 1 if broken else 0


def fmt(value, places=0):
    return "–" if value is None else f"{value:.{places}f}"


def summary(out, as_json):
    rounds = []
    for path in sorted(glob.glob(os.path.join(out, "rolling-*.json"))):
        with open(path) as f:
            rounds.append(json.load(f))
    if not rounds:
        print("no round to summarise")
        return 1
    rows = [
        ("rolling restart of 3 nodes (s)", [r["restart"]["restartSeconds"] for r in rounds], 1),
        ("SIGTERM to exit, slowest node (s)", [max(r["restart"]["exitSeconds"] or [None]) for r in rounds], 2),
        ("SIGTERM to exit, median node (s)", [statistics.median(r["restart"]["exitSeconds"]) if r["restart"]["exitSeconds"] else None for r in rounds], 2),
        ("hand-off p50 (ms)", [r["handOffMs"]["p50"] for r in rounds], 0),
        ("hand-off p99 (ms)", [r["handOffMs"]["p99"] for r in rounds], 0),
        ("hand-off max (ms)", [r["handOffMs"]["max"] for r in rounds], 0),
        ("rooms handed off", [r["handOffMs"]["count"] for r in rounds], 0),
        ("… taken otherwise first", [r["handOffMs"]["takenOtherwise"] for r in rounds], 0),
        ("longest gap, worst member (s)", [r["longestMissedRunSeconds"] for r in rounds], 0),
        ("members missing > 2 s in a row", [r["membersMissingMoreThanTwoSeconds"] for r in rounds], 0),
        ("closes 1012 followed", [r["restartsFollowed"] for r in rounds], 0),
        ("closes 4005 (room moved) followed", [r["roomMovedFollowed"] for r in rounds], 0),
        ("back after 1012 p50 (ms)", [(r["returnMs"] or {}).get("p50") for r in rounds], 0),
        ("back after 1012 p99 (ms)", [(r["returnMs"] or {}).get("p99") for r in rounds], 0),
        ("last tick to the 1012 p50 (ms)", [(r.get("silenceBeforeCloseMs") or {}).get("p50") for r in rounds], 0),
        ("last tick to the 1012 p99 (ms)", [(r.get("silenceBeforeCloseMs") or {}).get("p99") for r in rounds], 0),
        ("welcome to next tick p50 (ms)", [(r.get("firstTickAfterReturnMs") or {}).get("p50") for r in rounds], 0),
        ("welcome to next tick p99 (ms)", [(r.get("firstTickAfterReturnMs") or {}).get("p99") for r in rounds], 0),
        ("commands answered ok", [r["commands"]["answered"] for r in rounds], 0),
        ("commands lost", [r["commands"]["lost"] for r in rounds], 0),
        ("journal sessions", [r["journal"]["sessions"] for r in rounds], 0),
        ("journal sessions twice", [r["journal"]["twice"] for r in rounds], 0),
        ("journal sessions missing", [r["journal"]["missing"] for r in rounds], 0),
        ("machine busy (% of all CPUs)", [r["machineBusyPercent"] for r in rounds], 0),
    ]
    medians = {}
    for name, values, _ in rows:
        known = [v for v in values if v is not None]
        medians[name] = {"median": statistics.median(known) if known else None,
                         "min": min(known) if known else None, "max": max(known) if known else None,
                         "rounds": values}
    if as_json:
        print(json.dumps({"rounds": len(rounds), "figures": medians,
                          "targets": {"handOffMs": HANDOFF_TARGET_MS, "exitSeconds": EXIT_TARGET_S,
                                      "missedSecondsInARow": MISSED_TARGET_S}}, indent=1, sort_keys=True))
        return 0
    print(f"rolling restart, {rounds[0]['members']} members in {rounds[0]['rooms']} rooms, medians of {len(rounds)} rounds (range)")
    for name, _, places in rows:
        m = medians[name]
        span = "" if len(rounds) == 1 else f"  ({fmt(m['min'], places)}–{fmt(m['max'], places)})"
        print(f"  {name:<36} {fmt(m['median'], places):>8}{span}")
    worst_handoff = medians["hand-off max (ms)"]["median"]
    worst_exit = medians["SIGTERM to exit, slowest node (s)"]["median"]
    worst_gap = medians["longest gap, worst member (s)"]["median"]
    print(f"targets: hand-off under {HANDOFF_TARGET_MS} ms: {verdict(worst_handoff, HANDOFF_TARGET_MS, strict=True)}; "
          f"exit within {EXIT_TARGET_S} s: {verdict(worst_exit, EXIT_TARGET_S)}; "
          f"no member misses more than {MISSED_TARGET_S} s in a row: {verdict(worst_gap, MISSED_TARGET_S)}")
    return 0


def verdict(value, target, strict=False):
    if value is None:
        return "not measured"
    return "met" if (value < target if strict else value <= target) else "missed"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--round":
        sys.exit(check_round(sys.argv[2], sys.argv[3]))
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--summary":
        sys.exit(summary(sys.argv[2], sys.argv[3:] == ["--json"]))
    print(__doc__, file=sys.stderr)
    sys.exit(64)
