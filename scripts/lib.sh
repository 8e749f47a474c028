# Shared by scripts/run.sh and scripts/test.sh: installs and starts what is missing, and does
# nothing for what is already there, so a second run installs nothing.
# shellcheck shell=bash

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WASM_BINDGEN_VERSION="0.2.130"

log() { printf '\033[1;34m==>\033[0m [%ss] %s\n' "$SECONDS" "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

APT_UPDATED=0
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$APT_UPDATED" -eq 0 ]; then
    log "apt-get update"
    as_root apt-get update -qq
    APT_UPDATED=1
  fi
  log "installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

# Every host build of the demo and the tests: without the manager's allocator (the `jemalloc`
# feature of server/Cargo.toml, on in a plain `cargo build`), whose build script is the longest
# unit of a first debug build. Every cargo command of one script passes the same, or cargo
# compiles the manager a second time.
HOST_FEATURES=(--no-default-features)

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  local port=$1 what=$2
  for _ in $(seq 1 60); do
    port_open "$port" && return 0
    sleep 1
  done
  echo "$what did not come up on port $port" >&2
  return 1
}

ensure_rust() {
  if ! command -v cargo >/dev/null; then
    apt_install curl ca-certificates
    log "installing Rust (rustup)"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
  fi
  export PATH="$HOME/.cargo/bin:$PATH"
  apt_install build-essential pkg-config
  # The minimal profile above has neither; the test command needs both.
  if ! command -v clippy-driver >/dev/null || ! cargo fmt --version >/dev/null 2>&1; then
    log "adding clippy and rustfmt"
    rustup component add clippy rustfmt
  fi
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    log "adding the wasm32 target"
    rustup target add wasm32-unknown-unknown
  fi
  if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
    # The one build tool the browser bundle needs (build_browser_bundle below); its version must
    # be the wasm-bindgen crate's in Cargo.lock. --debug: installed in ~80 s on 2 cores, and
    # ~10 s per debug bundle is fast enough.
    log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (~2 minutes once)"
    # Not --locked: one of its locked dependencies is no longer on the registry.
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --debug
  fi
}

ensure_rabbitmq() {
  if ! command -v rabbitmq-server >/dev/null && [ ! -x /usr/sbin/rabbitmq-server ]; then
    apt_install rabbitmq-server
  fi
  if ! port_open 5672; then
    log "starting RabbitMQ"
    as_root rabbitmq-server -detached || true
    wait_port 5672 RabbitMQ
  fi
}

# Sets AM_TEST_PG_URL to a PostgreSQL database tests may create databases from.
ensure_postgres() {
  if [ -z "${AM_TEST_PG_URL:-}" ]; then
    export AM_TEST_PG_URL="postgres://postgres@127.0.0.1:5432/test"
  fi
  if ! port_open 5432; then
    apt_install postgresql
    local ver
    ver="$(ls /etc/postgresql | sort -V | tail -1)"
    log "starting PostgreSQL $ver"
    as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main start 2>/dev/null || as_root pg_ctlcluster "$ver" main start
    wait_port 5432 PostgreSQL
  fi
  if ! psql "$AM_TEST_PG_URL" -qAtc 'select 1' >/dev/null 2>&1; then
    # A fresh Debian cluster asks for a password over TCP: give the test role one and a database.
    log "preparing the PostgreSQL test database"
    as_root su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'postgres'\"" >/dev/null
    as_root su postgres -c "psql -qAtc \"SELECT 1 FROM pg_database WHERE datname='test'\" | grep -q 1 || createdb test"
    export AM_TEST_PG_URL="postgres://postgres:postgres@127.0.0.1:5432/test"
  fi
}

ensure_chromium_and_npm() {
  [ -x /usr/bin/chromium ] || apt_install chromium
  # scripts/e2e.sh picks a free port with python3 and waits for the server with curl.
  command -v python3 >/dev/null || apt_install python3
  command -v curl >/dev/null || apt_install curl
  command -v npm >/dev/null || apt_install nodejs npm
  if [ ! -d "$ROOT/end2end/node_modules/@playwright/test" ] \
     || [ ! -d "$ROOT/end2end/node_modules/axe-core" ] \
     || [ "$ROOT/end2end/package-lock.json" -nt "$ROOT/end2end/node_modules/.package-lock.json" ]; then
    log "installing end-to-end test packages"
    (cd "$ROOT/end2end" && npm ci --no-audit --no-fund)
  fi
}

ensure_nextest() {
  if ! cargo nextest --version >/dev/null 2>&1; then
    log "installing cargo-nextest"
    cargo install cargo-nextest --locked
  fi
}

# Schemathesis (the OpenAPI fuzzer of scripts/fuzz.sh) in a virtual environment of its own,
# at the version scripts/fuzz/requirements.txt pins.
FUZZ_VENV="$ROOT/target/fuzz-venv"
# The independent validator of the protocol's schemas (protocol/check.py), in the fuzzer's
# virtual environment (Schemathesis itself validates with another library).
ensure_protocol_checker() {
  ensure_schemathesis
  if ! "$FUZZ_VENV/bin/python" -c 'import jsonschema' 2>/dev/null; then
    log "installing the protocol checker's jsonschema"
    "$FUZZ_VENV/bin/pip" install --quiet --disable-pip-version-check -r "$ROOT/protocol/requirements.txt"
  fi
}

# The Java client (client-java/): a JDK, Maven and the libraries and plugins its build uses, all
# from Debian's packaged Maven repository (/usr/share/maven-repo), so it builds offline.
JAVA_PACKAGES=(default-jdk-headless maven maven-debian-helper librabbitmq-client-java
  libjackson2-databind-java libslf4j-java junit5 libsurefire-java libmaven-shade-plugin-java
  libmaven-clean-plugin-java libmaven-resources-plugin-java libmaven-compiler-plugin-java
  libmaven-jar-plugin-java libplexus-utils2-java)
ensure_java() {
  apt_install "${JAVA_PACKAGES[@]}"
}

# Builds the Java client, its demo node and the getting-started example and runs their tests
# (the local RabbitMQ), offline; Maven's output goes to stderr. Prints the demo node's jar.
java_client_verify() {
  (cd "$ROOT/client-java" && mvn -B -o -s /etc/maven/settings-debian.xml verify) >&2
  java_demo_node_jar
}

java_demo_node_jar() {
  local jar
  jar=$(ls "$ROOT"/client-java/demo-node/target/agent-manager-demo-node-*.jar 2>/dev/null | grep -v '/original-' | head -1)
  [ -n "$jar" ] || { echo "the Java demo node's jar was not built" >&2; return 1; }
  echo "$jar"
}

ensure_schemathesis() {
  command -v python3 >/dev/null || apt_install python3
  python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
  local want
  want="$(sed -n 's/^schemathesis==//p' "$ROOT/scripts/fuzz/requirements.txt")"
  if ! "$FUZZ_VENV/bin/st" --version 2>/dev/null | grep -q "version $want\$"; then
    log "installing Schemathesis $want"
    rm -rf "$FUZZ_VENV"
    python3 -m venv "$FUZZ_VENV"
    "$FUZZ_VENV/bin/pip" install --quiet --disable-pip-version-check -r "$ROOT/scripts/fuzz/requirements.txt"
  fi
}

# The network namespaces the fault test makes for a node (am-<id>, server/tests/runtime/netns.rs)
# that a test stopped by force left behind; with them go their veth pairs.
remove_test_namespaces() {
  command -v ip >/dev/null || return 0
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '/^am-[0-9a-f]{8}( |$)/ { print $1 }'); do
    as_root ip netns del "$ns" 2>/dev/null || true
  done
}

# The environment of a manager a test run starts for itself (NAME: e2e, fuzz): a free port, a
# fresh SQLite file in a directory of its own, and broker names of its own that expire, so a run
# leaves nothing on the broker. Sets BIN, WORK, PORT and LOG for the caller.
throwaway_manager_env() {
  local name=$1
  BIN="$ROOT/target/debug/agent-manager"
  WORK="$(mktemp -d)"
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  LOG="$WORK/manager.log"
  export AM_DATABASE_URL="sqlite://$WORK/$name.sqlite?mode=rwc"
  export AM_LISTEN="127.0.0.1:$PORT"
  export AM_ADMIN_PASSWORD="$name-admin-password"
  export LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
  export AM_PREFIX="$name-$PORT-$$" AM_QUEUE_EXPIRY=120s
}

# Before a test manager on port $2 (binary $1) stops: empties its catalog and waits until its
# reconciler has applied that, so the data exchanges it declared on the shared broker go too
# (their names are the data queues' addresses, not under the test's prefix; the queues expire
# by themselves). Best effort: a manager that cannot do it leaves them.
leave_the_broker_clean() {
  local bin=$1 port=$2 token
  echo '{"version": 1}' | "$bin" catalog import - >/dev/null 2>&1 || return 0
  token="$("$bin" token create --user admin --name broker-cleanup 2>/dev/null)" || return 0
  for _ in $(seq 1 40); do
    curl -fsS -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/broker" 2>/dev/null \
      | grep -q '"in_sync":true' && return 0
    sleep 0.5
  done
}

# Waits up to 30 s for the manager on port $1 to answer /healthz; else prints its log ($2) and
# fails, so a manager that did not start is said as such (not as every test failing).
wait_healthy() {
  local port=$1 log=$2
  for _ in $(seq 1 60); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "the manager did not start; its log:" >&2
  cat "$log" >&2
  return 1
}

# Builds the browser's half of the UI into target/site/pkg, as `cargo leptos build
# --frontend-only` lays it out (the names leptos's hydration script asks for), with only cargo
# and wasm-bindgen: the app crate for wasm32 with `hydrate`, its JS glue, and the stylesheet.
# Expects scripts/leptos-env.sh sourced (the same RUSTFLAGS and LEPTOS_* as every other build,
# so artifacts are shared). `cargo leptos watch` still works for whoever installs cargo-leptos.
build_browser_bundle() {
  local pkg="$ROOT/target/site/pkg" wasm="$ROOT/target/front/wasm32-unknown-unknown/debug/app.wasm"
  cargo build --package app --lib --target wasm32-unknown-unknown --no-default-features \
    --features hydrate --target-dir "$ROOT/target/front"
  mkdir -p "$pkg"
  wasm-bindgen --target web --no-typescript --out-name agent-manager --out-dir "$pkg" "$wasm"
  mv -f "$pkg/agent-manager_bg.wasm" "$pkg/agent-manager.wasm"
  cp "$ROOT/style/main.css" "$pkg/agent-manager.css"
}

# Deployment files' checks

# The tools of deploy/tests/check.sh: podman with runc (crun refuses the hybrid cgroup layout
# of some machines, this one included), systemd-nspawn to boot the units under a real systemd,
# mmdebstrap for the root file system it boots, and the validators pinned in
# deploy/tests/requirements.txt in a virtual environment of their own.
DEPLOY_VENV="$ROOT/target/deploy-venv"
DEPLOY_CACHE="$ROOT/target/deploy-cache"
ensure_deploy_tools() {
  apt_install podman runc systemd-container mmdebstrap shellcheck curl python3
  python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
  local req="$ROOT/deploy/tests/requirements.txt"
  if ! cmp -s "$req" "$DEPLOY_VENV/requirements.txt"; then
    log "installing the deployment validators"
    rm -rf "$DEPLOY_VENV"
    python3 -m venv "$DEPLOY_VENV"
    "$DEPLOY_VENV/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    cp "$req" "$DEPLOY_VENV/requirements.txt"
  fi
}

# The Debian root file system the systemd units boot in (systemd-nspawn), made once and kept
# under target/: about a minute to make, 200 MB. It is only ever booted read-only with a
# throw-away overlay, so it stays as made.
DEPLOY_ROOTFS_PACKAGES="systemd,systemd-sysv,libnss-systemd"
ensure_deploy_rootfs() {
  local dir="$DEPLOY_CACHE/rootfs-bookworm" stamp
  stamp="bookworm minbase $DEPLOY_ROOTFS_PACKAGES"
  if [ "$(cat "$dir.stamp" 2>/dev/null)" != "$stamp" ]; then
    log "making the root file system the systemd units boot in (~1 minute, once)"
    rm -rf "$dir" "$dir.new" "$dir.stamp"
    mkdir -p "$DEPLOY_CACHE"
    mmdebstrap --quiet --variant=minbase --include="$DEPLOY_ROOTFS_PACKAGES" bookworm "$dir.new" \
      >&2
    mv "$dir.new" "$dir"
    echo "$stamp" > "$dir.stamp"
  fi
  echo "$dir"
}

# podman as a container without CAP_SYS_RESOURCE and with hybrid cgroups allows: runc (crun:
# "cgroups in hybrid mode not supported"), cgroupfs, the vfs driver (no overlay mounts needed),
# and every piece of state (images, containers, run files, events) under DIR, so removing DIR
# leaves nothing behind. `deploy_podman DIR ARGS...`
deploy_podman() {
  local dir=$1
  shift
  mkdir -p "$dir/tmp"
  podman --root "$dir/storage" --runroot "$dir/run" --tmpdir "$dir/tmp" --storage-driver vfs \
    --cgroup-manager cgroupfs --events-backend file --runtime runc "$@"
}

# Waits up to $2 seconds (default 30) for $1 to answer 2xx.
wait_url() {
  local url=$1 deadline=$((SECONDS + ${2:-30}))
  while [ "$SECONDS" -lt "$deadline" ]; do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 0.3
  done
  echo "no answer from $url within ${2:-30} s" >&2
  return 1
}
