#!/usr/bin/env python3
"""The figures of Tests/bench/cluster.sh's runs: one line a run (--line OUT MODE ROUND), or the table of
medians over the rounds, with their ranges, one column a mode (OUT "MODES")."""
import json
import os
import statistics
import sys

TITLES = {"split": "3 nodes, rooms split", "room": "3 nodes, rooms whole", "one": "1 node (--cluster)",
          "single": "1 server"}


def load(out, mode, round_):
    base = os.path.join(out, f"{mode}-{round_}")
    try:
        with open(base + ".json") as f:
            report = json.load(f)
    except (OSError, ValueError):
        return None
    try:
        with open(base + ".redis.json") as f:
            redis = json.load(f)
    except (OSError, ValueError):
        redis = {}
    return report, redis


def get(data, *path):
    for key in path:
        if data is None:
            return None
        data = data.get(key) if isinstance(data, dict) else (data[key] if isinstance(key, int) and key < len(data) else None)
    return data


def figures(report, redis):
    """Every figure of one run, by row name; None where the run has no such figure."""
    ticks = report["ticks"]
    single = report.get("nodes") is None
    owner = ticks.get("delayMs") if single else ticks.get("ownerNodeDelayMs")
    relayed = ticks.get("relayedDelayMs")
    nodes = report.get("nodes") or ([report["server"]] if report.get("server") else [])
    cpus = [n.get("cpuPercentOfCore") for n in nodes]
    commands = report.get("commands") or {}
    row = {
        "tick delay p50, all (ms)": get(ticks, "delayMs", "p50"),
        "tick delay p99, all (ms)": get(ticks, "delayMs", "p99"),
        "… members on the owner p50 (ms)": get(owner, "p50"),
        "… members on the owner p99 (ms)": get(owner, "p99"),
        "… relayed members p50 (ms)": get(relayed, "p50"),
        "… relayed members p99 (ms)": get(relayed, "p99"),
        "probe members p99 (ms)": get(ticks, "probeDelayMs", "p99"),
        "timed command on the owner p50 (ms)": get(commands, "ownerNodeLatencyMs", "p50"),
        "timed command on the owner p99 (ms)": get(commands, "ownerNodeLatencyMs", "p99"),
        "timed command forwarded p50 (ms)": get(commands, "relayedLatencyMs", "p50"),
        "timed command forwarded p99 (ms)": get(commands, "relayedLatencyMs", "p99"),
        "CPU, busiest node (% of a core)": max([c for c in cpus if c is not None], default=None),
        "CPU, least busy node (% of a core)": min([c for c in cpus if c is not None], default=None),
        "CPU, servers in all (% of a core)": report.get("nodesCPUPercentOfCore") if not single
        else get(report, "server", "cpuPercentOfCore"),
        "Redis CPU (% of a core)": redis.get("redisCPUPercentOfCore"),
        "Redis PUBLISH (/s)": redis.get("publishesPerSecond"),
        "Redis commands (/s)": redis.get("commandsPerSecond"),
        "frames delivered (/s)": get(report, "traffic", "framesPerSecond"),
        "generator CPU (% of a core)": report.get("generatorCPUPercentOfCore"),
        "machine busy (% of all CPUs)": report.get("machineBusyPercent"),
    }
    return row, nodes, redis.get("roomsOwned"), report.get("deliveryFailures") or []


def fmt(value):
    if value is None:
        return "–"
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def line(out, mode, round_):
    loaded = load(out, mode, round_)
    if loaded is None:
        print(f"round {round_}, {mode}: no report")
        return
    row, nodes, owned, failures = figures(*loaded)
    cpus = "/".join(fmt(n.get("cpuPercentOfCore")) for n in nodes)
    parts = [f"round {round_}, {mode:6}: p50 {fmt(row['tick delay p50, all (ms)'])} ms, p99 {fmt(row['tick delay p99, all (ms)'])} ms"]
    if row["… relayed members p99 (ms)"] is not None:
        parts.append(f"relayed p99 {fmt(row['… relayed members p99 (ms)'])} ms, on the owner p99 {fmt(row['… members on the owner p99 (ms)'])} ms")
    parts.append(f"command {fmt(row['timed command on the owner p50 (ms)'])}/{fmt(row['timed command forwarded p50 (ms)'])} ms (owner/forwarded p50)")
    parts.append(f"CPU {cpus}% (Redis {fmt(row['Redis CPU (% of a core)'])}%), {fmt(row['Redis PUBLISH (/s)'])} publishes/s")
    if owned:
        parts.append("rooms run " + "/".join(str(x) for x in owned))
    parts.append(f"machine {fmt(row['machine busy (% of all CPUs)'])}% busy")
    parts.append("; ".join(failures) if failures else "everything delivered")
    print(", ".join(parts))


def table(out, modes):
    columns = {}
    rounds = {}
    for mode in modes:
        runs = []
        round_ = 1
        while os.path.exists(os.path.join(out, f"{mode}-{round_}.log")):
            loaded = load(out, mode, round_)
            if loaded is not None:
                runs.append(figures(*loaded))
            round_ += 1
        columns[mode] = runs
        rounds[mode] = round_ - 1
    names = list(figures({"ticks": {}, "traffic": {}}, {})[0].keys())
    width = max(len(n) for n in names) + 2
    header = "".ljust(width) + "".join(TITLES.get(m, m).ljust(26) for m in modes)
    print(header)
    for name in names:
        cells = []
        for mode in modes:
            values = [run[0][name] for run in columns[mode] if run[0][name] is not None]
            if not values:
                cells.append("–")
            elif len(values) == 1:
                cells.append(fmt(values[0]))
            else:
                cells.append(f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})")
        print(name.ljust(width) + "".join(c.ljust(26) for c in cells))
    cells = [f"{sum(1 for run in columns[m] if not run[3])} of {rounds[m]}" for m in modes]
    print("runs with everything delivered".ljust(width) + "".join(c.ljust(26) for c in cells))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--line":
        line(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 3:
        table(sys.argv[1], sys.argv[2].split())
    else:
        sys.exit("usage: cluster-table.py OUT 'MODES' | --line OUT MODE ROUND")
