# Operating it (issue 32), sourced by deploy/test.sh once its server runs (it uses that script's check, note,
# pids, work, here, server, server_port, unused_port, free_ports, wait_for_port and install_packages):
#   - /readyz and /healthz of the server under test;
#   - deploy/prometheus: promtool on the config, the rules and their unit tests (and a broken rule caught by
#     them); then Debian's real Prometheus scraping three pomodoro-server nodes (single servers on SQLite)
#     with a member in a running room on each, the alert rules loaded, every query of the Grafana dashboard
#     read back with data, and a node killed seen as down (PomodoroNodeDown pending for it alone);
#   - deploy/kubernetes: PyPI's kubernetes-validate --strict on every manifest (and a misspelt field caught),
#     the probes' paths and port, the grace period against preStop, the liveness command against a server.
# About 11 s (measured 2026-11-28), most of it Prometheus gathering samples.

prometheus_dir="$here/prometheus"
kubernetes_dir="$here/kubernetes"

# --- readiness ------------------------------------------------------------------------------------------------
probes_answer() {
    local ready alive
    ready=$(curl -sS --max-time 5 -w '%{http_code}' "http://127.0.0.1:$server_port/readyz") || return 1
    alive=$(curl -sS --max-time 5 -w '%{http_code}' "http://127.0.0.1:$server_port/healthz") || return 1
    echo "/readyz: ${ready//$'\n'/ }; /healthz: ${alive//$'\n'/ }"
    [ "$ready" = $'ready\n200' ] && [ "$alive" = $'ok\n200' ]
}
check "the server answers /readyz 200 ready and /healthz 200 ok" probes_answer

# --- Prometheus ---------------------------------------------------------------------------------------------
install_packages prometheus || echo "could not install prometheus; the checks that need it will fail"
check "promtool check config deploy/prometheus/prometheus.yml" promtool check config "$prometheus_dir/prometheus.yml"
check "promtool check rules deploy/prometheus/alerts.yml" promtool check rules "$prometheus_dir/alerts.yml"
check "promtool test rules deploy/prometheus/alerts_test.yml (each alert fires where it should, only there)" \
    promtool test rules "$prometheus_dir/alerts_test.yml"
every_alert_is_tested() {
    local alert missing=0 count=0
    for alert in $(sed -n 's/^ *- alert: *//p' "$prometheus_dir/alerts.yml"); do
        count=$((count + 1))
        grep -q "alertname: $alert\$" "$prometheus_dir/alerts_test.yml" || { echo "$alert has no test"; missing=1; }
    done
    echo "$count alerts"
    [ $count -gt 0 ] && return $missing
}
check "every alert in alerts.yml has a unit test" every_alert_is_tested
broken_rule_is_caught() {  # the same tests against a PomodoroNodeDown that waits 5 minutes instead of 1
    mkdir -p "$work/rules-broken"
    sed 's/^        for: 1m$/        for: 5m/' "$prometheus_dir/alerts.yml" > "$work/rules-broken/alerts.yml"
    cp "$prometheus_dir/alerts_test.yml" "$work/rules-broken/"
    if cmp -s "$prometheus_dir/alerts.yml" "$work/rules-broken/alerts.yml"; then echo "nothing was changed"; return 1; fi
    ! promtool test rules "$work/rules-broken/alerts_test.yml" >/dev/null 2>&1
}
check "the unit tests fail on a PomodoroNodeDown that waits 5 minutes" broken_rule_is_caught

read -r node_a node_b node_c prometheus_port <<<"$(free_ports 4)"
mkdir -p "$work/prometheus/data"
node_c_pid=""
for port in $node_a $node_b $node_c; do
    "$server" --host 127.0.0.1 --port "$port" --db "$work/prometheus/node-$port.sqlite" --log-level warning \
        >"$work/prometheus/node-$port.out" 2>&1 &
    pids+=($!)
    node_c_pid=$!
done
# The shipped config with the test's nodes, a 1 s scrape and evaluation, and the rules by absolute path.
sed -e "s|\"127.0.0.1:8081\", \"127.0.0.1:8082\", \"127.0.0.1:8083\"|\"127.0.0.1:$node_a\", \"127.0.0.1:$node_b\", \"127.0.0.1:$node_c\"|" \
    -e 's|^  scrape_interval: 15s|  scrape_interval: 1s|' -e 's|^  evaluation_interval: 15s|  evaluation_interval: 1s|' \
    -e "s|^  - alerts.yml|  - $prometheus_dir/alerts.yml|" "$prometheus_dir/prometheus.yml" > "$work/prometheus/prometheus.yml"
prometheus_config_is_the_tests() {
    grep -q "127.0.0.1:$node_c" "$work/prometheus/prometheus.yml" && grep -q 'scrape_interval: 1s' "$work/prometheus/prometheus.yml" \
        && grep -q "$prometheus_dir/alerts.yml" "$work/prometheus/prometheus.yml" \
        && promtool check config "$work/prometheus/prometheus.yml"
}
check "the test's Prometheus config: the shipped one with the three nodes' ports and a 1 s scrape" prometheus_config_is_the_tests
prometheus --config.file="$work/prometheus/prometheus.yml" --storage.tsdb.path="$work/prometheus/data" \
    --web.listen-address="127.0.0.1:$prometheus_port" >"$work/prometheus/prometheus.log" 2>&1 &
pids+=($!)
for port in $node_a $node_b $node_c; do wait_for_port "$port" || echo "the node on $port did not start"; done
# A member with a running timer on each node, ticking while Prometheus scrapes.
for port in $node_a $node_b $node_c; do
    python3 "$here/smoke.py" "ws://127.0.0.1:$port/ws" --start --idle 10 >"$work/prometheus/member-$port.out" 2>&1 &
    pids+=($!)
done
wait_for_port "$prometheus_port" 15 || { echo "Prometheus did not start:"; tail -n 20 "$work/prometheus/prometheus.log"; }
prometheus_api() {  # PATH CURL-ARGUMENTS...: the JSON answer
    curl -sS --max-time 5 -G "http://127.0.0.1:$prometheus_port$1" "${@:2}"
}
sleep 7  # samples for rates over 5 s windows, and ticks in every node's histogram
rules_loaded() {
    prometheus_api /api/v1/rules | python3 -c '
import json, sys
rules = [r for g in json.load(sys.stdin)["data"]["groups"] for r in g["rules"]]
print(", ".join(r["name"] + " " + r["health"] for r in rules))
sys.exit(0 if len(rules) == 7 and all(r["health"] == "ok" for r in rules) else 1)'
}
check "Prometheus loaded the 7 alert rules and evaluates them without an error" rules_loaded
three_nodes_up() {
    prometheus_api /api/v1/query --data-urlencode 'query=up{job="pomodoro"}' | python3 -c '
import json, sys
result = json.load(sys.stdin)["data"]["result"]
print({r["metric"]["instance"]: r["value"][1] for r in result})
sys.exit(0 if len(result) == 3 and all(r["value"][1] == "1" for r in result) else 1)'
}
check "Prometheus scrapes three nodes, all up" three_nodes_up
ticks_seen() {
    prometheus_api /api/v1/query --data-urlencode 'query=sum by (instance) (pomodoro_tick_delay_seconds_count)' | python3 -c '
import json, sys
result = json.load(sys.stdin)["data"]["result"]
print({r["metric"]["instance"]: r["value"][1] for r in result})
sys.exit(0 if len(result) == 3 and all(float(r["value"][1]) > 0 for r in result) else 1)'
}
check "every node's ticks reached Prometheus (pomodoro_tick_delay_seconds_count > 0)" ticks_seen
dashboard_queries() {
    python3 "$prometheus_dir/check_dashboard.py" "http://127.0.0.1:$prometheus_port" \
        "$prometheus_dir/grafana-dashboard.json" --nodes 3 --rate-interval 5s --range 10s
}
check "every query of deploy/prometheus/grafana-dashboard.json returns data from this Prometheus" dashboard_queries
[ "${VERBOSE:-}" = 1 ] || note "$(dashboard_queries 2>&1 | tail -n 1)"
node_down_is_seen() {
    kill "$node_c_pid"
    local deadline=$((SECONDS + 10)) alerts
    while [ $SECONDS -lt $deadline ]; do
        alerts=$(prometheus_api /api/v1/alerts)
        if python3 -c '
import json, sys
alerts = json.loads(sys.argv[1])["data"]["alerts"]
down = [a for a in alerts if a["labels"]["alertname"] == "PomodoroNodeDown"]
sys.exit(0 if [a["labels"]["instance"] for a in down] == ["127.0.0.1:" + sys.argv[2]] and down[0]["state"] == "pending" else 1)' \
            "$alerts" "$node_c"; then
            echo "PomodoroNodeDown pending for 127.0.0.1:$node_c"
            return 0
        fi
        sleep 0.5
    done
    echo "$alerts"
    return 1
}
check "a node killed: PomodoroNodeDown pending for that node alone" node_down_is_seen

# --- Kubernetes ---------------------------------------------------------------------------------------------
if ! command -v kubernetes-validate >/dev/null; then
    python3 -m pip --version >/dev/null 2>&1 || install_packages python3-pip
    echo "installing: kubernetes-validate (pip)"
    python3 -m pip install --quiet kubernetes-validate 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages kubernetes-validate
fi
manifests=("$kubernetes_dir/configmap.yaml" "$kubernetes_dir/secret.yaml" "$kubernetes_dir/deployment.yaml"
           "$kubernetes_dir/service.yaml" "$kubernetes_dir/poddisruptionbudget.yaml" "$kubernetes_dir/ingress.yaml")
check "kubernetes-validate --strict on every manifest of deploy/kubernetes" \
    kubernetes-validate --strict --quiet "${manifests[@]}"
misspelt_field_is_caught() {
    sed 's/terminationGracePeriodSeconds:/terminationGracePeriodSecond:/' "$kubernetes_dir/deployment.yaml" \
        > "$work/misspelt-deployment.yaml"
    if cmp -s "$kubernetes_dir/deployment.yaml" "$work/misspelt-deployment.yaml"; then echo "nothing was changed"; return 1; fi
    ! kubernetes-validate --strict --quiet "$work/misspelt-deployment.yaml" >/dev/null 2>&1
}
check "kubernetes-validate --strict rejects a misspelt field (the check can fail)" misspelt_field_is_caught
kustomization_lists_every_manifest() {
    local file missing=0
    for file in "${manifests[@]}"; do
        grep -qx "  - $(basename "$file")" "$kubernetes_dir/kustomization.yaml" || { echo "$(basename "$file") not listed"; missing=1; }
    done
    return $missing
}
check "kustomization.yaml lists every manifest" kustomization_lists_every_manifest
# What the Deployment says, read with PyYAML (a dependency of kubernetes-validate).
deployment_field() {
    python3 - "$kubernetes_dir/deployment.yaml" "$kubernetes_dir/configmap.yaml" "$1" <<'PYTHON'
import sys, yaml
deployment = yaml.safe_load(open(sys.argv[1]))
config = yaml.safe_load(open(sys.argv[2]))
pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
fields = {
    "probes": "%s %s %s" % (container["readinessProbe"]["httpGet"]["path"], container["startupProbe"]["httpGet"]["path"],
                            container["livenessProbe"]["exec"]["command"][2]),
    "port": "%s %s" % (container["ports"][0]["containerPort"], config["data"]["POMODORO_PORT"]),
    "grace": "%s %s" % (pod["terminationGracePeriodSeconds"], container["lifecycle"]["preStop"]["exec"]["command"][1]),
    "liveness": container["livenessProbe"]["exec"]["command"][2],
}
print(fields[sys.argv[3]])
PYTHON
}
probes_are_readyz_and_healthz() {
    local probes
    probes=$(deployment_field probes) || return 1
    echo "$probes"
    [[ "$probes" == "/readyz /healthz "*"GET /healthz "* ]]
}
check "deployment.yaml: readiness on /readyz, start-up and liveness on /healthz" probes_are_readyz_and_healthz
port_matches() {
    local ports
    read -ra ports <<<"$(deployment_field port)"
    echo "containerPort ${ports[0]}, POMODORO_PORT ${ports[1]}"
    [ "${ports[0]}" = "${ports[1]}" ] && grep -q "127.0.0.1/${ports[0]} " <<<"$(deployment_field liveness)"
}
check "deployment.yaml: the container port, POMODORO_PORT and the liveness command's port agree" port_matches
grace_covers_prestop() {
    local grace
    read -ra grace <<<"$(deployment_field grace)"
    echo "terminationGracePeriodSeconds ${grace[0]}, preStop sleep ${grace[1]}"
    [ "${grace[0]}" -ge $((grace[1] + 10)) ]
}
check "deployment.yaml: the grace period covers preStop's wait and 10 s of shutdown" grace_covers_prestop
liveness_command_works() {
    local command
    command=$(deployment_field liveness) || return 1
    # Pointed at the server under test, then at a port where nothing listens.
    env -i PATH=/usr/bin:/bin bash -c "${command//127.0.0.1\/8080/127.0.0.1/$server_port}" \
        || { echo "failed against a serving server"; return 1; }
    if env -i PATH=/usr/bin:/bin bash -c "${command//127.0.0.1\/8080/127.0.0.1/$unused_port}" 2>/dev/null; then
        echo "passed with nothing listening"; return 1
    fi
    # A 503 from /healthz (the database down) is alive: the command accepts it.
    grep -qF '(200|503)' <<<"$command" || { echo "a 503 would restart the pod"; return 1; }
}
check "deployment.yaml: the liveness command passes against the server and fails without one" liveness_command_works
