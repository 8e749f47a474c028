#!/usr/bin/env bash
# Starts the built manager on a fresh SQLite database and a free port, runs the Playwright
# suite against it (arguments go to `playwright test`, e.g. a file name), and stops it.
# Used by scripts/test.sh after the browser bundle (`build_browser_bundle`) is built.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

throwaway_manager_env e2e
# A real node (application e2e-demo, host e2e-node-a) for the tests of runs and nodes.
export E2E_NODE_APP=e2e-demo E2E_NODE_HOST=e2e-node-a
if [ ! -x "$ROOT/target/debug/demo-node" ]; then
  . "$ROOT/scripts/leptos-env.sh"
  cargo build "${HOST_FEATURES[@]}" -p agent-client --features demo --bin demo-node
fi

"$BIN" serve >"$LOG" 2>&1 &
PID=$!
NODE=""
cleanup() {
  [ -n "$NODE" ] && kill "$NODE" 2>/dev/null || true
  leave_the_broker_clean "$BIN" "$PORT"
  kill "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_healthy "$PORT" "$LOG"

AM_APP="$E2E_NODE_APP" AM_HOST="$E2E_NODE_HOST" "$ROOT/target/debug/demo-node" >"$WORK/node.log" 2>&1 &
NODE=$!

# After the first start, so the first admin comes from AM_ADMIN_PASSWORD as on a real install.
AM_NEW_USER_PASSWORD="e2e-viewer-password" "$BIN" user create viewer --role viewer >/dev/null

export BASE_URL="http://127.0.0.1:$PORT"
export E2E_ADMIN_PASSWORD="$AM_ADMIN_PASSWORD" E2E_VIEWER_PASSWORD="e2e-viewer-password"
status=0
(cd end2end && npx playwright test "$@") || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- manager log ---" >&2
  tail -n 100 "$LOG" >&2
  echo "--- node log ---" >&2
  tail -n 40 "$WORK/node.log" >&2
fi
exit "$status"
