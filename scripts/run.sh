#!/usr/bin/env bash
# Runs the manager on the embedded default (SQLite under ./data/, the local RabbitMQ) with the
# demo catalog. Installs and starts whatever is missing first; safe to run again.
# Open http://127.0.0.1:3000 — user `admin`, password from AM_ADMIN_PASSWORD (default below).
. "$(dirname "$0")/lib.sh"

ensure_rust
ensure_rabbitmq
cd "$ROOT"

. "$ROOT/scripts/leptos-env.sh"
log "building the browser bundle"
build_browser_bundle
# One build of both programs: their dependencies' features are resolved once, so no crate is
# compiled twice.
log "building the manager and the demo node"
cargo build "${HOST_FEATURES[@]}" --package server --bin agent-manager --package agent-client --features agent-client/demo --bin demo-node

BIN="$ROOT/target/debug/agent-manager"
export LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
export AM_ADMIN_PASSWORD="${AM_ADMIN_PASSWORD:-admin-demo-password}"

if [ ! -f "$ROOT/data/agent-manager.sqlite" ] && [ -z "${AM_DATABASE_URL:-}" ]; then
  log "first run: creating the database and importing the demo catalog"
  "$BIN" migrate
  "$BIN" catalog import "$ROOT/demo/catalog.json"
fi

# Two demo nodes (application `demo`, hosts `demo-a` and `demo-b`: the demo catalog's pool) run
# the demo agents beside the manager and stop with it. demo-a also publishes a demo event every
# AM_DEMO_PRODUCE ms (default 2000; every tenth says `poison`) to the demo data queues.
mkdir -p "$ROOT/data"
NODES=()
for host in demo-a demo-b; do
  produce=0
  if [ "$host" = demo-a ]; then produce="${AM_DEMO_PRODUCE:-2000}"; fi
  AM_APP=demo AM_HOST="$host" AM_DEMO_PRODUCE="$produce" \
    "$ROOT/target/debug/demo-node" >"$ROOT/data/$host.log" 2>&1 &
  NODES+=("$!")
done
trap 'kill "${NODES[@]}" 2>/dev/null || true' EXIT

log "demo nodes demo-a and demo-b started; their logs: data/demo-a.log, data/demo-b.log"
log "within a minute: Launch settings (echo on both nodes, flaky and poison failing), Failure logs,"
log "Dead letters (the poison events), Schedule groups (demo.nightly: sleep then drain echo, every minute; demo.failing: every two minutes, until its breaker disables it)"
log "(the demo catalog is imported on the first run only; to start over, stop and remove data/)"
log "manager on http://${AM_LISTEN:-127.0.0.1:3000}  (user: admin, password: $AM_ADMIN_PASSWORD)"
"$BIN" serve
