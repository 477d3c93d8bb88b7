#!/usr/bin/env python3
"""Where a server's CPU went, from a perf profile (docs/PERFORMANCE.md §7):
   perf record -e cpu-clock -F 999 -g -p PID[,PID...] -o perf.data -- sleep 10
   perf-categories.py perf.data [perf.data...]
Each sample counts once, for the first category (in the order below) that a function of its call chain
belongs to. Frame-pointer call chains stop at libc: a send(2) whose caller is unknown counts as "send(2)",
not as what sent it."""
import collections, subprocess, sys

CATEGORIES = [
    ("store writer (PostgreSQL batches)", ["PomodoroStore0B6Writer", "PomodoroPostgres"]),
    ("lease keeper", ["LeaseKeeper", "RedisLeases"]),
    ("cluster thread (registry, follows, takes)", ["NodeRegistry", "ClusterNode"]),
    ("bus subscriber thread", ["PomodoroCluster0B3BusC3run"]),
    ("bus messages on the service loop", ["0B5RoomsC5heard"]),
    ("relayed ticks", ["relayedTickDue", "sendRelayedTick"]),
    ("room timers (the owner's ticks)", ["RoomHubC10timerFired", "timersFired"]),
    ("send(2), caller cut at libc", ["__send", "sendto", "writev", "__libc_write"]),
    ("recv/read(2)", ["recvfrom", "__libc_recv", "ksys_read"]),
    ("poll/epoll/wake-ups", ["epoll_wait", "__poll", "timerfd", "eventfd", "schedule"]),
    ("malloc/free", ["malloc", "cfree", "_int_free"]),
    ("Swift runtime", ["swift_"]),
    ("json-c", ["json_"]),
]

def categorize(path):
    text = subprocess.run(["perf", "script", "-i", path, "-F", "pid,comm,ip,sym"],
                          capture_output=True, text=True, check=True).stdout
    counts, total = collections.Counter(), 0
    for sample in text.split("\n\n"):
        if not sample.strip():
            continue
        total += 1
        for name, keys in CATEGORIES:
            if any(key in sample for key in keys):
                counts[name] += 1
                break
        else:
            counts["other"] += 1
    return total, counts

for path in sys.argv[1:]:
    total, counts = categorize(path)
    print(f"{path}: {total} samples")
    for name, count in counts.most_common():
        print(f"  {count:6d} {100 * count / max(total, 1):5.1f}%  {name}")
