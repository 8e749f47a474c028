#!/usr/bin/env bash
# Checks what deploy/ ships for Prometheus and Grafana, first on its own (promtool), then against
# a live manager: a throwaway manager with the demo catalog and two demo nodes, some runs started
# by hand, and a Prometheus of its own scraping it with the shipped alert rules; then
# deploy/tests/prometheus_check.py runs every dashboard query and looks at every alert.
# Expects target/debug/agent-manager and target/debug/demo-node built (scripts/run.sh builds
# both). Leaves nothing behind: processes, temporary files and broker names go on exit.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$ROOT"

PROM_DIR="$ROOT/deploy/prometheus"
DASHBOARD="$ROOT/deploy/grafana/agent-manager.json"
# How long the live checks may take to see every series (a histogram appears with its first
# observation: the first run that ends).
CHECK_TIMEOUT="${AM_PROMETHEUS_CHECK_TIMEOUT:-90}"

command -v promtool >/dev/null || apt_install prometheus
command -v python3 >/dev/null || apt_install python3
command -v curl >/dev/null || apt_install curl

log "promtool: the alert rules and their unit tests"
promtool check rules "$PROM_DIR/alerts.yml"
(cd "$PROM_DIR" && promtool test rules alerts.test.yml)

# check config also opens the files the configuration names (the rules, the token file, both
# relative to it), so it runs on a copy beside a stand-in token.
CONFIG_CHECK="$(mktemp -d)"
cp "$PROM_DIR/prometheus.yml" "$PROM_DIR/alerts.yml" "$CONFIG_CHECK/"
echo "amt_stand-in" >"$CONFIG_CHECK/agent-manager.token"
log "promtool: the example configuration"
status=0
promtool check config "$CONFIG_CHECK/prometheus.yml" || status=$?
rm -rf "$CONFIG_CHECK"
[ "$status" -eq 0 ] || exit "$status"

for bin in agent-manager demo-node; do
  if [ ! -x "$ROOT/target/debug/$bin" ]; then
    echo "target/debug/$bin is not built: cargo build ${HOST_FEATURES[*]} --package server --bin agent-manager --package agent-client --features agent-client/demo --bin demo-node" >&2
    exit 1
  fi
done
ensure_rabbitmq

throwaway_manager_env prometheus
PIDS=()
MANAGER=""
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$MANAGER" ]; then
    leave_the_broker_clean "$BIN" "$PORT"
    kill "$MANAGER" 2>/dev/null || true
    wait "$MANAGER" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# A bounded wait that names what it waited for, so a hang reads as the step that failed.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "gave up after ${seconds}s waiting for $what" >&2
      return 1
    fi
    sleep 0.5
  done
}

# The command line logs every migration it checks: kept out of the way unless a command fails.
cli() {
  "$BIN" "$@" 2>>"$WORK/cli.log" || {
    echo "agent-manager $* failed:" >&2
    cat "$WORK/cli.log" >&2
    return 1
  }
}

log "a throwaway manager with the demo catalog on port $PORT"
cli migrate >/dev/null
cli catalog import "$ROOT/demo/catalog.json" >/dev/null
"$BIN" serve >"$LOG" 2>&1 &
MANAGER=$!
wait_healthy "$PORT" "$LOG"
# After the start, which creates the admin. The scraper gets the least role, as
# docs/operations.md advises; the runs below need an operator.
cli token create --user admin --name prometheus --role viewer >"$WORK/scrape.token"
API_TOKEN="$(cli token create --user admin --name prometheus-test)"

api() {
  local method=$1 path=$2
  shift 2
  curl -fsS -X "$method" -H "Authorization: Bearer $API_TOKEN" -H 'Content-Type: application/json' \
    "$@" "http://127.0.0.1:$PORT$path"
}

NODE_METRICS_PORT="$(free_port)"
for host in demo-a demo-b; do
  produce=0 listen=""
  # Events every 300 ms, every tenth poisoned: the streams run and dead letters come within
  # seconds instead of the demo's 2 s pace. demo-a also serves its own metrics.
  if [ "$host" = demo-a ]; then produce=300 listen="127.0.0.1:$NODE_METRICS_PORT"; fi
  AM_APP=demo AM_HOST="$host" AM_DEMO_PRODUCE="$produce" AM_METRICS_LISTEN="$listen" \
    "$ROOT/target/debug/demo-node" >"$WORK/$host.log" 2>&1 &
  PIDS+=("$!")
done

two_live_nodes() {
  api GET '/api/v1/nodes?application=demo' | python3 -c 'import json,sys; sys.exit(len(json.load(sys.stdin)) != 2)'
}
wait_for 60 "both demo nodes to be live" two_live_nodes

# A webhook for the demo application, so a notification is really delivered and counted.
python3 - "$WORK/webhook.port" >"$WORK/webhook.log" 2>&1 <<'EOF' &
import http.server, sys
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(204)
        self.end_headers()
server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
EOF
PIDS+=("$!")
wait_for 10 "the webhook receiver" test -s "$WORK/webhook.port"
HOOK="http://127.0.0.1:$(cat "$WORK/webhook.port")/hook"
api GET /api/v1/applications/demo \
  | python3 -c 'import json,sys; a=json.load(sys.stdin); a["webhook_url"]=sys.argv[1]; print(json.dumps(a))' "$HOOK" \
  | api PUT /api/v1/applications/demo --data-binary @- >/dev/null
api POST /api/v1/notifications/test --data '{"application": "demo"}' >/dev/null

# Runs that end within seconds, one per result the dashboard shows: sleep (5 s) succeeds, fail
# fails, the drain ends when idle, a second sleep beside the first is skipped (overlap: skip),
# and the group starts its members one after the other.
log "Run now: demo.sleep.nightly (twice), demo.fail.nightly, demo.echo.drain, group demo.nightly"
for ls in demo.sleep.nightly demo.fail.nightly demo.echo.drain demo.sleep.nightly; do
  api POST "/api/v1/launch-settings/$ls/run" >/dev/null
done
api POST /api/v1/schedule-groups/demo.nightly/run >/dev/null

log "promtool: the live manager's /metrics (HELP on every family, base units, counters _total)"
api GET /metrics >"$WORK/metrics.txt"
lint="$(promtool check metrics <"$WORK/metrics.txt" 2>&1)" || { echo "$lint" >&2; exit 1; }
if [ -n "$lint" ]; then
  echo "promtool check metrics found problems in /metrics:" >&2
  echo "$lint" >&2
  exit 1
fi

log "promtool: a node's own /metrics"
curl -fsS "http://127.0.0.1:$NODE_METRICS_PORT/metrics" >"$WORK/node-metrics.txt"
lint="$(promtool check metrics <"$WORK/node-metrics.txt" 2>&1)" || { echo "$lint" >&2; exit 1; }
if [ -n "$lint" ]; then
  echo "promtool check metrics found problems in the node's /metrics:" >&2
  echo "$lint" >&2
  exit 1
fi
grep -q '^am_node_connected{application="demo",host="demo-a"} 1$' "$WORK/node-metrics.txt" \
  || { echo "the node's /metrics does not say it is connected:" >&2; cat "$WORK/node-metrics.txt" >&2; exit 1; }

PROM_PORT="$(free_port)"
mkdir -p "$WORK/prometheus"
cat >"$WORK/prometheus/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $PROM_DIR/alerts.yml
scrape_configs:
  - job_name: agent-manager
    authorization:
      type: Bearer
      credentials_file: $WORK/scrape.token
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
promtool check config "$WORK/prometheus/prometheus.yml" >/dev/null
log "Prometheus on port $PROM_PORT"
prometheus --config.file="$WORK/prometheus/prometheus.yml" \
  --storage.tsdb.path="$WORK/prometheus/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" \
  >"$WORK/prometheus/prometheus.log" 2>&1 &
PIDS+=("$!")
if ! wait_for 30 "Prometheus to be ready" curl -fsS "http://127.0.0.1:$PROM_PORT/-/ready"; then
  tail -n 30 "$WORK/prometheus/prometheus.log" >&2
  exit 1
fi

log "checking the dashboard's queries and the alerts against the live manager (up to ${CHECK_TIMEOUT}s)"
status=0
python3 "$ROOT/deploy/tests/prometheus_check.py" --prometheus "http://127.0.0.1:$PROM_PORT" \
  --dashboard "$DASHBOARD" --timeout "$CHECK_TIMEOUT" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- manager log ---" >&2
  tail -n 60 "$LOG" >&2
  echo "--- Prometheus log ---" >&2
  tail -n 20 "$WORK/prometheus/prometheus.log" >&2
fi
exit "$status"
