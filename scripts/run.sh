#!/usr/bin/env bash
# Runs the manager on the embedded default (SQLite under ./data/, the local RabbitMQ) with the
# demo catalog. Installs and starts whatever is missing first; safe to run again.
# Open http://127.0.0.1:3000 — user `admin`, password from AM_ADMIN_PASSWORD (default below).
. "$(dirname "$0")/lib.sh"

ensure_rust
ensure_rabbitmq
cd "$ROOT"

log "building the manager and the demo node (first build: ~15 minutes on 2 cores)"
cargo leptos build
. "$ROOT/scripts/leptos-env.sh"
cargo build -p agent-client --bin demo-node

BIN="$ROOT/target/debug/agent-manager"
export LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
export AM_ADMIN_PASSWORD="${AM_ADMIN_PASSWORD:-admin-demo-password}"

if [ ! -f "$ROOT/data/agent-manager.sqlite" ] && [ -z "${AM_DATABASE_URL:-}" ]; then
  log "first run: creating the database and importing the demo catalog"
  "$BIN" migrate
  "$BIN" catalog import "$ROOT/demo/catalog.json"
fi

# A demo node (application `demo`) runs the demo agents beside the manager; it stops with it.
AM_APP=demo AM_HOST="${AM_HOST:-localhost}" "$ROOT/target/debug/demo-node" &
NODE=$!
trap 'kill "$NODE" 2>/dev/null || true' EXIT

log "manager on http://${AM_LISTEN:-127.0.0.1:3000}  (user: admin, password: $AM_ADMIN_PASSWORD)"
"$BIN" serve
