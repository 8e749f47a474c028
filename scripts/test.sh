#!/usr/bin/env bash
# Runs every test: formatting, lints (server and browser builds), unit and integration tests on
# SQLite and PostgreSQL with the real RabbitMQ, the Playwright suite in Chromium and the
# Schemathesis fuzzer against a freshly built manager. Installs and starts whatever is missing
# first; safe to run again.
. "$(dirname "$0")/lib.sh"

START=$(date +%s)
ensure_rust
ensure_nextest
ensure_rabbitmq
ensure_postgres
ensure_chromium_and_npm
ensure_schemathesis
ensure_protocol_checker
ensure_java
cd "$ROOT"

. "$ROOT/scripts/leptos-env.sh"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-auto}"
# Clippy lints inside the builds below, as `cargo clippy` does it: clippy-driver compiles the
# workspace's own crates (server, browser and test builds, examples, benchmarks), so no build of
# every crate a second time in check mode. Dependencies are compiled by rustc as always. Cargo
# keeps these artifacts apart from those of a build without clippy.
RUSTC_WORKSPACE_WRAPPER="$(command -v clippy-driver)"
export RUSTC_WORKSPACE_WRAPPER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

log "formatting"
cargo fmt --all --check
log "the wire protocol's schemas and golden examples, checked by an independent validator"
"$FUZZ_VENV/bin/python" protocol/check.py
log "import cycles between files and between a crate's top-level folders (none allowed)"
python3 scripts/module-cycles.py
python3 scripts/module-cycles.py --folders

RESULTS="$(mktemp -d)"
# The fault tests' RabbitMQ cluster and network namespace are removed by their test; a test
# stopped by its time limit cannot, so whatever is left of them goes here.
# A stage still running in the background when the script stops early is stopped with it.
BUNDLE="" FUZZ=""
trap 'for p in $BUNDLE $FUZZ; do kill "$p" 2>/dev/null || true; done; rm -rf "$RESULTS"; "$ROOT/scripts/cluster.sh" stop >/dev/null 2>&1 || true; for c in 5880:amjava 5980:amconf; do AM_CLUSTER_PORT=${c%%:*} AM_CLUSTER_NAME=${c#*:} "$ROOT/scripts/cluster.sh" stop >/dev/null 2>&1 || true; done; remove_test_namespaces' EXIT

# The stages overlap where they share nothing, since each leaves a core idle much of its time
# (linking, one crate compiling alone, tests waiting on the broker, pages waiting on nodes):
# the browser bundle (target/front) builds beside the test build (target/debug), and the
# fuzzer runs beside the unit and integration tests (its own manager, database, port and
# broker prefix). Their output is printed when they are done.
log "building the browser bundle (with lints), beside the test build"
build_browser_bundle >"$RESULTS/bundle.log" 2>&1 &
BUNDLE=$!

log "building every host crate with its tests"
# One build of every host crate, with their tests: cargo builds a package's programs and
# examples with its tests, so this also builds the manager the browser tests and the fuzzer
# start (target/debug/agent-manager), the demo-node processes of the runtime tests and the
# getting-started guide's node. A separate `cargo build` of one of them would resolve the
# dependencies' features without the test-only ones and compile most of them again.
cargo nextest run "${HOST_FEATURES[@]}" --workspace --no-run
bundle_status=0
wait "$BUNDLE" || bundle_status=$?
log "the browser bundle's build:"
cat "$RESULTS/bundle.log"
if [ "$bundle_status" -ne 0 ]; then
  echo "the browser bundle did not build" >&2
  exit 1
fi

# Before the Rust tests: the runtime suite runs the Java guide's example (its jar).
log "the Java client: build and tests (Maven, offline)"
if ! JAVA_NODE=$(java_client_verify 2>"$RESULTS/java.log"); then
  cat "$RESULTS/java.log"
  echo "the Java client did not build or its tests failed" >&2
  exit 1
fi
grep -a 'Tests run:' "$RESULTS/java.log" | grep -av 'Time elapsed' || true

log "API fuzzing from the OpenAPI document (Schemathesis), in the background"
./scripts/fuzz.sh >"$RESULTS/fuzz.log" 2>&1 &
FUZZ=$!

log "unit and integration tests (SQLite, PostgreSQL, RabbitMQ, demo-node processes)"
# Two tests per core: most of them wait on the broker, on timers and on demo-node processes
# (on 2 cores, ~25 % of the CPU is busy with one per core), and twice as many run in ~60 %
# of the time (docs/benchmarks.md, Waiting). NEXTEST_TEST_THREADS set by the caller wins.
export NEXTEST_TEST_THREADS="${NEXTEST_TEST_THREADS:-$(( $(nproc) * 2 ))}"
nextest_status=0
cargo nextest run "${HOST_FEATURES[@]}" --workspace --no-fail-fast 2>&1 | tee "$RESULTS/nextest.log" || nextest_status=$?

log "documentation examples (doctests; nextest does not run them)"
cargo test "${HOST_FEATURES[@]}" --workspace --doc --quiet
log "benchmarks: built, not run (docs/benchmarks.md runs them), for their lints"
cargo test "${HOST_FEATURES[@]}" --workspace --benches --no-run --quiet

log "the node conformance suite against the Java demo node ($JAVA_NODE)"
java_conformance_status=0
AM_CONFORMANCE_NODE="java -jar $JAVA_NODE" cargo nextest run "${HOST_FEATURES[@]}" \
  -p agent-client --test conformance --no-fail-fast 2>&1 | tee "$RESULTS/conformance-java.log" \
  || java_conformance_status=$?

log "end-to-end tests (Playwright, Chromium)"
e2e_status=0
./scripts/e2e.sh 2>&1 | tee "$RESULTS/e2e.log" || e2e_status=$?
log "operations: the alert rules, the dashboard and /metrics against a real Prometheus"
observe_status=0
./deploy/tests/prometheus.sh 2>&1 | tee "$RESULTS/observe.log" || observe_status=$?
log "operations: the deployment files (systemd units, container, Kubernetes manifests)"
deploy_status=0
./deploy/tests/check.sh 2>&1 | tee "$RESULTS/deploy.log" || deploy_status=$?
fuzz_status=0
wait "$FUZZ" || fuzz_status=$?
log "API fuzzing from the OpenAPI document (Schemathesis): its report"
cat "$RESULTS/fuzz.log"
if [ "$nextest_status" -ne 0 ] || [ "$java_conformance_status" -ne 0 ] || [ "$e2e_status" -ne 0 ] || [ "$fuzz_status" -ne 0 ] || [ "$observe_status" -ne 0 ] || [ "$deploy_status" -ne 0 ]; then
  echo "unit and integration tests exited $nextest_status, the conformance suite against the Java node $java_conformance_status, end-to-end tests $e2e_status, the fuzzer $fuzz_status, the Prometheus checks $observe_status, the deployment checks $deploy_status" >&2
  exit 1
fi

# One plain closing line for whoever reads the end of the log (each runner printed its own above).
unit=$(grep -aoE '[0-9]+ tests run: [0-9]+ passed' "$RESULTS/nextest.log" | tail -1 | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
e2e=$(grep -aoE '[0-9]+ passed \(' "$RESULTS/e2e.log" | tail -1 | grep -oE '[0-9]+')
conformance=$(grep -aoE '[0-9]+ tests run: [0-9]+ passed' "$RESULTS/conformance-java.log" | tail -1 | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
# Maven prints a line per test class (with its time) and one per module: the modules' count.
java=$(grep -a 'Tests run:' "$RESULTS/java.log" | grep -av 'Time elapsed' | grep -oE 'Tests run: [0-9]+' | grep -oE '[0-9]+' | awk '{ n += $1 } END { print n + 0 }')

log "all tests passed in $(( $(date +%s) - START )) s"
echo "${unit:-0} unit/integration, ${java:-0} Java client, ${conformance:-0} conformance (Java node) and ${e2e:-0} end-to-end tests:"
echo "$(( ${unit:-0} + ${java:-0} + ${conformance:-0} + ${e2e:-0} )) passed, 0 failed"
