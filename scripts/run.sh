#!/usr/bin/env bash
# Runs the manager on the embedded default (SQLite under ./data/, the local RabbitMQ) with the
# demo catalog. Installs and starts whatever is missing first; safe to run again.
# Open http://127.0.0.1:3000 — user `admin`, password from AM_ADMIN_PASSWORD (default below).
. "$(dirname "$0")/lib.sh"

ensure_rust
ensure_rabbitmq
cd "$ROOT"

log "building the manager (first build: ~13 minutes on 2 cores)"
cargo leptos build

BIN="$ROOT/target/debug/agent-manager"
export LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
export AM_ADMIN_PASSWORD="${AM_ADMIN_PASSWORD:-admin-demo-password}"

if [ ! -f "$ROOT/data/agent-manager.sqlite" ] && [ -z "${AM_DATABASE_URL:-}" ]; then
  log "first run: creating the database and importing the demo catalog"
  "$BIN" migrate
  "$BIN" catalog import "$ROOT/demo/catalog.json"
fi

log "manager on http://${AM_LISTEN:-127.0.0.1:3000}  (user: admin, password: $AM_ADMIN_PASSWORD)"
exec "$BIN" serve
