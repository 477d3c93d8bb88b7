#!/usr/bin/env python3
"""Redis commands a second by command over a cluster.sh run's window (docs/PERFORMANCE.md §7):
   commandstats.py OUT_DIR MODE-ROUND [ROOMS]
reads MODE-ROUND.commandstats.first/.last and MODE-ROUND.redis.json (the window's length) that cluster.sh
keeps with CLUSTER_OUT, and prints each command's calls a second (and per room with ROOMS, default 300)."""
import json, re, sys

def calls(path):
    out = {}
    for line in open(path):
        m = re.match(r"cmdstat_([^:]+):calls=(\d+)", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out

folder, run = sys.argv[1], sys.argv[2]
rooms = int(sys.argv[3]) if len(sys.argv) > 3 else 300
first, last = calls(f"{folder}/{run}.commandstats.first"), calls(f"{folder}/{run}.commandstats.last")
seconds = json.load(open(f"{folder}/{run}.redis.json"))["seconds"]
rates = {name: (last[name] - first.get(name, 0)) / seconds for name in last}
total = sum(rates.values())
for name, rate in sorted(rates.items(), key=lambda item: -item[1]):
    if rate > 0:
        print(f"{name:>16} {rate:9.1f}/s {rate / rooms:6.2f}/room")
print(f"{'all':>16} {total:9.1f}/s {total / rooms:6.2f}/room")
