#!/usr/bin/env python3
"""Reads every query of the Grafana dashboard back from a running Prometheus: each must return data.

    python3 deploy/prometheus/check_dashboard.py http://127.0.0.1:9090 deploy/prometheus/grafana-dashboard.json \
        --nodes 3 [--rate-interval 10s]

Grafana's variables are replaced as Grafana would with "All" picked: $instance by .*, $__rate_interval and
$__range by the given spans. A query passes when Prometheus answers it without an error, with at least
one series, and at least one of its values is a number (not NaN: a histogram with no observation yet).
The node variable's own query (label_values) must list --nodes instances. Standard library only; one line
per query, then "N queries answered, M without data"; exit status 0 only when all answered.
"""
import argparse, json, math, sys, urllib.parse, urllib.request


def get(base, path, params):
    url = f"{base}{path}?{urllib.parse.urlencode(params, doseq=True)}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prometheus")
    parser.add_argument("dashboard")
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--rate-interval", default="10s")
    parser.add_argument("--range", default="30s")
    args = parser.parse_args()
    base = args.prometheus.rstrip("/")
    with open(args.dashboard) as f:
        dashboard = json.load(f)

    failed = answered = 0
    variable = next(v for v in dashboard["templating"]["list"] if v["name"] == "instance")
    metric = variable["definition"].split("(", 1)[1].split(",", 1)[0].strip()
    instances = get(base, "/api/v1/label/instance/values", {"match[]": metric})["data"]
    if len(instances) == args.nodes:
        print(f"ok   $instance: {variable['definition']} lists {', '.join(instances)}")
    else:
        failed += 1
        print(f"FAIL $instance: {variable['definition']} lists {instances}, not {args.nodes} nodes")

    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = (target["expr"].replace("$__rate_interval", args.rate_interval)
                    .replace("$__range", args.range).replace("$instance", ".*"))
            name = f"{panel['title']} / {target['refId']}"
            try:
                reply = get(base, "/api/v1/query", {"query": expr})
            except Exception as error:  # an HTTP 400 carries Prometheus's reason in its body
                body = getattr(error, "read", lambda: b"")().decode(errors="replace")
                failed += 1
                print(f"FAIL {name}: {error} {body}\n     {expr}")
                continue
            result = reply.get("data", {}).get("result", [])
            values = [float(series["value"][1]) for series in result]
            numbers = [v for v in values if not math.isnan(v)]
            if reply.get("status") == "success" and result and numbers:
                answered += 1
                print(f"ok   {name}: {len(result)} series, e.g. {result[0]['metric']} = {numbers[0]:g}")
            else:
                failed += 1
                print(f"FAIL {name}: {len(result)} series, values {values[:6]}\n     {expr}")
    print(f"{answered} queries answered, {failed} without data")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
